package aggregator

import (
	"context"
	"encoding/json"
	"time"
)

// What the proxy saves its clients, in tokens: each tools/list a client
// gets with expose proxy counts what listing every tool would have cost
// it (listed) and what it cost (served), and each answer of the proxy
// tool counts what it cost too, since a client that saw every tool would
// not have asked it. Tokens are estimated as bytes/4, as doctor does: a
// count the same for every model, not any one tokenizer's.

// EstimateTokens is the tokens n bytes of JSON take, as mcpx estimates
// them.
func EstimateTokens(n int) int64 { return int64(n+3) / 4 }

// listFor answers a client's list request, counting what the proxy saved
// it when tools are listed through the proxy alone.
func (a *Aggregator) listFor(ctx context.Context, method string) json.RawMessage {
	res := a.ListResult(method)
	if method != "tools/list" || a.tel == nil || a.exposeDirect() {
		return res
	}
	served := EstimateTokens(len(res))
	if a.isReady() {
		a.tel.ProxyTokens(ctx, EstimateTokens(a.Catalog().listedBytes()), served)
		return res
	}
	// Listed through the proxy before the servers are up (a client lists
	// at once): listing every tool would have waited for them, as expose
	// direct does, and cost what the catalog holds then. The answer's own
	// cost is known now; the listings' are counted together once ready,
	// by one goroutine however many there are.
	a.tel.ProxyTokens(ctx, 0, served)
	if a.early.Add(1) == 1 {
		go a.countEarly(context.WithoutCancel(ctx))
	}
	return res
}

// countEarly waits for the catalog (at most listedWait) and counts every
// listing made before it against it; started by the first of them.
func (a *Aggregator) countEarly(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, listedWait)
	defer cancel()
	a.waitReady(ctx)
	listed := EstimateTokens(a.Catalog().listedBytes())
	// Swap leaves 0, so the next early listing starts a goroutine of its
	// own: none is counted twice or lost.
	a.tel.ProxyTokens(ctx, listed*a.early.Swap(0), 0)
}

// listedWait bounds the wait for the catalog a listing made before it
// was ready is counted against.
const listedWait = 2 * time.Minute

// countProxyAnswer counts what an answer of the proxy tool cost its
// client.
func (a *Aggregator) countProxyAnswer(ctx context.Context, res json.RawMessage) {
	if a.tel != nil && !a.exposeDirect() {
		a.tel.ProxyTokens(ctx, 0, EstimateTokens(len(res)))
	}
}

// listedBytes is the size of a tools/list answer of every tool of c, as
// expose direct lists them (the proxy tool aside). Made once.
func (c *Catalog) listedBytes() int {
	c.listedOnce.Do(func() {
		n := len(`{"tools":[]}`)
		for i, e := range c.Tools {
			if i > 0 {
				n++
			}
			n += len(e.JSON)
		}
		c.listedLen = n
	})
	return c.listedLen
}
