package main

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A structural check of a tool's inputSchema, for doctor. It does what a
// client's validator does first with a schema, check each keyword's shape
// against the meta-schema, by hand: a full JSON Schema library compiles its
// meta-schemas at package initialisation, which cost every mcpx start about
// 23 ms (GODEBUG=inittrace=1) for one doctor finding.

// keywordCheck returns the check of a keyword's value, nil for a keyword
// that is not checked (an annotation, a vendor extension), as JSON Schema
// asks.
func keywordCheck(keyword string) func(path string, v any) error {
	switch keyword {
	case "type":
		return checkType
	case "properties", "$defs", "definitions", "dependentSchemas":
		return checkSchemaMap
	case "patternProperties":
		return checkPatternMap
	case "additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems", "propertyNames", "contains", "not", "if", "then", "else":
		return checkSubschema
	case "items":
		return checkItems
	case "prefixItems", "allOf", "anyOf", "oneOf":
		return checkSchemaList
	case "required":
		return checkStringSet
	case "enum":
		return checkArray
	case "minimum", "maximum":
		return checkNumber
	case "exclusiveMinimum", "exclusiveMaximum":
		return checkNumberOrBool // a boolean in draft 4
	case "multipleOf":
		return checkPositive
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		return checkCount
	case "uniqueItems":
		return checkBool
	case "pattern":
		return checkPattern
	case "format", "title", "description", "$ref", "$id", "$schema":
		return checkString
	}
	return nil
}

// schemaError says what is wrong with a schema's structure, or returns
// nil. v is the schema decoded by encoding/json into any.
func schemaError(v any) error { return checkSubschema("", v) }

func checkSubschema(path string, v any) error {
	switch s := v.(type) {
	case bool:
		return nil
	case map[string]any:
		// In a fixed order, so the same schema always gets the same message.
		for _, k := range slices.Sorted(maps.Keys(s)) {
			if check := keywordCheck(k); check != nil {
				if err := check(path+"/"+k, s[k]); err != nil {
					return err
				}
			}
		}
		return nil
	default:
		return fmt.Errorf("at %s: a schema must be an object or a boolean, not %s", where(path), jsonKind(v))
	}
}

func checkType(path string, v any) error {
	list, ok := v.([]any)
	if !ok {
		return checkTypeName(path, v)
	}
	seen := map[string]bool{}
	for i, t := range list {
		p := path + "/" + strconv.Itoa(i)
		if err := checkTypeName(p, t); err != nil {
			return err
		}
		if seen[t.(string)] {
			return fmt.Errorf("at %s: %q appears twice", p, t)
		}
		seen[t.(string)] = true
	}
	return nil
}

func checkTypeName(path string, v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("at %s: a type must be a string, not %s", where(path), jsonKind(v))
	}
	switch s {
	case "null", "boolean", "object", "array", "number", "string", "integer":
		return nil
	}
	return fmt.Errorf("at %s: %q is not a JSON Schema type", where(path), s)
}

func checkSchemaMap(path string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("at %s: must be an object of schemas, not %s", where(path), jsonKind(v))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkSubschema(path+"/"+escapePointer(k), m[k]); err != nil {
			return err
		}
	}
	return nil
}

func checkPatternMap(path string, v any) error {
	if err := checkSchemaMap(path, v); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(v.(map[string]any))) {
		if err := checkPattern(path+"/"+escapePointer(k), k); err != nil {
			return err
		}
	}
	return nil
}

// checkItems accepts one schema, or draft 7's array of schemas.
func checkItems(path string, v any) error {
	if _, ok := v.([]any); ok {
		return checkSchemaList(path, v)
	}
	return checkSubschema(path, v)
}

func checkSchemaList(path string, v any) error {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return fmt.Errorf("at %s: must be a non-empty array of schemas", where(path))
	}
	for i, s := range list {
		if err := checkSubschema(path+"/"+strconv.Itoa(i), s); err != nil {
			return err
		}
	}
	return nil
}

func checkStringSet(path string, v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("at %s: must be an array of strings, not %s", where(path), jsonKind(v))
	}
	seen := map[string]bool{}
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return fmt.Errorf("at %s/%d: must be a string, not %s", where(path), i, jsonKind(e))
		}
		if seen[s] {
			return fmt.Errorf("at %s: %q appears twice", where(path), s)
		}
		seen[s] = true
	}
	return nil
}

func checkArray(path string, v any) error {
	if _, ok := v.([]any); !ok {
		return fmt.Errorf("at %s: must be an array, not %s", where(path), jsonKind(v))
	}
	return nil
}

func checkNumber(path string, v any) error {
	if _, ok := v.(float64); !ok {
		return fmt.Errorf("at %s: must be a number, not %s", where(path), jsonKind(v))
	}
	return nil
}

func checkNumberOrBool(path string, v any) error {
	if _, ok := v.(bool); ok {
		return nil
	}
	return checkNumber(path, v)
}

func checkPositive(path string, v any) error {
	if n, ok := v.(float64); !ok || n <= 0 {
		return fmt.Errorf("at %s: must be a number above 0", where(path))
	}
	return nil
}

func checkCount(path string, v any) error {
	if n, ok := v.(float64); !ok || n < 0 || n != math.Trunc(n) {
		return fmt.Errorf("at %s: must be a non-negative integer", where(path))
	}
	return nil
}

func checkBool(path string, v any) error {
	if _, ok := v.(bool); !ok {
		return fmt.Errorf("at %s: must be a boolean, not %s", where(path), jsonKind(v))
	}
	return nil
}

func checkString(path string, v any) error {
	if _, ok := v.(string); !ok {
		return fmt.Errorf("at %s: must be a string, not %s", where(path), jsonKind(v))
	}
	return nil
}

// checkPattern compiles a pattern as Go's regexp does, which is what a Go
// client validating arguments would use.
func checkPattern(path string, v any) error {
	if err := checkString(path, v); err != nil {
		return err
	}
	if _, err := regexp.Compile(v.(string)); err != nil {
		return fmt.Errorf("at %s: %v", where(path), err)
	}
	return nil
}

// where names a JSON pointer for a message; the root is "/".
func where(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
