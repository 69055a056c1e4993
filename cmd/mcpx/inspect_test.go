package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInfo(t *testing.T) {
	cfg := everythingConfig(t, false)

	// A tool by its own name: the description and one row per argument
	// (name, type, required, description), required first.
	out, errOut, code := runCLI(t, "", "info", "get-sum", "--config", cfg)
	if code != 0 {
		t.Fatalf("info get-sum: exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "everything_get-sum: tool of server everything (its own name: get-sum)\n") {
		t.Errorf("info get-sum head:\n%s", out)
	}
	for _, row := range []string{"a\tnumber\tyes\tFirst number", "b\tnumber\tyes\tSecond number"} {
		if !strings.Contains(out, row+"\n") {
			t.Errorf("info get-sum: no row %q in\n%s", row, out)
		}
	}

	// A prompt's arguments.
	out, _, code = runCLI(t, "", "info", "everything_args-prompt", "--config", cfg)
	if code != 0 || !strings.Contains(out, "city\tyes\tName of the city\n") || !strings.Contains(out, "state\tno\t") {
		t.Errorf("info args-prompt: exit %d\n%s", code, out)
	}

	// A resource by its name: its metadata; --json the object with its server.
	out, _, code = runCLI(t, "", "info", "features.md", "--json", "--config", cfg)
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); code != 0 || err != nil ||
		obj["uri"] != "demo://resource/static/document/features.md" || obj["server"] != "everything" || obj["mimeType"] != "text/markdown" {
		t.Errorf("info features.md --json: exit %d, %v\n%s", code, err, out)
	}

	// Nothing by that name: exit 2 with the closest names.
	_, errOut, code = runCLI(t, "", "info", "get-summ", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "did you mean everything_get-sum") {
		t.Errorf("info get-summ: exit %d, stderr %q", code, errOut)
	}
}

func TestReadAndGet(t *testing.T) {
	cfg := everythingConfig(t, false)

	// Text to stdout, from a URI a template matches.
	out, errOut, code := runCLI(t, "", "read", "demo://resource/dynamic/text/3", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "Resource 3: This is a plaintext resource") {
		t.Errorf("read text: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A blob needs -o, and is written there decoded.
	blob := "demo://resource/dynamic/blob/2"
	out, errOut, code = runCLI(t, "", "read", blob, "--config", cfg)
	if code != 2 || out != "" || !strings.Contains(errOut, "is binary (text/plain, ") || !strings.Contains(errOut, "-o FILE") {
		t.Errorf("read blob without -o: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	file := filepath.Join(t.TempDir(), "blob.bin")
	if _, errOut, code = runCLI(t, "", "read", blob, "-o", file, "--config", cfg); code != 0 {
		t.Fatalf("read blob -o: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(b), "Resource 2: This is a base64 blob") {
		t.Errorf("read -o wrote %q (%v), want the decoded blob", b, err)
	}

	// A prompt's messages with --arg; a missing required argument is a
	// usage error naming it.
	out, errOut, code = runCLI(t, "", "get", "args-prompt", "--arg", "city=Paris", "--config", cfg)
	if code != 0 || out != "user:\nWhat's weather in Paris?\n" {
		t.Errorf("get args-prompt: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = runCLI(t, "", "get", "args-prompt", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "needs --arg city=") {
		t.Errorf("get without city: exit %d, stderr %q", code, errOut)
	}
	out, _, code = runCLI(t, "", "get", "everything_simple-prompt", "--json", "--config", cfg)
	var res struct {
		Messages []struct{ Role string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Errorf("get --json: exit %d, %v\n%s", code, err, out)
	}
}
