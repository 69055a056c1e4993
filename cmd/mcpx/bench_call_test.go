package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx/mcpx/frame"
)

// The per-call benchmarks put mcpx next to its two baselines, in the same
// run, against the same upstream: the Go fixture (testdata/fixture), a
// small server whose echo costs little, so that what is measured is the
// hop, not the tool.
//
//   - direct: the client talks to the fixture's own pipes;
//   - copy: a relay that only copies bytes both ways between pipes
//     (io.Copy), the least one extra hop can cost;
//   - mcpx: `mcpx serve --stdio`, run in this process like the copy relay,
//     with the tool exposed directly, and through the proxy tool.
//
// Every target is driven by the same client code (callConn), which reuses
// its buffers, so allocations measured in this process per call, minus
// the copy relay's, are mcpx's own.
//
//	go test -run '^$' -bench 'Call(Sequential|Concurrent)' -benchtime 300x ./cmd/mcpx/
//	go test -run '^$' -bench CallLargeResult -benchtime 10x ./cmd/mcpx/

// callConn is a benchmark client on one stdio connection: it writes
// request lines and reads answer lines, reusing its buffers.
type callConn struct {
	w      io.Writer
	r      *frame.Reader
	wmu    sync.Mutex
	close  func()
	pid    int // the process served, when it is one of its own
	server int // the fixture's process behind the connection, where known
}

// echoCall and proxyCall are tools/call requests, the id left to fill in.
const (
	echoCall  = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"message":"hi"}}}` + "\n"
	proxyCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"proxy","arguments":{"action":"call","type":"tool","path":"fx_echo","args":{"message":"hi"}}}}` + "\n"
	bigCall   = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"bytes":%d}}}` + "\n"
)

// send writes one line whole.
func (c *callConn) send(b testing.TB, line []byte) {
	c.wmu.Lock()
	_, err := c.w.Write(line)
	c.wmu.Unlock()
	if err != nil {
		b.Fatalf("write: %v", err)
	}
}

// next returns the next response: its id and the line, valid until the
// next call. Notifications and requests are skipped.
func (c *callConn) next(b testing.TB) (int64, []byte) {
	for {
		line, err := c.r.Next()
		if err != nil {
			b.Fatalf("read: %v", err)
		}
		if id, ok := responseID(line); ok {
			if !bytes.Contains(line[:min(len(line), 64)], []byte(`"result"`)) {
				b.Fatalf("not a result: %.300s", line)
			}
			return id, line
		}
	}
}

// call sends one request and waits for its answer; it returns the
// answer's length.
func (c *callConn) call(b testing.TB, req []byte) int {
	c.send(b, req)
	_, line := c.next(b)
	return len(line)
}

// responseID finds a response's numeric id. Both the fixture and mcpx
// write the id first: {"jsonrpc":"2.0","id":N,"result":...}.
func responseID(line []byte) (int64, bool) {
	const head = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(head)) {
		return 0, false
	}
	rest := line[len(head):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 || bytes.HasPrefix(rest[end:], []byte(`,"method"`)) {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return id, err == nil
}

// handshake initializes the session the client holds.
func (c *callConn) handshake(b testing.TB) {
	c.call(b, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"))
	c.send(b, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"))
}

// startFixture starts the fixture on the given pipes, stops it at
// cleanup and returns its pid.
func startFixture(b testing.TB, stdin io.Reader, stdout io.Writer) int {
	cmd := exec.Command(fixture, "--name", "bench")
	cmd.Stdin, cmd.Stdout = stdin, stdout
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Wait() })
	return cmd.Process.Pid
}

// pipe is os.Pipe, failing the benchmark on error.
func pipe(b testing.TB) (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	return r, w
}

// directConn connects to a fixture's own pipes.
func directConn(b testing.TB) *callConn {
	inR, inW := pipe(b)
	outR, outW := pipe(b)
	pid := startFixture(b, inR, outW)
	inR.Close()
	outW.Close()
	c := &callConn{w: inW, r: frame.NewReader(outR, 0), server: pid}
	b.Cleanup(func() { inW.Close(); outR.Close() })
	c.handshake(b)
	return c
}

// copyConn connects to a fixture through a relay that copies bytes
// between pipes both ways and looks at nothing.
func copyConn(b testing.TB) *callConn {
	cinR, cinW := pipe(b)   // client -> relay
	coutR, coutW := pipe(b) // relay -> client
	finR, finW := pipe(b)   // relay -> fixture
	foutR, foutW := pipe(b) // fixture -> relay
	startFixture(b, finR, foutW)
	finR.Close()
	foutW.Close()
	go func() { _, _ = io.Copy(finW, cinR); finW.Close() }()
	go func() { _, _ = io.Copy(coutW, foutR); coutW.Close() }()
	c := &callConn{w: cinW, r: frame.NewReader(coutR, 0)}
	b.Cleanup(func() { cinW.Close(); coutR.Close(); cinR.Close(); foutR.Close() })
	c.handshake(b)
	return c
}

// mcpxConn runs `mcpx serve --stdio` in this process over pipes, with the
// fixture as server "fx" and expose both, so that fx_echo is served
// directly and through the proxy tool. Results pass whole
// (maxResultBytes off), so that the large-result benchmark measures the
// pass-through against the copy relay, not the cut; a small result never
// reaches the cap's lookup either way.
func mcpxConn(b testing.TB) *callConn {
	c := mcpxServe(b)
	c.handshake(b)
	// The first call waits for the upstream to be ready.
	c.call(b, fmt.Appendf(nil, echoCall, 0, "fx_echo"))
	return c
}

// mcpxServe is mcpxConn before the client has said anything.
func mcpxServe(b testing.TB) *callConn {
	cfg := writeConfig(b, map[string]any{"expose": "both", "maxResultBytes": "off", "servers": map[string]any{"fx": fx()}})
	inR, inW := pipe(b)
	outR, outW := pipe(b)
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"serve", "--stdio", "--config", cfg}, &streams{In: inR, Out: outW, Err: io.Discard})
		outW.Close()
	}()
	c := &callConn{w: inW, r: frame.NewReader(outR, 0)}
	var once sync.Once
	c.close = func() {
		once.Do(func() {
			inW.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				b.Error("mcpx serve did not end after stdin closed")
			}
			inR.Close()
			outR.Close()
		})
	}
	b.Cleanup(c.close)
	return c
}

// allocated is what this process allocated for some calls.
type allocated struct{ allocs, bytes uint64 }

// measure calls each of the targets n times, one target after another,
// and returns per target the allocations (count and bytes) this process
// made meanwhile.
func measure(n int, targets []func()) []allocated {
	out := make([]allocated, len(targets))
	var before, after runtime.MemStats
	for i, f := range targets {
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range n {
			f()
		}
		runtime.ReadMemStats(&after)
		out[i].allocs = after.Mallocs - before.Mallocs
		out[i].bytes = after.TotalAlloc - before.TotalAlloc
	}
	return out
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// BenchmarkCallSequential: one tools/call of echo at a time, directly,
// through the copy relay, through mcpx exposed directly and through the
// proxy tool. It reports µs per call of each and mcpx's ratios to the
// copy relay and to direct, and mcpx's allocations per call (this
// process's, less the copy relay's: the client's own are the same). The
// copy relay and mcpx run in this process; process-mcpx/copy is the same
// ratio with each as a process of its own (the built binary, and the test
// binary as a copy relay), as a client runs mcpx. Where /proc has them
// (Linux), it also reports each of those two processes' CPU time and
// read and write system calls per call.
func BenchmarkCallSequential(b *testing.B) {
	direct, relay, mcpx := directConn(b), copyConn(b), mcpxConn(b)
	relayProc, proc := copyProcessConn(b), processConn(b, buildMcpx(b), nil)
	echo := fmt.Appendf(nil, echoCall, 1, "echo")
	mcpxEcho := fmt.Appendf(nil, echoCall, 1, "fx_echo")
	proxied := fmt.Appendf(nil, proxyCall, 1)
	calls := []func(){
		func() { direct.call(b, echo) },
		func() { relay.call(b, echo) },
		func() { mcpx.call(b, mcpxEcho) },
		func() { mcpx.call(b, proxied) },
		func() { relayProc.call(b, echo) },
		func() { proc.call(b, mcpxEcho) },
		func() { proc.call(b, proxied) },
	}
	var t [7]time.Duration
	relayUse, procUse := newUsageMeter(relayProc.pid), newUsageMeter(proc.pid)
	meters := []*usageMeter{4: relayUse, 5: procUse, 6: nil} // one per call, for the processes
	for b.Loop() {
		for i, f := range calls {
			if m := meters[i]; m != nil {
				m.run(func() { t[i] += timed(f) }) // /proc read outside the time
				continue
			}
			t[i] += timed(f)
		}
	}
	// Allocations, each target on its own so that nothing else counts.
	m := measure(200, calls[:4])
	n := float64(b.N)
	b.ReportMetric(float64(t[0].Microseconds())/n, "µs/direct")
	b.ReportMetric(float64(t[1].Microseconds())/n, "µs/copy")
	b.ReportMetric(float64(t[2].Microseconds())/n, "µs/mcpx")
	b.ReportMetric(float64(t[3].Microseconds())/n, "µs/proxy")
	b.ReportMetric(float64(t[2])/float64(t[1]), "mcpx/copy")
	b.ReportMetric(float64(t[3])/float64(t[1]), "proxy/copy")
	b.ReportMetric(float64(t[2])/float64(t[0]), "mcpx/direct")
	b.ReportMetric(float64(t[5])/float64(t[4]), "process-mcpx/copy")
	b.ReportMetric(float64(t[6])/float64(t[4]), "process-proxy/copy")
	b.ReportMetric(float64(t[4])/float64(t[0]), "copyprocess/direct")
	b.ReportMetric((float64(m[2].allocs)-float64(m[1].allocs))/200, "mcpx-allocs/call")
	b.ReportMetric((float64(m[3].allocs)-float64(m[1].allocs))/200, "proxy-allocs/call")
	b.ReportMetric((float64(m[2].bytes)-float64(m[1].bytes))/200, "mcpx-B/call")
	reportUsage(b, n, relayUse, procUse)
}

// reportUsage reports the CPU time and system calls per call of mcpx's
// process and the copy relay's, each over its own calls, and their ratio.
func reportUsage(b *testing.B, calls float64, relay, mcpx *usageMeter) {
	if !relay.ok || !mcpx.ok {
		return
	}
	rc, rs := relay.perCall(calls)
	mc, ms := mcpx.perCall(calls)
	b.ReportMetric(mc, "process-cpuµs/call")
	b.ReportMetric(rc, "copyprocess-cpuµs/call")
	b.ReportMetric(mc/rc, "process-cpu/copy")
	b.ReportMetric(ms, "process-syscalls/call")
	b.ReportMetric(rs, "copyprocess-syscalls/call")
}

// concurrent drives one connection with callers goroutines, each making
// per calls one after another, and returns when all are answered. A single
// reader hands each answer to its caller by id.
func concurrent(b *testing.B, c *callConn, name string, callers, per int) {
	var (
		mu      sync.Mutex
		waiting = map[int64]chan struct{}{}
		ids     atomic.Int64
		wg      sync.WaitGroup
	)
	total := callers * per
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for range total {
			id, _ := c.next(b)
			mu.Lock()
			ch := waiting[id]
			delete(waiting, id)
			mu.Unlock()
			if ch == nil {
				b.Errorf("an answer to an unknown id %d", id)
				return
			}
			close(ch)
		}
	}()
	for range callers {
		wg.Go(func() {
			for range per {
				id := ids.Add(1)
				ch := make(chan struct{})
				mu.Lock()
				waiting[id] = ch
				mu.Unlock()
				c.send(b, fmt.Appendf(nil, echoCall, id, name))
				<-ch
			}
		})
	}
	wg.Wait()
	<-readerDone
}

// modernCall is echoCall of revision 2026-07-28: no session, the
// version and the client's capabilities in _meta.
const modernCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"message":"hi"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"

// BenchmarkCallModern: one tools/call of echo at a time through mcpx
// exposed directly, from a legacy client (initialize, then calls) and
// from a modern one (each call carries its _meta, no initialize), each
// on its own in-process mcpx setup of the same config, in turn. It reports
// µs per call of each and their ratio, modern/legacy, which the issue
// bounds at 1.05. A modern request is longer (its _meta, which mcpx
// passes on to the upstream, and the upstream then parses) and so is its
// answer (resultType, serverInfo): the legacy client sending the same
// bytes (same-bytes, its _meta ignored after initialize) tells that part
// from mcpx's own work, modern/same-bytes. The cpu- metrics are this
// process's CPU time per call, which a loaded machine stretches less than
// the medians.
func BenchmarkCallModern(b *testing.B) {
	// Three setups, one kind of call each, so that every upstream gets
	// one call per round; the order turns each round, so that none is
	// always the one called after the others have run.
	legacy, same, modern := mcpxConn(b), mcpxConn(b), mcpxServe(b)
	modern.call(b, fmt.Appendf(nil, modernCall, 0, "fx_echo")) // waits for the upstream
	legacyEcho := fmt.Appendf(nil, echoCall, 1, "fx_echo")
	modernEcho := fmt.Appendf(nil, modernCall, 1, "fx_echo")
	calls := []func(){
		func() { legacy.call(b, legacyEcho) },
		func() { same.call(b, modernEcho) },
		func() { modern.call(b, modernEcho) },
	}
	// Medians, not means: on a shared machine a few calls wait for the
	// CPU for milliseconds, and the mean tells more about the neighbours
	// than about the call.
	times := make([][]time.Duration, len(calls))
	round := 0
	for b.Loop() {
		for k := range calls {
			i := (round + k) % len(calls)
			times[i] = append(times[i], timed(calls[i]))
		}
		round++
	}
	m := measure(200, calls[1:])
	l, sb, md := median(times[0]), median(times[1]), median(times[2])
	b.ReportMetric(float64(l.Nanoseconds())/1e3, "µs/legacy")
	b.ReportMetric(float64(sb.Nanoseconds())/1e3, "µs/same-bytes")
	b.ReportMetric(float64(md.Nanoseconds())/1e3, "µs/modern")
	b.ReportMetric(float64(md)/float64(l), "modern/legacy")
	b.ReportMetric(float64(md)/float64(sb), "modern/same-bytes")
	b.ReportMetric((float64(m[1].allocs)-float64(m[0].allocs))/200, "modern-extra-allocs/call")
	// This process's CPU time (the three mcpx and the client, which does
	// the same for each kind), in blocks of calls of one kind, in turn: a
	// time on a CPU, which the waits for one on a busy machine do not
	// stretch as they stretch the medians. The fixtures' CPU is not in it.
	self := []*usageMeter{newUsageMeter(os.Getpid()), newUsageMeter(os.Getpid()), newUsageMeter(os.Getpid())}
	if self[0].ok {
		const rounds, block = 60, 20
		for r := range rounds {
			for k := range calls {
				i := (r + k) % len(calls)
				self[i].run(func() {
					for range block {
						calls[i]()
					}
				})
			}
		}
		b.ReportMetric(float64(self[0].total.cpu.Nanoseconds())/1e3/(rounds*block), "cpuµs/legacy")
		b.ReportMetric(float64(self[2].total.cpu)/float64(self[0].total.cpu), "cpu-modern/legacy")
		b.ReportMetric(float64(self[2].total.cpu)/float64(self[1].total.cpu), "cpu-modern/same-bytes")
	}
}

// median is the middle of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkCallConcurrent: 64 callers at once on one connection, directly
// and through mcpx (exposed directly); it reports mcpx's throughput as a
// share of the direct connection's, with mcpx serving in this process (its
// allocations counted with the benchmark's) and as its own process, the
// built binary, as a client runs it. The second is the one to read, next
// to its own baseline, a process that only copies bytes: on two cores a
// third process competes for the CPU, which no work inside mcpx can undo.
// The CPU time and system calls per call of the two processes tell how
// much of mcpx's share is its own work, and the CPU per call of the
// client and the server, directly and behind mcpx's process, what the
// hop costs them. By default mcpx lets 32 calls at a time reach a server
// (maxConcurrent) and holds the rest in line, where the direct
// connection and the copy relay pass all 64 on: a second process with
// maxConcurrent 64 shows what that limit costs.
func BenchmarkCallConcurrent(b *testing.B) {
	const callers, per = 64, 8
	direct, relay, mcpx := directConn(b), copyConn(b), mcpxConn(b)
	exe := buildMcpx(b)
	relayProc, proc := copyProcessConn(b), processConn(b, exe, nil)
	max64 := processConn(b, exe, map[string]any{"maxConcurrent": callers})
	var td, tc, tm, tr, tp, tm64 time.Duration
	relayUse, procUse, max64Use := newUsageMeter(relayProc.pid), newUsageMeter(proc.pid), newUsageMeter(max64.pid)
	// The client (this process) and the fixture, directly and behind
	// mcpx's process: what the hop costs them.
	directEnds, procEnds := endsOf(direct), endsOf(proc)
	directAll := meters{directEnds.client, directEnds.server}
	procAll := meters{procUse, procEnds.client, procEnds.server}
	for b.Loop() {
		directAll.run(func() { td += timed(func() { concurrent(b, direct, "echo", callers, per) }) })
		tc += timed(func() { concurrent(b, relay, "echo", callers, per) })
		tm += timed(func() { concurrent(b, mcpx, "fx_echo", callers, per) })
		relayUse.run(func() { tr += timed(func() { concurrent(b, relayProc, "echo", callers, per) }) })
		procAll.run(func() { tp += timed(func() { concurrent(b, proc, "fx_echo", callers, per) }) })
		max64Use.run(func() { tm64 += timed(func() { concurrent(b, max64, "fx_echo", callers, per) }) })
	}
	calls := float64(b.N * callers * per)
	b.ReportMetric(calls/td.Seconds(), "calls/s-direct")
	b.ReportMetric(calls/tc.Seconds(), "calls/s-copy")
	b.ReportMetric(calls/tm.Seconds(), "calls/s-mcpx")
	b.ReportMetric(float64(td)/float64(tm), "throughput-mcpx/direct")
	b.ReportMetric(float64(td)/float64(tr), "throughput-copyprocess/direct")
	b.ReportMetric(float64(td)/float64(tp), "throughput-process/direct")
	b.ReportMetric(float64(td)/float64(tm64), "throughput-process-max64/direct")
	reportUsage(b, calls, relayUse, procUse)
	if max64Use.ok {
		mc, _ := max64Use.perCall(calls)
		b.ReportMetric(mc, "process-max64-cpuµs/call")
	}
	reportEnds(b, calls, directEnds, procEnds)
}

// ends meters the two ends of a connection: the client, which is this
// process, and the server's process.
type ends struct{ client, server *usageMeter }

func endsOf(c *callConn) ends {
	return ends{newUsageMeter(os.Getpid()), newUsageMeter(c.server)}
}

// reportEnds reports the client's and the server's CPU per call directly
// and behind mcpx's process, and the throughput the process setup would
// reach if mcpx's own CPU were free, on a machine where the CPU sets the
// pace: the direct ends' CPU per call over the ends' behind mcpx. The hop
// moves work between the ends (the client reads the answers mcpx writes
// together in fewer reads; the server parses mcpx's longer request line),
// and the ceiling says what of the gap to direct is not mcpx's own CPU.
func reportEnds(b *testing.B, calls float64, direct, proc ends) {
	if !direct.client.ok || !direct.server.ok || !proc.server.ok {
		return
	}
	dc, _ := direct.client.perCall(calls)
	ds, _ := direct.server.perCall(calls)
	pc, _ := proc.client.perCall(calls)
	ps, _ := proc.server.perCall(calls)
	b.ReportMetric(ds, "server-cpuµs/call-direct")
	b.ReportMetric(ps, "server-cpuµs/call-process")
	b.ReportMetric(dc, "client-cpuµs/call-direct")
	b.ReportMetric(pc, "client-cpuµs/call-process")
	b.ReportMetric((dc+ds)/(pc+ps), "ceiling-process/direct")
}

// copyProcessConn connects to the fixture through a copy relay that is a
// process of its own (see copyRelayEnv).
func copyProcessConn(b testing.TB) *callConn {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, fixture)
	cmd.Env = append(os.Environ(), copyRelayEnv+"=1")
	return stdioConn(b, cmd)
}

// processConn runs `mcpx serve --stdio` from exe, as its own process, over
// the fixture (expose both), and connects to it. settings go into the
// config's top level (nil: the defaults).
func processConn(b testing.TB, exe string, settings map[string]any) *callConn {
	top := map[string]any{"expose": "both", "servers": map[string]any{"fx": fx()}}
	maps.Copy(top, settings)
	cfg := writeConfig(b, top)
	cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+b.TempDir())
	c := stdioConn(b, cmd)
	c.call(b, fmt.Appendf(nil, echoCall, 0, "fx_echo")) // waits for the upstream
	c.server = descendant(c.pid, fixture)               // under the supervisor
	return c
}

// stdioConn starts cmd and connects to its stdio, initialized.
func stdioConn(b testing.TB, cmd *exec.Cmd) *callConn {
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &callConn{w: in, r: frame.NewReader(out, 0), pid: cmd.Process.Pid}
	c.close = func() {
		in.Close()
		_ = cmd.Wait()
	}
	b.Cleanup(c.close)
	c.handshake(b)
	return c
}

// BenchmarkCallLargeResult: a 10 MB tool result (the fixture's big tool)
// through the copy relay and through mcpx. It reports the time ratio and
// how many copies of the result mcpx allocated per call (bytes allocated
// in this process per call, less the copy relay's, over the result's
// size).
func BenchmarkCallLargeResult(b *testing.B) {
	const size = 10 << 20
	relay, mcpx := copyConn(b), mcpxConn(b)
	viaCopy := fmt.Appendf(nil, bigCall, 1, "big", size)
	viaMcpx := fmt.Appendf(nil, bigCall, 1, "fx_big", size)
	calls := []func(){
		func() { relay.call(b, viaCopy) },
		func() { mcpx.call(b, viaMcpx) },
	}
	// Warm up: the readers' buffers grow to the answer's size once.
	for _, f := range calls {
		f()
	}
	var t [2]time.Duration
	for b.Loop() {
		for i, f := range calls {
			t[i] += timed(f)
		}
	}
	const n = 8
	m := measure(n, calls)
	b.ReportMetric(float64(t[0].Milliseconds())/float64(b.N), "ms/copy")
	b.ReportMetric(float64(t[1].Milliseconds())/float64(b.N), "ms/mcpx")
	b.ReportMetric(float64(t[1])/float64(t[0]), "mcpx/copy")
	b.ReportMetric((float64(m[1].bytes)-float64(m[0].bytes))/n/size, "mcpx-copies/call")
	b.ReportMetric((float64(m[1].allocs)-float64(m[0].allocs))/n, "mcpx-allocs/call")
}
