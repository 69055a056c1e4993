package termapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/termapi"
	"github.com/mcpx/mcpx/upstream"
)

// echoCatalog is a catalog of one tool that says what it was given.
type echoCatalog struct{}

func (echoCatalog) WaitReady(context.Context) error { return nil }
func (echoCatalog) Catalog() *aggregator.Catalog    { return &aggregator.Catalog{} }
func (echoCatalog) Servers() []upstream.Status      { return nil }
func (echoCatalog) CallTool(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"` + name + ` got ` + strings.ReplaceAll(string(args), `"`, `'`) + `"}]}`), nil
}

func ExampleNew() {
	h, err := termapi.New(&termapi.Options{View: func(profile string) termapi.Catalog {
		if profile != "" {
			return nil // no profiles here
		}
		return echoCatalog{}
	}})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/mcpx/v1/call", "application/json",
		strings.NewReader(`{"name":"fs_read","arguments":{"path":"a.txt"}}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 {"content":[{"type":"text","text":"fs_read got {'path':'a.txt'}"}]}
}
