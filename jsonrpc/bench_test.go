package jsonrpc

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// The baselines are the hand-built writers this package replaces, as they
// were in aggregator/outbox.go (answers), aggregator/clientcalls.go
// (requests and notifications to the client) and aggregator/core
// (errors). Each benchmark runs baseline and encoder in the same run and
// reports the ratio of their times.

func baselineAnswer(b []byte, id, result json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func baselineError(id json.RawMessage, e *Error) []byte {
	b := make([]byte, 0, len(id)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = fmt.Appendf(b, "%d", e.Code)
	b = append(b, `,"message":`...)
	msg, _ := json.Marshal(e.Message)
	b = append(b, msg...)
	return append(b, "}}"...)
}

func baselineQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func baselineNotification(method string, params json.RawMessage) []byte {
	msg := []byte(`{"jsonrpc":"2.0","method":` + baselineQuote(method))
	if len(params) > 0 && string(params) != "null" {
		msg = append(append(msg, `,"params":`...), params...)
	}
	return append(msg, '}')
}

func baselineRequest(id, method string, params json.RawMessage) []byte {
	msg := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":` + baselineQuote(method))
	if len(params) > 0 && string(params) != "null" {
		msg = append(append(msg, `,"params":`...), params...)
	}
	return append(msg, '}')
}

var sink []byte

// compare times base and enc in alternating blocks, so that the load of
// a shared machine weighs on both alike, and reports each one's ns/op
// and their ratio (enc/base: below 1 is faster than the baseline).
func compare(b *testing.B, base, enc func()) {
	const block = 256
	var tb, te time.Duration
	for b.Loop() {
		t0 := time.Now()
		for range block {
			base()
		}
		t1 := time.Now()
		for range block {
			enc()
		}
		tb, te = tb+t1.Sub(t0), te+time.Since(t1)
	}
	n := float64(b.N * block)
	b.ReportMetric(float64(tb.Nanoseconds())/n, "baseline-ns/op")
	b.ReportMetric(float64(te.Nanoseconds())/n, "jsonrpc-ns/op")
	b.ReportMetric(float64(te)/float64(tb), "ratio")
}

func BenchmarkAppendResult(b *testing.B) {
	id := json.RawMessage(`"mcpx-42"`)
	result := json.RawMessage(`{"content":[{"type":"text","text":"hello, world"}],"isError":false}`)
	buf := make([]byte, 0, 256)
	compare(b, func() { sink = baselineAnswer(buf[:0], id, result) },
		func() { sink = AppendResult(buf[:0], id, result) })
}

func BenchmarkAppendError(b *testing.B) {
	id := json.RawMessage(`17`)
	e := &Error{Code: CodeMethodNotFound, Message: "unknown tool everything_nope"}
	compare(b, func() { sink = baselineError(id, e) },
		func() { sink = AppendError(make([]byte, 0, len(id)+64), id, e) })
}

func BenchmarkAppendNotification(b *testing.B) {
	params := json.RawMessage(`{"progressToken":"t-1","progress":3,"total":10}`)
	compare(b, func() { sink = baselineNotification("notifications/progress", params) },
		func() { sink = AppendNotification(make([]byte, 0, 40+len(params)), "notifications/progress", params) })
}

func BenchmarkAppendRequest(b *testing.B) {
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}`)
	compare(b, func() { sink = baselineRequest(`"mcpx-7"`, "sampling/createMessage", params) },
		func() {
			sink = AppendRequest(make([]byte, 0, 64+len(params)), json.RawMessage(`"mcpx-7"`), "sampling/createMessage", params)
		})
}
