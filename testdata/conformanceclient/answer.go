package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
)

// answeringClient runs `mcpx serve --stdio` and speaks to it as a legacy
// MCP client that declares elicitation and accepts every elicitation/create
// with content: a question an upstream asks in the middle of a call (by a
// server-initiated request, or by an input_required result mcpx turns into
// one) reaches this client and its answer goes back. It calls each tool in
// turn; a call that fails is logged, as the suite expects some to be.
func (h *harness) answeringClient(ctx context.Context, tools []string, content map[string]any) error {
	cmd := exec.CommandContext(ctx, h.mcpx, "--config", h.config, "serve", "--stdio")
	cmd.Env = h.env
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mcpx serve --stdio: %w", err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	c := &stdioClient{in: stdin, out: bufio.NewReaderSize(stdout, 1<<20), content: content}
	if _, err := c.request("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "mcpx-conformanceclient", "version": "1.0.0"},
	}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if err := c.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return err
	}
	for _, name := range tools {
		if _, err := c.request("tools/call", map[string]any{"name": name, "arguments": map[string]any{}}); err != nil {
			log.Printf("call %s: %v", name, err)
		}
	}
	return nil
}

// stdioClient is a JSON-RPC client on newline-delimited stdio, one
// request at a time, answering the requests mcpx sends meanwhile.
type stdioClient struct {
	in      io.Writer
	out     *bufio.Reader
	id      int
	content map[string]any // the content of every accepted elicitation
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (c *stdioClient) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.in.Write(append(b, '\n'))
	return err
}

// request sends one request and reads until its answer, answering
// mcpx's own requests on the way.
func (c *stdioClient) request(method string, params any) (json.RawMessage, error) {
	c.id++
	id := c.id
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	want := fmt.Sprint(id)
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("read %s's answer: %w", method, err)
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("mcpx wrote a line that is not JSON: %q", line)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			if err := c.answer(m); err != nil {
				return nil, err
			}
		case m.Method != "":
			// A notification: nothing to do.
		case string(m.ID) == want:
			if m.Error != nil {
				return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, nil
		}
	}
}

// answer answers a request from mcpx: elicitation is accepted with the
// scenario's content; anything else is refused as not supported.
func (c *stdioClient) answer(m message) error {
	if m.Method == "elicitation/create" {
		return c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"result": map[string]any{"action": "accept", "content": c.content}})
	}
	return c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID,
		"error": map[string]any{"code": -32601, "message": "the conformance client does not support " + m.Method}})
}
