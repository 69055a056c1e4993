package telemetry

import (
	"context"
	"errors"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestNumbersTotalTheCallMetrics: the dashboard's numbers are the call
// counter and the duration histogram that /metrics exports, per server.
func TestNumbersTotalTheCallMetrics(t *testing.T) {
	ctx := context.Background()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(ctx)
	tel, err := New(nil, mp, Gauges{})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	for _, c := range []struct {
		server, res string
		err         error
	}{
		{"fx", `{"content":[]}`, nil},
		{"fx", `{"content":[],"isError":true}`, nil},
		{"b", "", errors.New("gone")},
	} {
		_, call := tel.StartCall(ctx, c.server, "tools/call", []byte(`{"name":"echo"}`))
		call.End([]byte(c.res), c.err, 0)
	}
	n, err := collectNumbers(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Servers) != 2 || n.Servers[0].Server != "b" || n.Servers[1].Server != "fx" {
		t.Fatalf("servers %+v, want b and fx", n.Servers)
	}
	if fx := n.Servers[1]; fx.Calls != 2 || fx.Errors != 1 || fx.Seconds <= 0 {
		t.Errorf("fx: %+v, want 2 calls, 1 error and some time", fx)
	}
	if n.Total.Calls != 3 || n.Total.Errors != 2 {
		t.Errorf("total %+v, want 3 calls, 2 errors", n.Total)
	}
	if n.TokensListed != 0 || n.TokensSaved() != 0 {
		t.Errorf("tokens before any listing: %+v", n)
	}
	tel.ProxyTokens(ctx, 1000, 40) // a listing through the proxy
	tel.ProxyTokens(ctx, 0, 60)    // an answer of the proxy
	if n, _ = collectNumbers(ctx, r); n.TokensListed != 1000 || n.TokensServed != 100 || n.TokensSaved() != 900 {
		t.Errorf("tokens %d listed, %d served, %d saved; want 1000, 100, 900", n.TokensListed, n.TokensServed, n.TokensSaved())
	}
	tel.ProxyTokens(ctx, 0, 5000)
	if n, _ = collectNumbers(ctx, r); n.TokensSaved() != 0 {
		t.Errorf("answers that cost more than the listing saved %d", n.TokensSaved())
	}
	var none *Providers
	if _, err := none.Numbers(ctx); !errors.Is(err, ErrNoMetrics) {
		t.Errorf("Numbers without a reader: %v, want ErrNoMetrics", err)
	}
}
