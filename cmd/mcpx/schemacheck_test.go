package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSchemaError checks the structural check doctor runs on inputSchemas:
// sound schemas of the shapes servers publish pass, and each malformed
// keyword is named with where it is.
func TestSchemaError(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object"}`, ""},
		{`true`, ""},
		{`{"type":"object","properties":{"n":{"type":["integer","null"],"minimum":0,"exclusiveMaximum":true},` +
			`"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"minItems":1,"uniqueItems":true},` +
			`"pair":{"items":[{"type":"string"},{"type":"number"}]}},` +
			`"required":["n"],"additionalProperties":false,"anyOf":[{"required":["tags"]},true],"$defs":{"a/b":{"const":1}}}`, ""},
		{`{"type":"object","x-extension":{"type":"integr"}}`, ""}, // not a keyword: not checked
		{`{"type":"object","properties":{"n":{"type":"integr"}}}`, `at /properties/n/type: "integr" is not a JSON Schema type`},
		{`{"type":["string","string"]}`, `at /type/1: "string" appears twice`},
		{`{"type":7}`, `at /type: a type must be a string, not a number`},
		{`{"type":[["string"]]}`, `at /type/0: a type must be a string, not an array`},
		{`{"properties":[]}`, `at /properties: must be an object of schemas, not an array`},
		{`{"properties":{"a/b":3}}`, `at /properties/a~1b: a schema must be an object or a boolean, not a number`},
		{`{"required":["a","a"]}`, `at /required: "a" appears twice`},
		{`{"required":"a"}`, `at /required: must be an array of strings, not a string`},
		{`{"anyOf":[]}`, `at /anyOf: must be a non-empty array of schemas`},
		{`{"minLength":-1}`, `at /minLength: must be a non-negative integer`},
		{`{"maxItems":1.5}`, `at /maxItems: must be a non-negative integer`},
		{`{"multipleOf":0}`, `at /multipleOf: must be a number above 0`},
		{`{"pattern":"("}`, `at /pattern: error parsing regexp`},
		{`{"patternProperties":{"(":{}}}`, `at /patternProperties/(: error parsing regexp`},
		{`{"enum":{}}`, `at /enum: must be an array, not an object`},
		{`{"description":{}}`, `at /description: must be a string, not an object`},
		{`"object"`, `at /: a schema must be an object or a boolean, not a string`},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.schema), &v); err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		err := schemaError(v)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.schema, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.schema, err, tc.want)
		}
	}
}
