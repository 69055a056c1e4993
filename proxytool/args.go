package proxytool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpx/mcpx/rawjson"
)

// action is what one proxy call does.
type action string

const (
	actionList action = "list"
	actionInfo action = "info"
	actionCall action = "call"
	// actionRun runs a script over the other three (code mode); only a
	// catalog that is a [Runner] has it.
	actionRun action = "run"
)

const (
	// defaultLimit is list's page size when limit is not given: ten, the
	// page a model reads the best matches of a query in (recall@10 is
	// what the search is measured by), at a few hundred tokens.
	defaultLimit = 10
	// maxLimit is the largest limit allowed.
	maxLimit = 1000
	// allowedParams lists the proxy tool's arguments for error messages.
	allowedParams = "action, type, path, args, limit, offset, filter_server, query, detail"
	// allowedRunParams are allowedParams where the run action is on.
	allowedRunParams = allowedParams + ", code"
)

// detail is how much of each capability list shows.
type detail string

const (
	// detailSummary is a summary: name, one-line description and a
	// typed argument list (see appendSummary). The default.
	detailSummary detail = "summary"
	// detailFull is the whole MCP object, as tools/list has it (Magg's
	// list).
	detailFull detail = "full"
)

// request is the decoded, validated arguments of one proxy call.
type request struct {
	action action
	kind   Kind
	// path is the name or URI given; "" when absent.
	path string
	// args is the args object (decoded from a string if it came as one),
	// or nil when absent. For a prompt call every value is a string.
	args json.RawMessage
	// limit and offset are list's paging, defaults filled in.
	limit, offset int
	// filterServer and query are list's filters; "" means none.
	filterServer string
	query        string
	// queryGiven says that query was given, even if empty.
	queryGiven bool
	// detail is how much list shows of each capability.
	detail detail
	// limitGiven says that limit was given.
	limitGiven bool
	// code is run's script.
	code string
}

// decodeArgs decodes and validates the arguments object of a proxy call;
// a nil or null raw is an empty object. The error's text is meant for the
// model. First come schema errors, which name the parameter, the value
// received and what is allowed (all of them, one a line); then Magg's four
// checks, in Magg's order and with Magg's words; then the prompt arguments.
func decodeArgs(raw json.RawMessage) (request, error) { return decodeArgsFor(raw, false) }

// decodeArgsFor is decodeArgs where run says whether the run action is
// on: without it, run and code are unknown as they were before it.
func decodeArgsFor(raw json.RawMessage, run bool) (request, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return request{}, err
	}
	f := fields(obj)
	req, errs := f.decode(run)
	if len(errs) > 0 {
		return req, errors.Join(errs...)
	}
	if err := f.checkCombination(req); err != nil {
		return req, err
	}
	if req.action == actionCall && req.kind == KindPrompt {
		if req.args, err = promptArgs(req.args); err != nil {
			return req, err
		}
	}
	return req, nil
}

// fields are the arguments as given, by name.
type fields map[string]json.RawMessage

// present reports whether a parameter was given; null counts as absent.
func (f fields) present(name string) bool {
	v, ok := f[name]
	return ok && !isNull(v)
}

// decode checks each parameter against the schema and fills a request.
func (f fields) decode(run bool) (request, []error) {
	req := request{limit: defaultLimit, detail: detailSummary}
	var errs []error

	var unknown []string
	allowed := allowedParams
	actions, values := "'list', 'info', 'call'", []action{actionList, actionInfo, actionCall}
	if run {
		allowed = allowedRunParams
		actions, values = "'list', 'info', 'call', 'run'", append(values, actionRun)
	}
	known := strings.Split(allowed, ", ")
	for k := range f {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		noun := "parameter"
		if len(unknown) > 1 {
			noun = "parameters"
		}
		errs = append(errs, fmt.Errorf("Unknown %s %s; allowed parameters: %s", noun, quoteNames(unknown), allowed))
	}

	var err error
	if req.action, err = enum(f, "action", actions, values...); err != nil {
		errs = append(errs, err)
	}
	// A script names the type of each thing it reaches itself.
	if req.action != actionRun || f.present("type") {
		if req.kind, err = enum(f, "type", "'tool', 'resource', 'prompt'", KindTool, KindResource, KindPrompt); err != nil {
			errs = append(errs, err)
		}
	}
	if run && f.present("code") {
		s, ok := stringValue(f["code"])
		if !ok {
			errs = append(errs, fmt.Errorf("Parameter 'code' must be a string (a script); got %s", shown(f["code"])))
		}
		req.code = s
	}

	if f.present("path") {
		s, ok := stringValue(f["path"])
		if !ok {
			errs = append(errs, fmt.Errorf("Parameter 'path' must be a string (a name or URI); got %s", shown(f["path"])))
		}
		req.path = s
	}

	if f.present("args") {
		a, err := decodeArgsParam(f["args"])
		if err != nil {
			errs = append(errs, err)
		}
		req.args = a
	}

	if f.present("limit") {
		n, ok := integer(f["limit"])
		if !ok || n < 1 || n > maxLimit {
			errs = append(errs, fmt.Errorf("Parameter 'limit' must be an integer from 1 to %d (default %d); got %s", maxLimit, defaultLimit, shown(f["limit"])))
		} else {
			req.limit, req.limitGiven = int(n), true
		}
	}

	if f.present("offset") {
		n, ok := integer(f["offset"])
		if !ok || n < 0 {
			errs = append(errs, fmt.Errorf("Parameter 'offset' must be an integer >= 0 (default 0); got %s", shown(f["offset"])))
		} else {
			// Any offset past the end gives an empty page.
			req.offset = int(min(n, 1<<30))
		}
	}

	for _, p := range []struct {
		name string
		dst  *string
	}{{"filter_server", &req.filterServer}, {"query", &req.query}} {
		if !f.present(p.name) {
			continue
		}
		s, ok := stringValue(f[p.name])
		if !ok {
			errs = append(errs, fmt.Errorf("Parameter '%s' must be a string; got %s", p.name, shown(f[p.name])))
		}
		*p.dst = s
	}
	req.queryGiven = f.present("query")
	if f.present("detail") {
		if req.detail, err = enum(f, "detail", "'summary', 'full'", detailSummary, detailFull); err != nil {
			errs = append(errs, err)
		}
	}
	return req, errs
}

// enum decodes a required string parameter with a fixed set of values.
func enum[T ~string](f fields, name, allowed string, values ...T) (T, error) {
	if !f.present(name) {
		return "", fmt.Errorf("Parameter '%s' is required: one of %s", name, allowed)
	}
	s, ok := stringValue(f[name])
	if !ok || !slices.Contains(values, T(s)) {
		return "", fmt.Errorf("Parameter '%s' must be one of %s; got %s", name, allowed, shown(f[name]))
	}
	return T(s), nil
}

// checkCombination runs Magg's checks of which parameters go with which
// action, in Magg's order and words.
func (f fields) checkCombination(req request) error {
	a := req.action
	if a == actionRun {
		return f.checkRun(req)
	}
	if f.present("code") {
		return fmt.Errorf("Parameter 'code' is only allowed for action 'run' (got it for action '%s')", a)
	}
	if (a == actionInfo || a == actionCall) && req.path == "" {
		return fmt.Errorf("Parameter 'path' is required for action '%s'", a)
	}
	if (a == actionList || a == actionInfo) && !isEmptyObject(req.args) {
		return fmt.Errorf("Parameter 'args' should not be provided for action '%s'", a)
	}
	if a == actionList && req.path != "" {
		return errors.New("Parameter 'path' should not be provided for action 'list'")
	}
	if a == actionList {
		return nil
	}
	var given []string
	for _, k := range []string{"limit", "offset", "filter_server", "query", "detail"} {
		if f.present(k) {
			given = append(given, k)
		}
	}
	if len(given) > 0 {
		return fmt.Errorf("Parameters 'limit', 'offset', and 'filter_server' are only allowed for 'list' action, and so are 'query' and 'detail' (got %s for action '%s')", quoteNames(given), a)
	}
	return nil
}

// checkRun checks that run has its script and none of the other
// actions' parameters.
func (f fields) checkRun(req request) error {
	if req.code == "" {
		return errors.New("Parameter 'code' is required for action 'run': the script to run")
	}
	var given []string
	for _, k := range []string{"path", "args", "limit", "offset", "filter_server", "query", "detail"} {
		if f.present(k) {
			given = append(given, k)
		}
	}
	if len(given) > 0 {
		return fmt.Errorf("Parameters %s are not allowed for action 'run': the script passes them to proxy.list, proxy.info and proxy.call", quoteNames(given))
	}
	return nil
}

// decodeObject decodes a JSON object into its fields. Empty input and null
// are an empty object.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	if !rawjson.Valid(raw) {
		return nil, errors.New("The proxy tool's arguments are not valid JSON: give an object such as {\"action\":\"list\",\"type\":\"tool\"}")
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("The proxy tool's arguments must be a JSON object such as {\"action\":\"list\",\"type\":\"tool\"}; got %s", shown(raw))
	}
	fields, err := members(raw)
	if err != nil {
		return nil, fmt.Errorf("The proxy tool's arguments cannot be decoded: %v", err)
	}
	return fields, nil
}

// decodeArgsParam decodes the args parameter: an object, or a string
// holding one. An empty string counts as no args.
func decodeArgsParam(v json.RawMessage) (json.RawMessage, error) {
	const want = "Parameter 'args' must be a JSON object, or a string holding one"
	switch v[0] {
	case '{':
		return v, nil
	case '"':
		s, _ := stringValue(v)
		inner := bytes.TrimSpace([]byte(s))
		if len(inner) == 0 {
			return nil, nil
		}
		if inner[0] != '{' || !rawjson.Valid(inner) {
			return nil, fmt.Errorf("%s; got the string %s, which is not a JSON object", want, shown(v))
		}
		return inner, nil
	}
	return nil, fmt.Errorf("%s; got %s", want, shown(v))
}

// promptArgs turns a prompt call's args into the string map prompts/get
// takes: strings stay, numbers and booleans become their JSON text, and
// anything else is an error naming the key.
func promptArgs(args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("Parameter 'args' cannot be decoded: %v", err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(map[string]json.RawMessage, len(m))
	for _, k := range keys {
		v := bytes.TrimSpace(m[k])
		switch {
		case len(v) > 0 && v[0] == '"':
			out[k] = v
		case string(v) == "true" || string(v) == "false":
			out[k] = quote(string(v))
		case len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
			out[k] = quote(string(v))
		default:
			return nil, fmt.Errorf("Prompt argument '%s' must be a string (numbers and booleans are converted); got %s", k, shown(v))
		}
	}
	return marshalObject(out), nil
}

// stringValue decodes a JSON string.
func stringValue(v json.RawMessage) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	if s, ok := rawjson.String(v); ok && utf8.ValidString(s) {
		return s, true // no escapes: the bytes as they are
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// integer decodes a JSON number with an integral value (2 and 2.0, not
// 2.5 or "2"). Numbers too large for a float64 fail.
func integer(v json.RawMessage) (float64, bool) {
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil && f == math.Trunc(f)
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

// isEmptyObject reports whether args is absent or {}.
func isEmptyObject(args json.RawMessage) bool {
	if len(args) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(args, &m) == nil && len(m) == 0
}

// quoteNames renders names as 'a', 'b', shortening long ones.
func quoteNames(names []string) string {
	const max = 64
	q := make([]string, len(names))
	for i, n := range names {
		if len(n) > max {
			cut := max
			for cut > 0 && !utf8.RuneStart(n[cut]) {
				cut--
			}
			n = n[:cut] + "…"
		}
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}
