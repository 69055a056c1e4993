package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/config"
)

// cacheFormat is bumped when the file layout, or what a file holds,
// changes; a file of another format is stale and ignored. 2: terminal
// commands declare sampling, elicitation and roots as serve does, so a
// catalog a terminal command remembered before may lack the tools that
// servers list only then.
//
// Instructions did not bump it: a file without them reads as a server
// that gave none, which is all an older mcpx knew, and the next connect
// writes them (the file then differs). A bump would instead throw away
// every remembered catalog, and so start every lazy server once again
// to learn it; and an older mcpx still reads a newer file.
const cacheFormat = 2

// Remembered is what a server said the last time it connected: enough to
// list its capabilities before it is up again.
type Remembered struct {
	Format          int                `json:"format"`
	Key             string             `json:"key"`
	Saved           time.Time          `json:"saved"` // when written; the catalog is unchanged since
	ServerInfo      mcp.Implementation `json:"serverInfo"`
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    json.RawMessage    `json:"capabilities,omitempty"`
	Tools           []json.RawMessage  `json:"tools"`
	Resources       []json.RawMessage  `json:"resources"`
	Templates       []json.RawMessage  `json:"resourceTemplates"`
	Prompts         []json.RawMessage  `json:"prompts"`
	// Instructions is what the server said about how to use it, cleaned
	// and cut as [Client.Instructions] returns it; absent when it said
	// nothing (or the file is older than the field).
	Instructions string `json:"instructions,omitempty"`
	// BothEras says the server listed versions of both eras when it was
	// last asked (server/discover, under protocol auto): its modern
	// clients are served in that era over a second connection.
	BothEras bool `json:"bothEras,omitempty"`

	mark fileMark // the file as read or written
}

// fileMark tells a cache file's content without holding it: when it was
// saved and the SHA-256 of its bytes. A save that would write the same
// bytes again is skipped.
type fileMark struct {
	saved time.Time
	sum   [sha256.Size]byte
}

// Catalog returns the remembered lists.
func (r *Remembered) Catalog() Catalog {
	return Catalog{Tools: r.Tools, Resources: r.Resources, ResourceTemplates: r.Templates, Prompts: r.Prompts}
}

// CacheKey identifies a server's config entry: what decides which server
// runs and so what it lists (transport, command, args, env, cwd, url,
// headers). Settings of mcpx's own (prefix, filters, timeout, lazy) do not
// change it, so turning them does not forget the catalog. Secrets go into
// the hash only, never into a file name or the file.
func CacheKey(s config.Server) string {
	b, _ := json.Marshal(struct {
		Name, Transport, Command, Cwd, URL string
		Args                               []string
		Env, Headers                       map[string]string
	}{s.Name, string(s.Transport), s.Command, s.Cwd, s.URL, s.Args, s.Env, s.Headers})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// DefaultCacheDir is $XDG_CACHE_HOME/mcpx or the OS equivalent; "" when the
// OS has none.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpx")
}

// cacheFile is where the server's catalog is remembered: its name (made
// safe for a file name) and the key's first 16 hex digits.
func cacheFile(dir string, s config.Server) string {
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s.Name)
	if len(name) > 48 {
		name = name[:48]
	}
	return filepath.Join(dir, name+"-"+CacheKey(s)[:16]+".json")
}

// LoadRemembered reads the server's remembered catalog from dir. A missing
// file is (nil, nil); a corrupt or stale one is an error the caller logs
// at debug level and otherwise ignores.
func LoadRemembered(dir string, s config.Server) (*Remembered, error) {
	if dir == "" {
		return nil, nil
	}
	file := cacheFile(dir, s)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var r Remembered
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", file, err)
	}
	switch {
	case r.Format != cacheFormat:
		return nil, fmt.Errorf("%s is stale: format %d, want %d", file, r.Format, cacheFormat)
	case r.Key != CacheKey(s):
		return nil, fmt.Errorf("%s is stale: written for another config entry", file)
	}
	for _, l := range [][]json.RawMessage{r.Tools, r.Resources, r.Templates, r.Prompts} {
		for _, item := range l {
			if len(item) == 0 || item[0] != '{' {
				return nil, fmt.Errorf("%s is corrupt: a list item is not an object", file)
			}
		}
	}
	// The file is mcpx's own, but it is the server's text all the same,
	// and anything may have written the file: hold it to what a
	// connection would keep.
	r.Instructions = cleanInstructions(r.Instructions)
	r.mark = fileMark{r.Saved, sha256.Sum256(data)}
	return &r, nil
}

// encode returns the bytes of r's file for the server s.
func (r *Remembered) encode(s config.Server) ([]byte, error) {
	r.Format = cacheFormat
	r.Key = CacheKey(s)
	return json.Marshal(r)
}

// saveRemembered writes r for the server into dir atomically (temp file and
// rename), so a reader never sees half a file.
func saveRemembered(dir string, s config.Server, r *Remembered) error {
	data, err := r.encode(s)
	if err != nil {
		return err
	}
	r.mark = fileMark{r.Saved, sha256.Sum256(data)}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), cacheFile(dir, s))
}
