package core

import (
	"encoding/json"
	"slices"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// Modern is the protocol revision served statelessly.
const Modern = "2026-07-28"

// LegacyVersions are the revisions served after an initialize handshake,
// newest first.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// SupportedVersions lists every revision mcpx serves, newest first, as
// server/discover and UnsupportedProtocolVersion errors advertise them.
func SupportedVersions() []string { return append([]string{Modern}, legacyVersions...) }

// IsLegacyVersion reports whether v is a revision served after initialize.
func IsLegacyVersion(v string) bool { return slices.Contains(legacyVersions, v) }

// ClientName is the name in a modern request's _meta clientInfo, from
// its params; "" without one.
func ClientName(params json.RawMessage) string {
	if len(params) == 0 || params[0] != '{' {
		return ""
	}
	meta, _ := rawjson.Get(params, "_meta")
	if len(meta) == 0 || meta[0] != '{' {
		return ""
	}
	info, _ := rawjson.Get(meta, metaClientInfo)
	return clientInfoName(info)
}

// clientInfoName is the name in a clientInfo object; "" without one.
func clientInfoName(info json.RawMessage) string {
	if len(info) == 0 || info[0] != '{' {
		return ""
	}
	v, _ := rawjson.Get(info, "name")
	name, _ := rawjson.String(v)
	return name
}

// ClientName is the client's name in ClientInfo; "" without one.
func (m *Meta) ClientName() string { return clientInfoName(m.ClientInfo) }

// Keys of a modern request's and result's _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Meta is what a modern request says about itself in params._meta.
type Meta struct {
	// Version is io.modelcontextprotocol/protocolVersion.
	Version string
	// Capabilities is the client's io.modelcontextprotocol/clientCapabilities.
	Capabilities Capabilities
	// LogLevel is io.modelcontextprotocol/logLevel: "" means the client
	// wants no notifications/message for this request.
	LogLevel string
	// ProgressToken is the request's progressToken, if any.
	ProgressToken json.RawMessage
	// ClientInfo is io.modelcontextprotocol/clientInfo as sent (an
	// object, or nil), for the audit trail's client.
	ClientInfo json.RawMessage
}

// Capabilities are the client capabilities that decide what mcpx may ask
// of the client in an input_required result.
type Capabilities struct {
	Sampling, Elicitation, ElicitationURL, Roots bool
}

// HasModernMeta reports whether params carry a modern _meta: a request
// with io.modelcontextprotocol/protocolVersion in it selects the modern
// era, whatever the version says (an unknown one is then refused with
// UnsupportedProtocolVersion rather than served as legacy).
func HasModernMeta(params json.RawMessage) bool {
	if len(params) == 0 || params[0] != '{' {
		return false
	}
	meta, _ := rawjson.Get(params, "_meta")
	if len(meta) == 0 || meta[0] != '{' {
		return false
	}
	v, _ := rawjson.Get(meta, metaProtocolVersion)
	return v != nil
}

// MetaVersionKey is the _meta member a modern request names its
// protocol version in.
const MetaVersionKey = metaProtocolVersion

// MetaVersion is the protocol version params' _meta names, "" when it
// names none (or not as a string).
func MetaVersion(params json.RawMessage) string {
	meta, _ := rawjson.Get(params, "_meta")
	if meta == nil {
		return ""
	}
	v, _ := rawjson.Get(meta, metaProtocolVersion)
	s, _ := rawjson.String(v)
	return s
}

// ParseMeta reads and checks a modern request's _meta: the version must
// be present and served, the client capabilities present (an object),
// the client info, when present, an object.
func ParseMeta(params json.RawMessage) (Meta, *Error) {
	// rawjson, not encoding/json: this runs on every modern request, and
	// finds what it needs in a scan or two without decoding the rest.
	var m Meta
	var raw json.RawMessage
	if len(params) > 0 && string(params) != "null" {
		var err error
		if params[0] != '{' {
			return m, jsonrpc.Errorf(CodeInvalidParams, "invalid params: must be an object")
		}
		if raw, err = rawjson.Get(params, "_meta"); err != nil {
			return m, jsonrpc.Errorf(CodeInvalidParams, "invalid params: %v", err)
		}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return m, jsonrpc.Errorf(CodeInvalidParams, "missing _meta: a request of revision %s carries %s and %s in params._meta", Modern, metaProtocolVersion, metaClientCapabilities)
	}
	if raw[0] != '{' {
		return m, jsonrpc.Errorf(CodeInvalidParams, "invalid _meta: must be an object")
	}
	var version, caps, info, level []byte
	rawjson.Scan(raw, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is(metaProtocolVersion):
			version = v
		case k.Is(metaClientCapabilities):
			caps = v
		case k.Is(metaClientInfo):
			info = v
		case k.Is(metaLogLevel):
			level = v
		case k.Is("progressToken"):
			m.ProgressToken = v
		}
		return true
	})
	var ok bool
	if string(version) == `"`+Modern+`"` {
		m.Version = Modern // as nearly every request has it: no copy
	} else if m.Version, ok = rawjson.String(version); !ok || m.Version == "" {
		return m, jsonrpc.Errorf(CodeInvalidParams, "missing or invalid _meta field %q: must be a version string", metaProtocolVersion)
	}
	if m.Version != Modern {
		return m, unsupportedVersion(m.Version)
	}
	if len(caps) == 0 || caps[0] != '{' {
		return m, jsonrpc.Errorf(CodeInvalidParams, "missing or invalid _meta field %q: must be an object", metaClientCapabilities)
	}
	present := func(r []byte) bool { return len(r) > 0 && string(r) != "null" }
	err := rawjson.Scan(caps, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is("sampling"):
			m.Capabilities.Sampling = present(v)
		case k.Is("roots"):
			m.Capabilities.Roots = present(v)
		case k.Is("elicitation"):
			m.Capabilities.Elicitation = present(v)
			if len(v) > 0 && v[0] == '{' {
				url, _ := rawjson.Get(v, "url")
				m.Capabilities.ElicitationURL = present(url)
			}
		}
		return true
	})
	if err != nil {
		return m, jsonrpc.Errorf(CodeInvalidParams, "invalid _meta field %q: %v", metaClientCapabilities, err)
	}
	if info != nil && info[0] != '{' {
		return m, jsonrpc.Errorf(CodeInvalidParams, "invalid _meta field %q: must be an object", metaClientInfo)
	}
	m.ClientInfo = info
	if level != nil {
		if m.LogLevel, ok = rawjson.String(level); !ok || logLevelRank(m.LogLevel) < 0 {
			return m, jsonrpc.Errorf(CodeInvalidParams, "invalid _meta field %q: want one of debug, info, notice, warning, error, critical, alert, emergency", metaLogLevel)
		}
	}
	return m, nil
}

// unsupportedVersion is the UnsupportedProtocolVersion error for v.
func unsupportedVersion(v string) *Error {
	data, _ := json.Marshal(map[string]any{"supported": SupportedVersions(), "requested": v})
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: "unsupported protocol version " + quote(v), Data: data}
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logLevelRank is the index of a syslog level name, or -1.
func logLevelRank(level string) int { return slices.Index(logLevels, level) }

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
