package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

var updateWire = flag.Bool("update", false, "rewrite the want sections of ../../testdata/wire/*.txtar from what mcpx answers")

const wireDir = "../../testdata/wire"

// A wire golden is a txtar archive whose comment says what it pins, with
// these sections:
//
//	config  mcpx's config; $FIXTURE is the fixture server's path
//	send    the client's messages, one per line, in order
//	want    mcpx's answers to those with an id, one per line, in order
//
// TestWire runs each against `mcpx serve --stdio`: it sends a message,
// and when it has an id waits for its answer before the next, so that
// the script is one conversation. Answers are compared as JSON with the
// values that differ from run to run (volatile) replaced; what mcpx
// sends unasked (notifications) is not part of it. -update rewrites want.
func TestWire(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(wireDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no wire goldens in %s (%v)", wireDir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			section := func(name string) []byte {
				for _, f := range ar.Files {
					if f.Name == name {
						return f.Data
					}
				}
				return nil
			}
			cfgText := section("config")
			send := section("send")
			if cfgText == nil || send == nil {
				t.Fatalf("%s: want config and send sections", path)
			}
			cfg := filepath.Join(t.TempDir(), "config.json")
			fixtureJSON, _ := json.Marshal(fixture)
			cfgText = bytes.ReplaceAll(cfgText, []byte(`"$FIXTURE"`), fixtureJSON)
			if err := os.WriteFile(cfg, cfgText, 0o600); err != nil {
				t.Fatal(err)
			}
			got := converse(t, cfg, send)
			if *updateWire {
				set := false
				for i, f := range ar.Files {
					if f.Name == "want" {
						ar.Files[i].Data, set = got, true
					}
				}
				if !set {
					ar.Files = append(ar.Files, txtar.File{Name: "want", Data: got})
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := section("want")
			gotLines, wantLines := strings.Split(strings.TrimSpace(string(got)), "\n"), strings.Split(strings.TrimSpace(string(want)), "\n")
			for i := range max(len(gotLines), len(wantLines)) {
				var g, w string
				if i < len(gotLines) {
					g = gotLines[i]
				}
				if i < len(wantLines) {
					w = wantLines[i]
				}
				if g != w {
					t.Errorf("answer %d:\n got %s\nwant %s", i+1, g, w)
				}
			}
		})
	}
}

// converse runs the script against a new `mcpx serve --stdio` over cfg
// and returns its answers, normalised, one per line.
func converse(t *testing.T, cfg string, script []byte) []byte {
	t.Helper()
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		if !waitExit(cmd, 15*time.Second) {
			t.Error("mcpx did not exit within 15s of its stdin closing")
		}
	}()
	msgs := make(chan []byte)
	go func() {
		defer close(msgs)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				msgs <- line
			}
			if err != nil {
				_, _ = io.Copy(io.Discard, r)
				return
			}
		}
	}()
	var answers bytes.Buffer
	for _, line := range bytes.Split(script, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("script line %s: %v", line, err)
		}
		if _, err := in.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		if m.ID == nil {
			continue
		}
		answers.Write(answerTo(t, msgs, m.ID))
		answers.WriteByte('\n')
	}
	return answers.Bytes()
}

// answerTo waits for the answer with id among msgs, skipping what mcpx
// sends unasked, and returns it normalised.
func answerTo(t *testing.T, msgs <-chan []byte, id json.RawMessage) []byte {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case msg, ok := <-msgs:
			if !ok {
				t.Fatalf("stdout ended before the answer to id %s", id)
			}
			var m struct {
				ID     json.RawMessage
				Method string
			}
			if json.Unmarshal(msg, &m) != nil || m.Method != "" || string(m.ID) != string(id) {
				continue
			}
			return normalise(t, msg)
		case <-timeout:
			t.Fatalf("no answer to id %s within 30s", id)
		}
	}
}

// volatile are the members whose values differ from run to run or from
// machine to machine; normalise writes their kind in their place.
var volatile = map[string]string{
	"requestState": "<requestState>",
	"version":      "<version>", // mcpx's own, in serverInfo
}

// normalise re-encodes an answer with sorted keys and the volatile
// values replaced.
func normalise(t *testing.T, msg []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(msg, &v); err != nil {
		t.Fatalf("answer %s: %v", msg, err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if rep, ok := volatile[k]; ok {
					if _, isString := e.(string); isString {
						x[k] = rep
						continue
					}
				}
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // <version>, not \u003cversion\u003e
	if err := enc.Encode(walk(v)); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
