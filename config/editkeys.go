package config

import (
	"crypto/sha256"
	"encoding/json"
	"errors"

	"github.com/tailscale/hujson"
)

// ErrNoKey is returned by [RemoveKey] for a name http.keys does not have.
var ErrNoKey = errors.New("no such key")

// AddKey writes the key name with its hash, bound to profile ("": the
// whole catalog), into file's http.keys, making the sections it lacks.
// A name that exists is [ErrExists]: a key is replaced by removing it,
// which revokes it, and adding a new one.
func AddKey(file, name string, hash [sha256.Size]byte, profile string) error {
	entry := map[string]string{"hash": HashString(hash)}
	if profile != "" {
		entry["profile"] = profile
	}
	value, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	return edit(file, true, func(root *hujson.Value) error {
		keys, err := keysObject(root, file, true)
		if err != nil {
			return err
		}
		if memberIndex(keys, name) >= 0 {
			return &Error{File: file, Field: "http.keys." + name, Msg: ErrExists.Error() + " (mcpx keys remove revokes it)", Err: ErrExists}
		}
		return setMember(keys, name, value, indentUnit(root))
	})
}

// RemoveKey removes the key name from file's http.keys: a serve that
// watches the file refuses it from its next request.
func RemoveKey(file, name string) error {
	return edit(file, false, func(root *hujson.Value) error {
		keys, err := keysObject(root, file, false)
		i := -1
		if err == nil {
			i = memberIndex(keys, name)
		}
		if i < 0 {
			return &Error{File: file, Field: "http.keys." + name, Msg: ErrNoKey.Error(), Err: ErrNoKey}
		}
		removeMember(keys.Value.(*hujson.Object), i)
		return nil
	})
}

// keysObject returns http.keys, adding http and keys when create is set.
func keysObject(root *hujson.Value, file string, create bool) (*hujson.Value, error) {
	unit := indentUnit(root)
	parent := root
	for _, key := range []string{"http", "keys"} {
		i := memberIndex(parent, key)
		if i < 0 {
			if !create {
				return nil, &Error{File: file, Msg: "no http.keys section"}
			}
			if err := setMember(parent, key, []byte("{}"), unit); err != nil {
				return nil, err
			}
			i = memberIndex(parent, key)
			v := &parent.Value.(*hujson.Object).Members[i].Value
			if indent, ok := memberIndent(parent, unit); ok {
				// Over lines, its closing brace under its key.
				v.Value.(*hujson.Object).AfterExtra = hujson.Extra("\n" + indent)
			}
		}
		v := &parent.Value.(*hujson.Object).Members[i].Value
		if _, ok := v.Value.(*hujson.Object); !ok {
			return nil, &Error{File: file, Field: key, Msg: "want an object"}
		}
		parent = v
	}
	return parent, nil
}
