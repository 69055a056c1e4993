package proxytool

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestTool(t *testing.T) {
	raw := Tool()
	var tool struct {
		Name        string                     `json:"name"`
		Title       string                     `json:"title"`
		Description string                     `json:"description"`
		InputSchema map[string]json.RawMessage `json:"inputSchema"`
		Annotations map[string]json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &tool); err != nil {
		t.Fatalf("Tool() is not a Tool object: %v\n%s", err, raw)
	}
	if tool.Name != Name || tool.Title == "" {
		t.Errorf("name %q, title %q", tool.Name, tool.Title)
	}
	for _, w := range []string{"list", "info", "call", "query", "offset", "filter_server", `{"action":"list","type":"tool","query":`} {
		if !strings.Contains(tool.Description, w) {
			t.Errorf("description does not mention %s", w)
		}
	}
	list, info, call := strings.Index(tool.Description, "list"), strings.Index(tool.Description, "info"), strings.Index(tool.Description, "call")
	if !(list < info && info < call) {
		t.Errorf("description should teach list, then info, then call")
	}

	s := tool.InputSchema
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "if", "$ref"} {
		if _, ok := s[k]; ok {
			t.Errorf("inputSchema has top-level %s: clients reject it", k)
		}
	}
	if string(s["type"]) != `"object"` || string(s["additionalProperties"]) != "false" {
		t.Errorf("inputSchema type %s, additionalProperties %s", s["type"], s["additionalProperties"])
	}
	var required []string
	_ = json.Unmarshal(s["required"], &required)
	if !slices.Equal(required, []string{"action", "type"}) {
		t.Errorf("required = %v", required)
	}
	var props map[string]json.RawMessage
	_ = json.Unmarshal(s["properties"], &props)
	for _, k := range strings.Split(allowedParams, ", ") {
		if _, ok := props[k]; !ok {
			t.Errorf("inputSchema has no property %s", k)
		}
	}
	if len(props) != len(strings.Split(allowedParams, ", ")) {
		t.Errorf("inputSchema has %d properties, decodeArgs accepts %s", len(props), allowedParams)
	}

	want := map[string]string{"readOnlyHint": "false", "destructiveHint": "true", "idempotentHint": "false", "openWorldHint": "true"}
	for k, v := range want {
		if string(tool.Annotations[k]) != v {
			t.Errorf("annotations.%s = %s, want %s", k, tool.Annotations[k], v)
		}
	}

	// Tool returns a fresh copy each time.
	raw[0] = 'x'
	if Tool()[0] != '{' {
		t.Error("Tool() shares its bytes between calls")
	}
}

// TestSchemaAgreesWithDecode checks the inputSchema with a real JSON Schema
// validator, and that it accepts and rejects what decodeArgs does.
func TestSchemaAgreesWithDecode(t *testing.T) {
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(Tool(), &tool); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("proxy.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("proxy.json")
	if err != nil {
		t.Fatalf("inputSchema does not compile: %v", err)
	}

	tests := []struct {
		args  string
		valid bool
	}{
		{`{"action":"list","type":"tool"}`, true},
		{`{"action":"list","type":"resource","limit":1000,"offset":0,"filter_server":"github","query":"issue"}`, true},
		{`{"action":"list","type":"prompt","limit":1}`, true},
		{`{"action":"info","type":"tool","path":"gh_search"}`, true},
		{`{"action":"call","type":"tool","path":"gh_search","args":{"q":"x","n":[1]}}`, true},
		{`{"action":"call","type":"tool","path":"gh_search","args":"{\"q\":\"x\"}"}`, true},
		{`{"action":"call","type":"prompt","path":"p","args":{"a":"b"}}`, true},
		{`{"type":"tool"}`, false},
		{`{"action":"list"}`, false},
		{`{"action":"lst","type":"tool"}`, false},
		{`{"action":"list","type":"tools"}`, false},
		{`{"action":"list","type":"tool","limit":0}`, false},
		{`{"action":"list","type":"tool","limit":1001}`, false},
		{`{"action":"list","type":"tool","limit":2.5}`, false},
		{`{"action":"list","type":"tool","limit":"10"}`, false},
		{`{"action":"list","type":"tool","offset":-1}`, false},
		{`{"action":"list","type":"tool","name":"x"}`, false},
		{`{"action":"call","type":"tool","path":"x","args":[1]}`, false},
		{`{"action":"info","type":"tool","path":7}`, false},
		{`{"action":"list","type":"tool","query":1}`, false},
		{`"list"`, false},
	}
	for _, tt := range tests {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := schema.Validate(inst)
		if (schemaErr == nil) != tt.valid {
			t.Errorf("schema on %s: valid %v, want %v (%v)", tt.args, schemaErr == nil, tt.valid, schemaErr)
		}
		_, decodeErr := decodeArgs(json.RawMessage(tt.args))
		if (decodeErr == nil) != tt.valid {
			t.Errorf("decodeArgs(%s) = %v, want valid %v", tt.args, decodeErr, tt.valid)
		}
	}
}
