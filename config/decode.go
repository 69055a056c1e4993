package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// The file is decoded into a generic tree by the format's own decoder, not
// by viper: viper lowercases every map key, and server names, env var names
// and header names must keep their case. The tree holds only
// map[string]any, []any, string, bool, json.Number (every number, in the
// text it was written with where the format keeps it) and nil; anything
// else (a TOML date, say) is reported as a wrong type by the field readers.

type format string

const (
	formatJSON format = "json"
	formatYAML format = "yaml"
	formatTOML format = "toml"
)

// formatOf picks the format from the file's extension; JSON when there is
// none or it is unknown.
func formatOf(file string) format {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
		return formatYAML
	case ".toml":
		return formatTOML
	}
	return formatJSON
}

// decode parses data into a tree whose top level is a map. An empty file
// is an empty map.
func decode(file string, data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	var tree any
	var err error
	switch formatOf(file) {
	case formatYAML:
		tree, err = decodeYAML(data)
	case formatTOML:
		tree, err = decodeTOML(data)
	default:
		tree, err = decodeJSON(data)
	}
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	switch m := normalize(tree).(type) {
	case map[string]any:
		return m, nil
	case nil:
		return map[string]any{}, nil
	}
	return nil, &Error{File: file, Msg: "want an object at the top level"}
}

func decodeJSON(data []byte) (any, error) {
	data, err := standardJSON(data)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, jsonError(data, err)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return nil, positioned(data, int64(len(data)-len(rest)), "unexpected data after the top-level value")
	}
	return tree, nil
}

// jsonError adds the line and column to the decoder's error.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return positioned(data, syn.Offset-1, syn.Error())
	case errors.As(err, &typ):
		return positioned(data, typ.Offset-1, typ.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return positioned(data, int64(len(data)), "unexpected end of file")
	}
	return err
}

// positioned describes the byte at offset as "line L, column C: msg".
func positioned(data []byte, offset int64, msg string) error {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %s", line, col, msg)
}

func decodeYAML(data []byte) (any, error) {
	var tree any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		// yaml.v3 reports the line ("yaml: line 3: ...") but not the column.
		var te *yaml.TypeError
		if errors.As(err, &te) { // duplicate keys, for one
			return nil, errors.New(strings.Join(te.Errors, "; "))
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return tree, nil
}

func decodeTOML(data []byte) (any, error) {
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			// Not de.String(): it quotes the offending line, which may hold
			// a secret.
			row, col := de.Position()
			return nil, fmt.Errorf("line %d, column %d: %s", row, col, strings.TrimPrefix(de.Error(), "toml: "))
		}
		// A duplicate key comes without a position.
		return nil, errors.New(strings.TrimPrefix(err.Error(), "toml: "))
	}
	return tree, nil
}

// normalize turns what the three decoders produce into the tree's types.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
		return v
	case map[any]any: // YAML with non-string keys
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
		return v
	case int:
		return json.Number(strconv.Itoa(v))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case uint64:
		return json.Number(strconv.FormatUint(v, 10))
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return v // not a number we accept anywhere
		}
		return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
	}
	return v
}

// standardJSON blanks the comments and trailing commas of JSON with
// comments (VS Code's mcp.json), keeping every byte offset so that
// positions in later errors stay right. Strict JSON comes back unchanged;
// malformed input is an error naming its line and column.
func standardJSON(data []byte) ([]byte, error) {
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		// "hujson: line 4, column 5: invalid character ..."
		msg := strings.TrimPrefix(err.Error(), "hujson: ")
		if i := strings.Index(msg, "invalid literal: "); i >= 0 {
			// hujson quotes the whole literal, which may be a secret.
			msg = msg[:i] + "invalid value (want a string, number, object, array, true, false or null)"
		}
		return nil, errors.New(msg)
	}
	return std, nil
}
