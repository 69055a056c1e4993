package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestTerminalSeesClientCatalog: the reference server lists some tools
// only to a client that declared sampling, elicitation or roots. mcpx
// declares them in every mode, so `list tools`, `servers` and `doctor`
// count the tools a client of `serve --stdio` gets. Such a tool called
// from the terminal, where no client can answer the server's sampling
// request, fails saying so.
func TestTerminalSeesClientCatalog(t *testing.T) {
	cfg := writeConfig(t, map[string]any{
		"servers":      map[string]any{"everything": map[string]any{"command": "node", "args": []string{requireEverything(t)}, "timeout": "60s"}},
		"readyTimeout": "60s",
	})

	c := startServe(t, cfg, "--expose", "direct")
	c.initialize()
	res, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatalf("tools/list: %s", e.Message)
	}
	var served struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(res, &served); err != nil {
		t.Fatal(err)
	}
	var clientSees []string
	for _, tool := range served.Tools {
		if strings.HasPrefix(tool.Name, "everything_") {
			clientSees = append(clientSees, tool.Name)
		}
	}
	if !slices.Contains(clientSees, "everything_trigger-sampling-request") {
		t.Fatalf("a client of serve is not offered the sampling tool: %q", clientSees)
	}

	out, errOut, code := runMCPX(t, "list", "tools", "--json", "--config", cfg)
	var listed []struct{ Name, Server string }
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 0 {
		t.Fatalf("list tools --json: exit %d, %v\n%s", code, err, errOut)
	}
	var terminalSees []string
	for _, tool := range listed {
		if tool.Server == "everything" {
			terminalSees = append(terminalSees, tool.Name)
		}
	}
	slices.Sort(clientSees)
	slices.Sort(terminalSees)
	if !slices.Equal(terminalSees, clientSees) {
		t.Errorf("list tools shows %d tools of everything, a client gets %d:\nterminal %q\nclient   %q",
			len(terminalSees), len(clientSees), terminalSees, clientSees)
	}

	out, errOut, _ = runMCPX(t, "servers", "--json", "--config", cfg)
	if n := serversByName(t, out)["everything"].Tools; n != len(clientSees) {
		t.Errorf("servers counts %d tools of everything, a client gets %d\n%s", n, len(clientSees), errOut)
	}

	out, errOut, _ = runMCPX(t, "doctor", "--json", "--config", cfg)
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Servers) != 1 {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
	}
	if n := rep.Servers[0].Tools; n != len(clientSees) {
		t.Errorf("doctor counts %d tools of everything, a client gets %d", n, len(clientSees))
	}

	out, errOut, code = runMCPX(t, "call", "everything_trigger-sampling-request", `{"prompt":"hi"}`, "--config", cfg)
	if code != 1 || !strings.Contains(out+errOut, "no MCP client to answer sampling/createMessage") {
		t.Errorf("a sampling tool called from the terminal: exit %d, want 1 and an error saying no client can answer\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
