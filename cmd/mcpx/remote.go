package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/upstream"
)

// remote is a running `mcpx serve --http`, asked through its terminal API
// (/mcpx/v1/) by list, call and servers given --server-url, so that a
// script reuses its warm upstreams instead of starting its own.
type remote struct {
	base  string // http://host:port[/prefix], without /mcp
	token string
}

// addServerURL adds --server-url to a command.
func addServerURL(cmd *cobra.Command, url *string) {
	// Backquotes in a usage name the flag's argument (pflag): only URL has them.
	cmd.Flags().StringVar(url, "server-url", "", "ask the mcpx serve --http running at `URL` instead of starting the servers (else MCPX_SERVER_URL; token from MCPX_HTTP_TOKEN)")
}

// remoteFor returns the remote the command should ask, or nil for none.
func remoteFor(flag string) *remote {
	url := flag
	if url == "" {
		url = os.Getenv("MCPX_SERVER_URL")
	}
	if url == "" {
		return nil
	}
	url = strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/mcp")
	return &remote{base: url, token: strings.TrimSpace(os.Getenv("MCPX_HTTP_TOKEN"))}
}

func (r *remote) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("--server-url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mcpx at %s: %w", r.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("mcpx at %s: %w", r.base, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("mcpx at %s: %s", r.base, e.Error)
		}
		return nil, fmt.Errorf("mcpx at %s: %s: %s", r.base, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

func (r *remote) catalog(ctx context.Context) (*aggregator.Catalog, error) {
	b, err := r.do(ctx, http.MethodGet, "/mcpx/v1/catalog", nil)
	if err != nil {
		return nil, err
	}
	var c aggregator.Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("mcpx at %s: the catalog: %w", r.base, err)
	}
	return &c, nil
}

func (r *remote) servers(ctx context.Context) ([]upstream.Status, error) {
	b, err := r.do(ctx, http.MethodGet, "/mcpx/v1/servers", nil)
	if err != nil {
		return nil, err
	}
	var st []upstream.Status
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("mcpx at %s: the servers: %w", r.base, err)
	}
	return st, nil
}

func (r *remote) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	body, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	return r.do(ctx, http.MethodPost, "/mcpx/v1/call", body)
}
