package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/charmbracelet/log"
)

// minSecretLen keeps very short values (PORT=80, DEBUG=1) from being
// "redacted" all over every log line; values that short are not secrets.
const minSecretLen = 4

// redactor replaces every known secret with a marker. A config reload
// adds the new config's secrets (and forgets none).
type redactor struct {
	mu      sync.RWMutex
	secrets []string
	r       *strings.Replacer
}

func newRedactor(secrets []string) *redactor {
	r := &redactor{}
	r.add(secrets)
	return r
}

// add makes r replace more secrets too.
func (r *redactor) add(more []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Each secret also as a JSON string spells it (a quote, a backslash or
	// a control character escaped), since raw JSON passes through Redact
	// too: an upstream's error data, a tool's error result.
	s := append([]string(nil), r.secrets...)
	for _, v := range more {
		if len(v) < minSecretLen {
			continue
		}
		s = append(s, v)
		for _, html := range []bool{false, true} {
			if esc := jsonEscape(v, html); esc != v {
				s = append(s, esc)
			}
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(s, func(i, j int) bool {
		if len(s[i]) != len(s[j]) {
			return len(s[i]) > len(s[j])
		}
		return s[i] < s[j]
	})
	s = slices.Compact(s)
	var pairs []string
	for _, v := range s {
		pairs = append(pairs, v, "[redacted]")
	}
	r.secrets = s
	if len(pairs) > 0 {
		r.r = strings.NewReplacer(pairs...)
	}
}

// jsonEscape is v as the inside of a JSON string, with <, > and & escaped
// (as Go encoders write them) or not (as most others do).
func jsonEscape(v string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(v) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

func (r *redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.r
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// redactWriter is the decorator that keeps secrets and terminal control
// sequences out of every log line, whoever wrote it: mcpx, an upstream's
// stderr, or a library. The logger writes plain text (it styles only a
// terminal it can see, and this writer hides it), so every control
// character but the newline and tab of the log format came from the
// logged text and is escaped.
type redactWriter struct {
	mu sync.Mutex
	w  io.Writer
	r  *redactor
}

func (w *redactWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := io.WriteString(w.w, escapeControls(w.r.Redact(string(p)), "\n\t")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// newLogger builds the one logger of the process. Logs go to stderr, or
// to file when one is given; never to stdout, which in serve mode carries
// only JSON-RPC.
func newLogger(stderr io.Writer, level, file string, red *redactor) (*log.Logger, func(), error) {
	lvl, err := log.ParseLevel(level)
	if err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	out, closeFn := stderr, func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		out, closeFn = f, func() { f.Close() }
	}
	logger := log.NewWithOptions(&redactWriter{w: out, r: red}, log.Options{
		Level:           lvl,
		ReportTimestamp: true,
		Prefix:          "mcpx",
	})
	return logger, closeFn, nil
}

// sourceKey is the attribute with which the libraries name the source of
// their lines (logger.With("server", name)). mcpx shows it as the line's
// prefix, "everything: connected", where a terminal user has always read
// which server spoke.
const sourceKey = "server"

// slogger is logger as the *slog.Logger the libraries take: charm's
// Logger is the slog handler (so lines still go through the redacting
// writer), behind [prefixHandler].
func slogger(logger *log.Logger) *slog.Logger {
	return slog.New(prefixHandler{logger, log.DefaultStyles()})
}

// prefixHandler turns the [sourceKey] attribute a logger is given with
// With into charm's prefix, which replaces "mcpx" at the start of the
// line; every other attribute, and every record, goes to charm's slog
// handler as it is.
//
// The loggers it derives share one set of styles (mcpx's loggers use the
// default ones): charm's With copies them, 3-4 KB a logger, and each
// upstream server's logger is derived so.
type prefixHandler struct {
	*log.Logger
	styles *log.Styles
}

func (h prefixHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	l := h.Logger
	rest := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if a.Key == sourceKey && a.Value.Kind() == slog.KindString {
			l = l.WithPrefix(a.Value.String())
			continue
		}
		rest = append(rest, a)
	}
	if len(rest) > 0 {
		l = l.With(attrArgs(rest)...)
	}
	if l != h.Logger {
		l.SetStyles(h.styles)
	}
	return prefixHandler{l, h.styles}
}

// WithGroup prefixes the group's name, as charm's own WithGroup does.
func (h prefixHandler) WithGroup(name string) slog.Handler {
	if p := h.GetPrefix(); p != "" {
		name = p + "." + name
	}
	l := h.WithPrefix(name)
	l.SetStyles(h.styles)
	return prefixHandler{l, h.styles}
}

// attrArgs is attrs as the key-value list charm's With takes, as its own
// WithAttrs makes it.
func attrArgs(attrs []slog.Attr) []any {
	kv := make([]any, 0, 2*len(attrs))
	for _, a := range attrs {
		kv = append(kv, a.Key, a.Value)
	}
	return kv
}
