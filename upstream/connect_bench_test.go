package upstream_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// BenchmarkConnectRemote: connecting to the reference server over
// streamable HTTP behind a proxy that holds each request for a fixed
// delay, a server far away. It reports a connect's time, from the first
// request to a complete catalog, in those delays: the round trips it
// takes (initialize, notifications/initialized, the four lists) plus the
// server's own work.
//
//	go test -run '^$' -bench ConnectRemote -benchtime 10x ./upstream/
func BenchmarkConnectRemote(b *testing.B) {
	const delay = 25 * time.Millisecond
	port := startEverything(b, "streamableHttp")
	target, _ := url.Parse("http://localhost:" + strconv.Itoa(port))
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // event streams pass as they come
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet { // the GET stream is not on the way to the catalog
			time.Sleep(delay)
		}
		proxy.ServeHTTP(w, r)
	}))
	b.Cleanup(far.Close)
	srv := config.Server{Name: "far", Transport: config.TransportHTTP, URL: far.URL + "/mcp", Enabled: true, Timeout: 20 * time.Second}
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		c := upstream.New(srv, fastOptions())
		c.Start(context.Background())
		<-c.Ready()
		total += time.Since(start)
		if st := c.Status(); st.State != upstream.StateConnected || st.Tools == 0 || st.Prompts == 0 {
			b.Fatalf("status %+v, want connected with the whole catalog", st)
		}
		c.Close()
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(delay), "delays/connect")
}
