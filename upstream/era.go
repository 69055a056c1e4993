package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream/remote"
)

// Era is the protocol era a server speaks: [EraModern] (2026-07-28 and
// later: no initialize, every request carries its version and the
// client's capabilities in _meta) or [EraLegacy] (initialize, then a
// session). "" is not known yet.
type Era string

const (
	EraModern Era = "modern"
	EraLegacy Era = "legacy"
)

// modernVersion is the protocol version mcpx asks a modern server for.
const modernVersion = remote.ModernVersion

// Keys of a modern request's _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// Error codes of revision 2026-07-28.
const (
	// CodeUnsupportedProtocolVersion answers a request whose version the
	// server does not speak; its data lists the ones it does.
	CodeUnsupportedProtocolVersion = -32022
	// CodeHeaderMismatch answers an HTTP request whose Mcp-* headers
	// disagree with its body.
	CodeHeaderMismatch = -32020
)

// EraOf is the era of a protocol version as initialize or server/discover
// agreed on it.
func EraOf(version string) Era {
	switch {
	case version == "":
		return ""
	case version >= modernVersion:
		return EraModern
	default:
		return EraLegacy
	}
}

// Era is the era the server spoke when it was remembered.
func (r *Remembered) Era() Era { return EraOf(r.ProtocolVersion) }

// probeTimeout bounds server/discover to a child: a legacy server may
// leave a request before initialize unanswered, and the rest of the
// server's timeout is then initialize's.
func probeTimeout(timeout time.Duration) time.Duration { return min(timeout/3, 3*time.Second) }

// handshake makes the connection speak the era the server's protocol
// key asks for. Under auto (the default), server/discover first, falling
// back to initialize when the server answers it with an error that is
// not modern (or, over stdio, not in time), or lists a legacy version
// too (errBothEras): a server that speaks both eras is legacy, since
// only that era carries the requests its tools send the client in the
// middle of a call (sampling, elicitation, roots), which a tool written
// for the legacy era sends whatever the era of the session (the Go SDK
// refuses them in a modern one); its modern clients are served in the
// modern era over a second connection (otherera.go). initialize comes
// first when the server was legacy the last time (known), so that a start does not repeat the
// probe, trying server/discover after all when initialize fails with the
// server's error (it changed era since). legacy only initializes; modern
// only discovers, and speaks the modern era to a server that speaks both.
func (cn *conn) handshake(ctx context.Context, known Era) error {
	switch {
	case cn.c.cfg.Transport == config.TransportSSE || cn.c.cfg.Protocol == config.ProtocolLegacy:
		// The SSE transport ended with the legacy era: nothing to probe.
		return cn.initialize(ctx)
	case cn.c.cfg.Protocol == config.ProtocolModern:
		if err := cn.discover(ctx); err != nil {
			return fmt.Errorf("protocol modern: %w", err)
		}
		return nil
	}
	if known == EraLegacy {
		err := cn.initialize(ctx)
		var rpc *RPCError
		if err == nil || !errors.As(err, &rpc) {
			return err
		}
		cn.c.log.Debug("initialize refused: probing for a modern server", "err", cn.c.opts.Redact(err.Error()))
		if derr := cn.discover(ctx); derr == nil {
			return nil
		}
		return err
	}
	err := cn.discover(ctx)
	if errors.Is(err, errBothEras) {
		cn.c.bothEras.Store(true)
	}
	if errors.Is(err, errBothEras) && cn.proc != nil {
		// Some servers (mcpx among them) still take initialize after
		// server/discover: ask, briefly, before paying for a new child,
		// which for an mcpx behind mcpx would start all its own servers
		// twice.
		ictx, cancel := context.WithTimeout(ctx, probeTimeout(cn.c.timeout()))
		ierr := cn.initialize(ictx)
		cancel()
		if ierr == nil {
			return nil
		}
		cn.c.log.Debug("initialize after server/discover refused: starting the server again", "err", cn.c.opts.Redact(ierr.Error()))
		return err // connect starts the child again
	}
	if err == nil || !cn.fallsBack(ctx, err) {
		return err
	}
	cn.c.log.Debug("server/discover failed: falling back to initialize", "err", cn.c.opts.Redact(err.Error()))
	return cn.initialize(ctx)
}

// fallsBack reports whether a failed server/discover means a legacy
// server: its error, a non-modern HTTP refusal (a 400 without a JSON-RPC
// answer, a 404, a 405, ...), or, from a child, no answer in time. A
// server that is gone, a login that is needed and a caller who gave up
// are errors of their own.
func (cn *conn) fallsBack(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if _, login := needsLogin(err); login {
		return false
	}
	var rpc *RPCError
	var status *remote.StatusError
	switch {
	case errors.As(err, &rpc), errors.Is(err, errNotModern), errors.Is(err, errBothEras):
		return true
	case errors.As(err, &status):
		return status.Status >= 400 && status.Status < 500 && status.Status != 401 && status.Status != 403
	case cn.proc != nil:
		return errors.Is(err, context.DeadlineExceeded)
	}
	return false
}

// errNotModern is a server/discover result that names no modern version.
var errNotModern = errors.New("the server supports no modern protocol version")

// errBothEras is a server/discover result that names a legacy version
// too, under protocol auto: the legacy era loses nothing (see handshake).
var errBothEras = errors.New("the server speaks the legacy era too")

// discover is the modern handshake: server/discover with mcpx's _meta.
// A server that refuses the version but lists one mcpx speaks is asked
// again once.
func (cn *conn) discover(ctx context.Context) error {
	meta, err := cn.metaFields()
	if err != nil {
		return err
	}
	pctx := ctx
	if cn.proc != nil {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, probeTimeout(cn.c.timeout()))
		defer cancel()
	}
	setVersion := func(v string) {
		if t, ok := cn.tr.(interface{ SetProtocolVersion(string) }); ok {
			t.SetProtocolVersion(v)
		}
	}
	setVersion(modernVersion)
	var raw json.RawMessage
	for attempt := 0; ; attempt++ {
		raw, err = cn.request(pctx, "server/discover", spliceMeta(json.RawMessage(`{}`), meta))
		var rpc *RPCError
		if err == nil || attempt > 0 || !errors.As(err, &rpc) || rpc.Code != CodeUnsupportedProtocolVersion || !supports(rpc.Data) {
			break
		}
	}
	if err != nil {
		setVersion("")
		return err
	}
	var res struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      mcp.ServerCapabilities     `json:"capabilities"`
		ServerInfo        *mcp.Implementation        `json:"serverInfo"`
		Instructions      json.RawMessage            `json:"instructions"` // see instructionsOf
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		setVersion("")
		return fmt.Errorf("unreadable server/discover result: %w", err)
	}
	if !slices.Contains(res.SupportedVersions, modernVersion) {
		setVersion("")
		return fmt.Errorf("%w (it lists %q)", errNotModern, res.SupportedVersions)
	}
	if cn.c.cfg.Protocol != config.ProtocolModern && slices.ContainsFunc(res.SupportedVersions, isLegacyVersion) {
		setVersion("")
		return fmt.Errorf("%w (it lists %q)", errBothEras, res.SupportedVersions)
	}
	if res.ServerInfo == nil {
		res.ServerInfo = &mcp.Implementation{}
		_ = json.Unmarshal(res.Meta[metaServerInfo], res.ServerInfo)
	}
	cn.serverInfo = *res.ServerInfo
	cn.protocol = modernVersion
	cn.caps = res.Capabilities
	cn.setInstructions(res.Instructions)
	cn.meta.Store(&meta)
	return nil
}

// modern reports whether the connection speaks the modern era.
func (cn *conn) modern() bool { return cn.meta.Load() != nil }

// isLegacyVersion reports whether v is a version of the legacy era that
// mcpx speaks.
func isLegacyVersion(v string) bool { return v < modernVersion && mcp.IsValidProtocolVersion(v) }

// supports reports whether an UnsupportedProtocolVersion error's data
// lists the version mcpx speaks.
func supports(data json.RawMessage) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	return json.Unmarshal(data, &d) == nil && slices.Contains(d.Supported, modernVersion)
}

// metaFields are the members mcpx puts first in every modern request's
// _meta, encoded once per connection (and again when the log level
// changes): the version, the capabilities it relays, who it is, and the
// log level a client of mcpx asked for, if any.
func (cn *conn) metaFields() ([]byte, error) {
	caps, err := json.Marshal(clientCapabilities(cn.c.opts.OnServerRequest != nil))
	if err != nil {
		return nil, err
	}
	info, err := json.Marshal(mcp.Implementation{Name: "mcpx", Version: cn.c.opts.Version})
	if err != nil {
		return nil, err
	}
	b := rawjson.AppendString(nil, metaProtocolVersion)
	b = append(b, ':')
	b = rawjson.AppendString(b, modernVersion)
	b = append(b, ',')
	b = rawjson.AppendString(b, metaClientCapabilities)
	b = append(b, ':')
	b = append(b, caps...)
	b = append(b, ',')
	b = rawjson.AppendString(b, metaClientInfo)
	b = append(b, ':')
	b = append(b, info...)
	cn.c.mu.Lock()
	level := cn.c.logLevel
	cn.c.mu.Unlock()
	if level != "" {
		b = append(b, ',')
		b = rawjson.AppendString(b, metaLogLevel)
		b = append(b, ':')
		b = rawjson.AppendString(b, level)
	}
	return b, nil
}

// metaPrefix is how params start when their first member is _meta, as
// mcpx writes them (see routeProgress): the fields go right after it.
var metaPrefix = []byte(`{"_meta":{`)

// spliceMeta returns params with fields (metaFields) put first in its
// _meta, every other byte as it was. The common shapes cost one copy:
// params without _meta, or with the _meta mcpx itself put first; any
// other _meta is found with one scan. A _meta that already names a
// protocol version (a modern caller's, passed through) is left alone, as
// are params that are not an object.
func spliceMeta(params json.RawMessage, fields []byte) json.RawMessage {
	p := bytes.TrimLeft(params, " \t\r\n")
	if len(p) == 0 || string(p) == "null" {
		p = []byte(`{}`)
	}
	if p[0] != '{' {
		return params
	}
	if bytes.HasPrefix(p, metaPrefix) && !bytes.Contains(p, []byte(metaProtocolVersion)) {
		return insertAt(p, len(metaPrefix), fields, p[len(metaPrefix):])
	}
	if !bytes.Contains(p, []byte(`"_meta"`)) {
		out := make([]byte, 0, len(p)+len(fields)+12)
		out = append(out, `{"_meta":{`...)
		out = append(out, fields...)
		out = append(out, '}')
		if rest := bytes.TrimLeft(p[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, p[1:]...)
	}
	meta, err := rawjson.Get(p, "_meta")
	switch {
	case err != nil:
		return params
	case meta == nil: // "_meta" is deeper down (in the arguments)
		meta = append(append([]byte{'{'}, fields...), '}')
	case meta[0] != '{' || bytes.Contains(meta, []byte(metaProtocolVersion)):
		return params
	default:
		meta = insertAt(meta, 1, fields, meta[1:])
	}
	out, err := rawjson.Set(p, "_meta", meta)
	if err != nil {
		return params
	}
	return out
}

// insertAt returns b[:at] + fields + (a comma when rest has members) +
// rest, in a new slice.
func insertAt(b []byte, at int, fields, rest []byte) []byte {
	out := make([]byte, 0, len(b)+len(fields)+1)
	out = append(out, b[:at]...)
	out = append(out, fields...)
	if r := bytes.TrimLeft(rest, " \t\r\n"); len(r) > 0 && r[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// checkTools returns the tools a modern server listed without those
// whose x-mcp-header annotations are invalid, which a client must not
// offer (each is logged), and keeps the headers the others ask for. A
// legacy server's tools are returned as they are.
func (cn *conn) checkTools(tools []json.RawMessage) []json.RawMessage {
	if !cn.modern() {
		return tools
	}
	headers := map[string][]remote.ParamHeader{}
	kept := tools[:0:0]
	for _, t := range tools {
		var tool struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(t, &tool) != nil {
			kept = append(kept, t)
			continue
		}
		ph, err := remote.ToolParamHeaders(tool.InputSchema)
		if err != nil {
			cn.c.log.Warn("tool left out", "tool", tool.Name, "err", err)
			continue
		}
		if len(ph) > 0 {
			headers[tool.Name] = ph
		}
		kept = append(kept, t)
	}
	cn.paramHeaders.Store(&headers)
	return kept
}

// toolParamHeaders is the arguments of tool that go in headers too.
func (cn *conn) toolParamHeaders(tool string) []remote.ParamHeader {
	if m := cn.paramHeaders.Load(); m != nil {
		return (*m)[tool]
	}
	return nil
}

// eraFailed ends the connection when a request failed because the server
// no longer speaks the era it was connected in: the server refused the
// protocol version (-32022), or, connected as modern, answered an HTTP
// 400 that is no JSON-RPC answer, as a legacy server does to a request
// without a session. The era is forgotten, so the next connect probes
// again, server/discover first.
func (c *Client) eraFailed(cn *conn, err error) {
	var rpc *RPCError
	var status *remote.StatusError
	switch {
	case errors.As(err, &rpc) && rpc.Code == CodeUnsupportedProtocolVersion:
	case cn.modern() && errors.As(err, &status) && status.Status == 400:
	default:
		return
	}
	c.mu.Lock()
	c.era = ""
	c.mu.Unlock()
	c.log.Info("the server no longer speaks protocol "+cn.protocol+": connecting again", "err", c.opts.Redact(err.Error()))
	cn.markLost(fmt.Errorf("protocol %s refused: %w", cn.protocol, err))
}
