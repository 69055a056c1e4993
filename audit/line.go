package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpx/mcpx/internal/statedir"

	"github.com/mcpx/mcpx/rawjson"
)

// Call is what the caller knows of one call; the writer makes the line.
type Call struct {
	// Start and End bound the call; a zero End means when Record ran.
	Start, End time.Time
	// Client is the client's clientInfo name, Session its session id;
	// both "" from the terminal. Principal is the API key serve --http
	// let the client in with ("": none, or the shared token).
	Client, Session, Principal string
	// Server is the source the call went to.
	Server string
	// Method is tools/call, resources/read or prompts/get.
	Method string
	// Params are the request's params as sent to the server.
	Params json.RawMessage
	// Result is the answer; Err the failure, if any, and ErrorCode its
	// JSON-RPC code when it has one.
	Result    json.RawMessage
	Err       error
	ErrorCode int
	// Outcome overrides the outcome derived from Result and Err
	// ("refused", "withheld").
	Outcome string
	// Run names the code-mode run the call belongs to: the run's own
	// line and each of its inner calls carry the same id. "" for a call
	// made outside a script.
	Run string

	resultBytes int // the length of a Result Record let go of
}

// keptResult is the largest Result that Record keeps for the writer.
const keptResult = 64 << 10

// Line is one line of the trail.
type Line struct {
	Time        time.Time       `json:"time"`
	Client      string          `json:"client,omitempty"`
	Session     string          `json:"session,omitempty"`
	Principal   string          `json:"principal,omitempty"`
	Run         string          `json:"run,omitempty"`
	Server      string          `json:"server"`
	Method      string          `json:"method"`
	Tool        string          `json:"tool,omitempty"`
	URI         string          `json:"uri,omitempty"`
	Prompt      string          `json:"prompt,omitempty"`
	ArgsBytes   int             `json:"argsBytes"`
	ArgsSHA256  string          `json:"argsSha256,omitempty"`
	ArgKeys     []string        `json:"argKeys,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Outcome     string          `json:"outcome"`
	ErrorCode   int             `json:"errorCode,omitempty"`
	DurationMS  float64         `json:"durationMs"`
	ResultBytes int             `json:"resultBytes"`
}

// Outcomes a line can have besides "refused" and "withheld".
const (
	OutcomeOK      = "ok"
	OutcomeIsError = "isError"
	OutcomeError   = "error"
)

// maxClient is the longest client name a line keeps, in bytes: the name
// is whatever the client sent in its clientInfo (in initialize, or in
// each request of revision 2026-07-28), and one line per call must not
// carry a message's worth of it.
const maxClient = 256

// clip cuts a client name to maxClient bytes, at a character's start,
// marking the cut with "…".
func clip(name string) string {
	if len(name) <= maxClient {
		return name
	}
	cut := maxClient - len("…")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}

// line builds the trail's line for c, keeping what mode allows of the
// arguments.
func (c Call) line(mode Arguments) Line {
	l := Line{
		Time: c.Start.UTC(), Client: clip(c.Client), Session: c.Session, Principal: c.Principal, Run: c.Run, Server: c.Server, Method: c.Method,
		Outcome: c.outcome(), ErrorCode: c.ErrorCode, ResultBytes: max(len(c.Result), c.resultBytes),
		DurationMS: float64(c.End.Sub(c.Start).Microseconds()) / 1000,
	}
	str := func(key string) string {
		s, _ := rawjson.String(get(c.Params, key))
		return s
	}
	switch c.Method {
	case "tools/call":
		l.Tool = str("name")
	case "prompts/get":
		l.Prompt = str("name")
	case "resources/read":
		l.URI = str("uri")
	}
	args := get(c.Params, "arguments")
	if len(args) == 0 || string(args) == "null" {
		return l
	}
	sum := sha256.Sum256(args)
	l.ArgsBytes, l.ArgsSHA256 = len(args), hex.EncodeToString(sum[:])
	switch mode {
	case ArgumentsFull:
		l.Arguments = slices.Clone(args)
	case ArgumentsKeys:
		l.ArgKeys = []string{}
		rawjson.Members(args, func(key string, _ []byte) bool {
			l.ArgKeys = append(l.ArgKeys, key)
			return true
		})
	}
	return l
}

func get(b []byte, key string) []byte {
	v, _ := rawjson.Get(b, key)
	return v
}

func (c Call) outcome() string {
	switch {
	case c.Outcome != "":
		return c.Outcome
	case c.Err != nil:
		return OutcomeError
	}
	if v := get(c.Result, "isError"); string(v) == "true" {
		return OutcomeIsError
	}
	return OutcomeOK
}

// DefaultPath is $XDG_STATE_HOME/mcpx/audit.jsonl, where $XDG_STATE_HOME
// defaults to ~/.local/state; "" when neither is known.
func DefaultPath() string {
	dir := statedir.Dir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "audit.jsonl")
}
