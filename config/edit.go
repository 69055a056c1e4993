package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// The editing functions change one server in a JSON (or JSON with
// comments) config file and leave every other byte as it was: other keys,
// other servers, comments, formatting. The result is validated before it is
// written, and written atomically (a temp file renamed over the old one), so
// a running mcpx never reads half a file.

// ErrExists is returned by [AddServer] for a name the file already has.
var ErrExists = errors.New("already exists")

// ErrNoServer is returned for a name the file does not have.
var ErrNoServer = errors.New("no such server")

// ErrWrite is returned when the edited file could not be written: the
// edit was sound, the file system refused it.
var ErrWrite = errors.New("cannot write the config file")

// Entry is a server as `mcpx add` writes it. Values may be ${VAR}
// references, written as they are and expanded when the config is loaded.
type Entry struct {
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Transport string            `json:"transport,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// EditTarget returns the file the editing commands change: the one [Load]
// would read, or, when there is none, mcpx/config.json in the config home
// (~/.config/mcpx/config.json), which the first edit creates.
func EditTarget(opts *LoadOptions) (string, error) {
	o := opts.withDefaults()
	file, err := o.find()
	if err != nil || file != "" {
		return file, err
	}
	home := o.configHome()
	if home == "" {
		return "", &Error{Msg: "no config file and no home directory to create one in: pass --config"}
	}
	return filepath.Join(home, "mcpx", "config.json"), nil
}

// AddServer adds the server name to file (created when missing). A name
// that exists is [ErrExists] unless replace is set.
func AddServer(file, name string, e Entry, replace bool) error {
	if name == "" {
		return &Error{File: file, Msg: "empty server name"}
	}
	value, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return edit(file, true, func(root *hujson.Value) error {
		servers, err := serversObject(root, file, true)
		if err != nil {
			return err
		}
		if i := memberIndex(servers, name); i >= 0 {
			if !replace {
				return &Error{File: file, Server: name, Msg: ErrExists.Error() + " (--force replaces it)", Err: ErrExists}
			}
		}
		return setMember(servers, name, value, indentUnit(root))
	})
}

// RemoveServer removes the server name from file.
func RemoveServer(file, name string) error {
	return edit(file, false, func(root *hujson.Value) error {
		servers, i, err := findServer(root, file, name)
		if err != nil {
			return err
		}
		removeMember(servers.Value.(*hujson.Object), i)
		return nil
	})
}

// SetEnabled turns the server name on or off in file. Disabling sets
// "enabled": false (or an existing "disabled" key, as Claude and Cline
// write it, to true); enabling removes both keys, enabled being the
// default, so that disable then enable gives back the file as it was.
func SetEnabled(file, name string, enabled bool) error {
	return edit(file, false, func(root *hujson.Value) error {
		servers, i, err := findServer(root, file, name)
		if err != nil {
			return err
		}
		srv := &servers.Value.(*hujson.Object).Members[i].Value
		obj, ok := srv.Value.(*hujson.Object)
		if !ok {
			return &Error{File: file, Server: name, Msg: "want an object"}
		}
		if enabled {
			// Enabled is the default: both keys go.
			for _, key := range []string{"disabled", "enabled"} {
				if j := memberIndex(srv, key); j >= 0 {
					removeMember(obj, j)
				}
			}
			return nil
		}
		if j := memberIndex(srv, "disabled"); j >= 0 {
			obj.Members[j].Value.Value = hujson.Bool(true)
			return nil
		}
		return setMember(srv, "enabled", []byte("false"), indentUnit(root))
	})
}

// edit reads file (an empty object when it is missing and create is set),
// applies change, validates and writes the result atomically.
func edit(file string, create bool, change func(root *hujson.Value) error) error {
	if f := formatOf(file); f != formatJSON {
		return &Error{File: file, Msg: fmt.Sprintf("mcpx edits JSON config files only; edit this %s file by hand", f)}
	}
	data, err := os.ReadFile(file)
	mode := os.FileMode(0o600)
	switch {
	case errors.Is(err, os.ErrNotExist) && create:
		data = []byte("{\n}\n")
	case err != nil:
		return &Error{File: file, Msg: fileProblem(err)}
	default:
		if info, err := os.Stat(file); err == nil {
			mode = info.Mode().Perm()
		}
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return &Error{File: file, Msg: err.Error()}
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return &Error{File: file, Msg: "want an object at the top level"}
	}
	if err := change(&root); err != nil {
		return err
	}
	out := root.Pack()
	if _, err := Parse(file, out, &LoadOptions{LookupEnv: validationEnv}); err != nil {
		return fmt.Errorf("the edited config would not load, so it was not written: %w", err)
	}
	return writeAtomic(file, out, mode)
}

// validationEnv lets every ${VAR} be unset while the result is checked: the
// variable may well be set only where mcpx runs. MCPX_* overrides are
// left out: they are not part of the file.
func validationEnv(name string) (string, bool) {
	if strings.HasPrefix(name, "MCPX_") {
		return "", false
	}
	if v, ok := os.LookupEnv(name); ok {
		return v, true
	}
	return "set", true
}

func writeAtomic(file string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &Error{File: file, Msg: fileProblem(err), Err: ErrWrite}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*")
	if err != nil {
		return &Error{File: file, Msg: fileProblem(err), Err: ErrWrite}
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), mode)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), file)
	}
	if werr != nil {
		return &Error{File: file, Msg: fileProblem(werr), Err: ErrWrite}
	}
	return nil
}

// serversObject returns the servers section ("servers", else
// "mcpServers"), adding "servers" when neither exists and create is set.
func serversObject(root *hujson.Value, file string, create bool) (*hujson.Value, error) {
	for _, key := range []string{"servers", "mcpServers"} {
		if i := memberIndex(root, key); i >= 0 {
			v := &root.Value.(*hujson.Object).Members[i].Value
			obj, ok := v.Value.(*hujson.Object)
			if !ok {
				return nil, &Error{File: file, Field: key, Msg: "want an object of servers"}
			}
			if indent, multiline := memberIndent(root, indentUnit(root)); multiline && len(obj.Members) == 0 &&
				!bytes.Contains(obj.AfterExtra, []byte("\n")) {
				// "servers": {} in a file laid out over lines: so is
				// what goes into it.
				obj.AfterExtra = hujson.Extra("\n" + indent)
			}
			return v, nil
		}
	}
	if !create {
		return nil, &Error{File: file, Msg: "no servers section"}
	}
	unit := indentUnit(root)
	if err := setMember(root, "servers", []byte("{}"), unit); err != nil {
		return nil, err
	}
	v, err := serversObject(root, file, false)
	if err == nil {
		// Lay the new section out over lines, its closing brace under its
		// key, so that servers added to it get lines of their own.
		if indent, ok := memberIndent(root, unit); ok {
			v.Value.(*hujson.Object).AfterExtra = hujson.Extra("\n" + indent)
		}
	}
	return v, err
}

func findServer(root *hujson.Value, file, name string) (*hujson.Value, int, error) {
	servers, err := serversObject(root, file, false)
	if err != nil {
		return nil, 0, &Error{File: file, Server: name, Msg: ErrNoServer.Error(), Err: ErrNoServer}
	}
	i := memberIndex(servers, name)
	if i < 0 {
		return nil, 0, &Error{File: file, Server: name, Msg: ErrNoServer.Error(), Err: ErrNoServer}
	}
	return servers, i, nil
}

// memberIndex finds the member name of the object v; -1 when absent (or v
// is not an object).
func memberIndex(v *hujson.Value, name string) int {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return -1
	}
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// setMember sets the member name of the object v to the JSON value, in
// place when it exists, else appended in the object's own layout: on a line
// of its own at its siblings' indentation when they are one per line.
func setMember(v *hujson.Value, name string, value []byte, unit string) error {
	obj := v.Value.(*hujson.Object)
	indent, multiline := memberIndent(v, unit)
	if multiline {
		var buf bytes.Buffer
		if err := json.Indent(&buf, value, indent, unit); err != nil {
			return err
		}
		value = buf.Bytes()
	}
	parsed, err := hujson.Parse(value)
	if err != nil {
		return err
	}
	if i := memberIndex(v, name); i >= 0 {
		obj.Members[i].Value.Value = parsed.Value
		return nil
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: parsed.Value},
	}
	switch {
	case multiline:
		m.Name.BeforeExtra = hujson.Extra("\n" + indent)
		// A comment on the old last member's line stays on that line.
		if head, rest, ok := bytes.Cut(obj.AfterExtra, []byte("\n")); ok && len(bytes.TrimSpace(head)) > 0 {
			m.Name.BeforeExtra = hujson.Extra(string(head) + "\n" + indent)
			obj.AfterExtra = hujson.Extra("\n" + string(rest))
		}
	case len(obj.Members) > 0:
		m.Name.BeforeExtra = hujson.Extra(" ")
	}
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		// The old last member had a trailing comma: so does the new one.
		m.Value.AfterExtra = obj.Members[n-1].Value.AfterExtra
		obj.Members[n-1].Value.AfterExtra = nil
	}
	obj.Members = append(obj.Members, m)
	if multiline && !bytes.Contains(obj.AfterExtra, []byte("\n")) {
		obj.AfterExtra = hujson.Extra("\n" + strings.TrimSuffix(indent, unit))
	}
	return nil
}

// memberIndent is the indentation of the object's members (from the last
// one's line), and whether they sit one per line. An empty object's
// members would be indented one unit more than the object's own line.
func memberIndent(v *hujson.Value, unit string) (string, bool) {
	obj := v.Value.(*hujson.Object)
	if n := len(obj.Members); n > 0 {
		before := obj.Members[n-1].Name.BeforeExtra
		i := bytes.LastIndexByte(before, '\n')
		if i < 0 {
			return "", false
		}
		return string(before[i+1:]), true
	}
	// Empty: one unit deeper than the closing brace's line, when the
	// closing brace sits on a line of its own; "{}" stays on one line.
	after := obj.AfterExtra
	if i := bytes.LastIndexByte(after, '\n'); i >= 0 {
		return string(after[i+1:]) + unit, true
	}
	return "", false
}

// indentUnit is one level of the file's indentation: that of its
// top-level members; two spaces when it has none on their own lines.
func indentUnit(root *hujson.Value) string {
	if indent, ok := memberIndent(root, ""); ok && indent != "" {
		return indent
	}
	return "  "
}

// removeMember removes the object's member i with its leading comments; a
// trailing comma after the last member stays after the new last one.
func removeMember(obj *hujson.Object, i int) {
	// A comment on the previous member's line stays there.
	if head, _, ok := bytes.Cut(obj.Members[i].Name.BeforeExtra, []byte("\n")); ok && len(bytes.TrimSpace(head)) > 0 {
		if i+1 < len(obj.Members) {
			next := &obj.Members[i+1].Name
			next.BeforeExtra = append(append(hujson.Extra{}, head...), next.BeforeExtra...)
		} else {
			obj.AfterExtra = append(append(hujson.Extra{}, head...), obj.AfterExtra...)
		}
	}
	if n := len(obj.Members); i == n-1 && i > 0 {
		obj.Members[i-1].Value.AfterExtra = obj.Members[i].Value.AfterExtra
	}
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
}
