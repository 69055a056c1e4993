package telemetry

import (
	"context"
	"errors"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Numbers are the totals of the call metrics, per upstream server, as
// /metrics exports them at the moment they are read: what the dashboard
// shows beside the series a scraper keeps.
type Numbers struct {
	// Servers are the totals per server, sorted by name.
	Servers []ServerNumbers
	// Total adds them up.
	Total ServerNumbers
	// TokensListed and TokensServed are MetricProxyTokens' two kinds:
	// what the tool listings clients got through the proxy would have
	// cost in full, and what they and the proxy's answers cost.
	TokensListed, TokensServed int64
}

// TokensSaved is what the proxy saved its clients, in tokens: none when
// its answers cost more than the listings they replaced.
func (n Numbers) TokensSaved() int64 { return max(0, n.TokensListed-n.TokensServed) }

// ServerNumbers are one server's totals since mcpx started.
type ServerNumbers struct {
	Server string
	// Calls counts the calls answered (mcpx.calls), Errors those whose
	// outcome was error or isError.
	Calls, Errors int64
	// Seconds is the time the calls took, summed (the sum of
	// mcp.client.operation.duration): Seconds/Calls is the mean latency.
	Seconds float64
}

// MeanMS is the mean latency in milliseconds; 0 without calls.
func (n ServerNumbers) MeanMS() float64 {
	if n.Calls == 0 {
		return 0
	}
	return n.Seconds / float64(n.Calls) * 1000
}

// ErrNoMetrics is returned by [Providers.Numbers] when no metrics are
// pulled (Setup without Options.Pull).
var ErrNoMetrics = errors.New("telemetry: no metrics are collected here")

// Numbers reads the call metrics now, from the reader /metrics is served
// from. It is safe for concurrent use, with scrapes as well.
func (p *Providers) Numbers(ctx context.Context) (Numbers, error) {
	if p == nil || p.pull == nil {
		return Numbers{}, ErrNoMetrics
	}
	return collectNumbers(ctx, p.pull)
}

func collectNumbers(ctx context.Context, r *sdkmetric.ManualReader) (Numbers, error) {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		return Numbers{}, err
	}
	var out Numbers
	by := map[string]*ServerNumbers{}
	get := func(s string) *ServerNumbers {
		if by[s] == nil {
			by[s] = &ServerNumbers{Server: s}
		}
		return by[s]
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if m.Name == MetricProxyTokens {
					for _, pt := range d.DataPoints {
						switch kind, _ := pt.Attributes.Value(AttrTokens); kind.AsString() {
						case TokensListed:
							out.TokensListed += pt.Value
						case TokensServed:
							out.TokensServed += pt.Value
						}
					}
					continue
				}
				if m.Name != MetricCalls {
					continue
				}
				for _, pt := range d.DataPoints {
					server, _ := pt.Attributes.Value(AttrServer)
					n := get(server.AsString())
					n.Calls += pt.Value
					if o, _ := pt.Attributes.Value(AttrOutcome); o.AsString() == string(OutcomeError) || o.AsString() == string(OutcomeIsError) {
						n.Errors += pt.Value
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name != MetricClientDuration {
					continue
				}
				for _, pt := range d.DataPoints {
					server, _ := pt.Attributes.Value(AttrServer)
					get(server.AsString()).Seconds += pt.Sum
				}
			}
		}
	}
	for _, n := range by {
		out.Servers = append(out.Servers, *n)
		out.Total.Calls += n.Calls
		out.Total.Errors += n.Errors
		out.Total.Seconds += n.Seconds
	}
	slices.SortFunc(out.Servers, func(a, b ServerNumbers) int {
		switch {
		case a.Server < b.Server:
			return -1
		case a.Server > b.Server:
			return 1
		}
		return 0
	})
	return out, nil
}
