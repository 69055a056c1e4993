package remote

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpx/mcpx/rawjson"
)

// Headers of revision 2026-07-28 (SEP-2243): every POST names its method,
// and tools/call, resources/read and prompts/get the thing they act on,
// so that a load balancer or gateway can route without reading the body.
// A tool's schema may ask for some of its arguments as headers too.
const (
	headerMethod      = "Mcp-Method"
	headerName        = "Mcp-Name"
	headerParamPrefix = "Mcp-Param-"
)

// ModernVersion is the first protocol revision without initialize: its
// requests carry the Mcp-Method and Mcp-Name headers.
const ModernVersion = "2026-07-28"

// ParamHeader is one argument a tool's inputSchema marks with
// x-mcp-header: the property's path from the arguments object, and the
// header's name after the Mcp-Param- prefix.
type ParamHeader struct {
	Path []string
	Name string
}

// ErrInvalidParamHeader is wrapped by ToolParamHeaders when a tool's
// x-mcp-header annotations break the rules: such a tool must not be
// offered, nor called.
var ErrInvalidParamHeader = errors.New("invalid x-mcp-header")

// schemaProperty is what x-mcp-header processing reads of a schema.
type schemaProperty struct {
	Type       json.RawMessage           `json:"type"`
	Header     json.RawMessage           `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
}

// ToolParamHeaders returns the headers a tool's inputSchema asks for, or
// an error wrapping ErrInvalidParamHeader naming the property whose
// annotation is invalid: not a non-empty HTTP token, on a type other than
// string, integer or boolean, or the same name twice (case-insensitive).
// A schema without x-mcp-header (nearly all) costs one substring scan.
func ToolParamHeaders(inputSchema json.RawMessage) ([]ParamHeader, error) {
	if !strings.Contains(string(inputSchema), `"x-mcp-header"`) {
		return nil, nil
	}
	var s schemaProperty
	if err := json.Unmarshal(inputSchema, &s); err != nil {
		return nil, nil // a schema mcpx cannot read is the server's business
	}
	var out []ParamHeader
	seen := map[string]bool{}
	if err := collectParamHeaders(s.Properties, nil, seen, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParamHeader, err)
	}
	return out, nil
}

func collectParamHeaders(props map[string]schemaProperty, prefix []string, seen map[string]bool, out *[]ParamHeader) error {
	for name, p := range props {
		path := append(append([]string(nil), prefix...), name)
		if p.Header != nil {
			where := strings.Join(path, ".")
			var typ string
			_ = json.Unmarshal(p.Type, &typ)
			if typ != "string" && typ != "integer" && typ != "boolean" {
				return fmt.Errorf("property %q: x-mcp-header on type %s (only string, integer, boolean)", where, string(p.Type))
			}
			var header string
			if err := json.Unmarshal(p.Header, &header); err != nil || header == "" {
				return fmt.Errorf("property %q: x-mcp-header must be a non-empty string", where)
			}
			if !isToken(header) {
				return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP token", where, header)
			}
			if seen[strings.ToLower(header)] {
				return fmt.Errorf("property %q: x-mcp-header %q is used twice", where, header)
			}
			seen[strings.ToLower(header)] = true
			*out = append(*out, ParamHeader{Path: path, Name: header})
		}
		if err := collectParamHeaders(p.Properties, path, seen, out); err != nil {
			return err
		}
	}
	return nil
}

// isToken reports whether s is an HTTP field name (RFC 9110 token).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// setRequestHeaders sets the headers of a modern request: Mcp-Method, and
// Mcp-Name and a tool's Mcp-Param-* where the method has them. params is
// the request's params as sent.
func setRequestHeaders(h http.Header, method string, params []byte, tool func(string) []ParamHeader) {
	h.Set(headerMethod, method)
	var key string
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return
	}
	raw, _ := rawjson.Get(params, key)
	name, ok := rawjson.String(raw)
	if !ok {
		return
	}
	h.Set(headerName, headerValue(name))
	if method != "tools/call" || tool == nil {
		return
	}
	bindings := tool(name)
	if len(bindings) == 0 {
		return
	}
	args, _ := rawjson.Get(params, "arguments")
	for _, b := range bindings {
		if v, ok := argumentHeader(args, b.Path); ok {
			h.Set(headerParamPrefix+b.Name, v)
		}
	}
}

// argumentHeader is the header value of the argument at path: a string,
// a boolean or a safe integer; absent, null or anything else sends no
// header.
func argumentHeader(args []byte, path []string) (string, bool) {
	v := args
	for _, key := range path {
		var err error
		if v, err = rawjson.Get(v, key); err != nil || v == nil {
			return "", false
		}
	}
	switch {
	case string(v) == "true" || string(v) == "false":
		return string(v), true
	case len(v) > 0 && v[0] == '"':
		s, ok := rawjson.String(v)
		if !ok {
			return "", false
		}
		return headerValue(s), true
	default:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
}

// headerValue is s as a header value: as it is when it is printable
// ASCII without leading or trailing space, else Base64 in the
// =?base64?...?= wrapper the spec gives.
func headerValue(s string) string {
	plain := s == "" || (s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t')
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
