package httpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/httpserve"
	"github.com/mcpx/mcpx/config"
)

// A Handler serves a catalog on a server of the caller's own, here
// net/http/httptest's: a 2026-07-28 client asks it what it serves.
func ExampleNewHandler() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := config.Parse("mcpx.json", []byte(`{"servers": {}}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	agg := aggregator.New(cfg, nil)
	agg.Start(ctx)
	defer agg.Close()
	h, err := httpserve.NewHandler(ctx, "127.0.0.1", agg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var answer struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
			Meta              struct {
				ServerInfo struct{ Name string } `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&answer)
	fmt.Println(resp.StatusCode, answer.Result.Meta.ServerInfo.Name, answer.Result.SupportedVersions[0])
	// Output: 200 mcpx 2026-07-28
}
