package config

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
	"go.yaml.in/yaml/v3"
)

// The generic tree is made of Go maps, which forget the order of their
// keys. The order of the servers matters: with `prefix: ""` two servers
// may offer the same name, and the one configured first keeps it. So the
// file is read a second time, by each format's ordered reader, for the
// names in "servers" and "mcpServers" as they appear.

// serverSections are the keys that hold servers.
var serverSections = []string{"servers", "mcpServers"}

// serverOrder returns the server names of the file in the order they are
// first written, both sections together. It runs after decode succeeded;
// on data its reader cannot follow it returns what it has, and the
// names it misses are put after, sorted (see orderNames).
func serverOrder(file string, data []byte) []string {
	var o nameOrder
	switch formatOf(file) {
	case formatYAML:
		o.yaml(data)
	case formatTOML:
		o.toml(data)
	default:
		o.json(data)
	}
	return o.names
}

type nameOrder struct {
	names []string
	seen  map[string]bool
}

func (o *nameOrder) add(name string) {
	if o.seen[name] {
		return
	}
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	o.seen[name] = true
	o.names = append(o.names, name)
}

func (o *nameOrder) json(data []byte) {
	std, err := standardJSON(data)
	if err != nil {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		key, ok := stringToken(dec)
		if !ok {
			return
		}
		t, err := dec.Token()
		if err != nil {
			return
		}
		if t != json.Delim('{') || !slices.Contains(serverSections, key) {
			if skipJSON(dec, t) != nil {
				return
			}
			continue
		}
		for dec.More() {
			name, ok := stringToken(dec)
			if !ok {
				return
			}
			t, err := dec.Token()
			if err != nil || skipJSON(dec, t) != nil {
				return
			}
			o.add(name)
		}
		if _, err := dec.Token(); err != nil { // the section's '}'
			return
		}
	}
}

// skipJSON reads the rest of the value that starts with t.
func skipJSON(dec *json.Decoder, t json.Token) error {
	depth := 0
	for {
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		var err error
		if t, err = dec.Token(); err != nil {
			return err
		}
	}
}

func stringToken(dec *json.Decoder) (string, bool) {
	t, err := dec.Token()
	s, ok := t.(string)
	return s, err == nil && ok
}

func (o *nameOrder) yaml(data []byte) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return
	}
	top := resolve(doc.Content[0])
	if top.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if !slices.Contains(serverSections, top.Content[i].Value) {
			continue
		}
		section := resolve(top.Content[i+1])
		if section.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(section.Content); j += 2 {
			o.add(section.Content[j].Value)
		}
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// toml follows tables ([servers.a]), dotted keys (servers.a.command = ...)
// and inline tables (servers = { a = {...} }) in the order they appear.
func (o *nameOrder) toml(data []byte) {
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyPath(e.Key())
			o.tomlPath(table)
		case unstable.KeyValue:
			path := append(slices.Clone(table), keyPath(e.Key())...)
			o.tomlPath(path)
			if len(path) == 1 && slices.Contains(serverSections, path[0]) && e.Value().Kind == unstable.InlineTable {
				kvs := e.Value().Children()
				for kvs.Next() {
					if kv := kvs.Node(); kv.Kind == unstable.KeyValue {
						if k := keyPath(kv.Key()); len(k) > 0 {
							o.add(k[0])
						}
					}
				}
			}
		}
	}
}

func (o *nameOrder) tomlPath(path []string) {
	if len(path) >= 2 && slices.Contains(serverSections, path[0]) {
		o.add(path[1])
	}
}

func keyPath(it unstable.Iterator) []string {
	var path []string
	for it.Next() {
		path = append(path, string(it.Node().Data))
	}
	return path
}

// orderNames returns the keys of m in the order given, then any the order
// does not name, sorted.
func orderNames[V any](m map[string]V, order []string) []string {
	names := make([]string, 0, len(m))
	for _, n := range order {
		if _, ok := m[n]; ok {
			names = append(names, n)
		}
	}
	if len(names) == len(m) {
		return names
	}
	var rest []string
	for n := range m {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.SortFunc(rest, strings.Compare)
	return append(names, rest...)
}
