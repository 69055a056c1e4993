package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/rawjson"
)

// Kind is what a definition defines.
type Kind string

// The kinds of definition pinned.
const (
	Tool   Kind = "tool"
	Prompt Kind = "prompt"
)

// Mode is how a server's definitions are pinned.
type Mode string

// The modes, as the config's trust key spells them.
const (
	// ModePin withholds a changed or new definition until approved.
	ModePin Mode = "pin"
	// ModeWarn serves it and logs the change.
	ModeWarn Mode = "warn"
	// ModeOff records nothing and compares nothing.
	ModeOff Mode = "off"
)

// pinnedFields are the members a fingerprint covers: what a person or the
// model reads of a definition and what a call of it takes. Members such
// as _meta and icons are left out: they change for reasons of their own
// (a server stamping a version) and do not instruct the model.
var pinnedFields = map[Kind][]string{
	Tool:   {"name", "title", "description", "inputSchema", "outputSchema", "annotations"},
	Prompt: {"name", "title", "description", "arguments"},
}

// canonical returns the pinned members of a definition as canonical JSON
// (keys sorted at every depth, no insignificant space, numbers as the
// server wrote them, no HTML escaping), so that a server that reorders
// keys does not look changed, and the SHA-256 of that text in hex.
func canonical(kind Kind, raw json.RawMessage) (json.RawMessage, string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, "", fmt.Errorf("a %s definition is not a JSON object", kind)
	}
	kept := make(map[string]any, len(pinnedFields[kind]))
	for _, k := range pinnedFields[kind] {
		if v, ok := obj[k]; ok {
			kept[k] = v
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(kept); err != nil { // maps encode with sorted keys
		return nil, "", fmt.Errorf("encode a %s definition: %w", kind, err)
	}
	// A copy of exactly its size: the record keeps it for as long as the
	// server is pinned, and the encoder's buffer has grown by doubling.
	text := bytes.Clone(bytes.TrimRight(b.Bytes(), "\n"))
	sum := sha256.Sum256(text)
	return text, hex.EncodeToString(sum[:]), nil
}

// nameOf is the name member of a definition, "" when it has none.
func nameOf(raw json.RawMessage) string {
	v, err := rawjson.Get(raw, "name")
	if err != nil {
		return ""
	}
	name, _ := rawjson.String(v)
	return name
}
