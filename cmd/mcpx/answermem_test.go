package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The memory tests measure mcpx's RSS as it passes large answers on,
// against what holding the answer once costs a process of the same build
// in the same run (holdCost): the race detector alone makes each byte of
// the Go heap cost about three of RSS, and a loaded machine collects
// garbage at other moments, so no fixed number of bytes holds everywhere.
// Each bound is the target (twice the answer) with the headroom that
// still fails the code before the fix (four to six times it).

// holdEnv makes the test binary a holder (see holdRun).
const holdEnv = "MCPX_TEST_HOLD"

// holdRun is the holder: it says "ready", reads the number of bytes its
// argument gives from stdin into one buffer made for them, says "held",
// and waits for stdin to end. Its RSS growth is the least a process of
// this build that keeps a message whole can cost.
func holdRun(args []string) int {
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return 2
	}
	fmt.Println("ready")
	buf := make([]byte, n)
	if _, err := io.ReadFull(os.Stdin, buf); err != nil {
		return 1
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return int(buf[n/2]) & 0 // buf stays live until here
}

// holdCost is the RSS growth of a holder of n bytes.
func holdCost(t testing.TB, n int) int64 {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, strconv.Itoa(n))
	cmd.Env = append(os.Environ(), holdEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewReader(stdout)
	expect := func(word string) {
		t.Helper()
		if line, err := out.ReadString('\n'); strings.TrimSpace(line) != word {
			t.Fatalf("holder: %q (%v), want %q", line, err, word)
		}
	}
	expect("ready")
	base := rssBase(t, cmd.Process.Pid)
	chunk := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := stdin.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	expect("held")
	return rssPeak(t, cmd.Process.Pid) - base
}

// rssBase is a process's resident set size now, from which its peak is
// then measured: the peak (VmHWM) is reset to it where the system allows
// (/proc/PID/clear_refs), so that a peak of its start does not count.
func rssBase(t testing.TB, pid int) int64 {
	t.Helper()
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read /proc/%d/status: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// mib writes n bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestAnswerMemory: a 24 MB answer passed on whole (maxResultBytes off)
// grows mcpx's peak RSS by at most twice what holding it once costs, in
// this build, on this machine, and so do three in turn. (Before: 5.4
// times the answer, and 9 times for three: the line grown by appending,
// then copied for the result and again for the client's line, and the
// garbage of one answer still there under the next.)
func TestAnswerMemory(t *testing.T) {
	t.Parallel()
	const size = 24_000_000
	hold := holdCost(t, size)
	whole := fx()
	whole["maxResultBytes"] = "off"
	c := startServe(t, writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"whole": whole}}))
	c.initialize()
	call := func(n int) {
		t.Helper()
		res, e := c.request("tools/call", map[string]any{"name": "whole_big", "arguments": map[string]any{"bytes": n}})
		if e != nil || len(res) < n {
			t.Fatalf("a %d-byte answer: %d bytes, %v", n, len(res), e)
		}
	}
	call(1000)
	pid := c.cmd.Process.Pid
	base := rssBase(t, pid)
	call(size)
	grew := rssPeak(t, pid) - base
	t.Logf("a %d MB answer: mcpx's peak RSS grew %s, %.2fx holding it once (%s), %.2fx its size",
		size/1_000_000, mib(grew), float64(grew)/float64(hold), mib(hold), float64(grew)/size)
	if grew > 2*hold {
		t.Errorf("a %d MB answer grew mcpx's peak RSS by %s, over twice the %s that holding it once costs", size/1_000_000, mib(grew), mib(hold))
	}
	// Two more cost no more: the last answer's garbage is not left to
	// pile up under the next.
	call(size)
	call(size)
	grew = rssPeak(t, pid) - base
	t.Logf("three: grew %s, %.2fx holding one", mib(grew), float64(grew)/float64(hold))
	if grew > 2*hold {
		t.Errorf("three %d MB answers grew mcpx's peak RSS by %s, over twice the %s that holding one costs", size/1_000_000, mib(grew), mib(hold))
	}
}

// TestOverLimitMemory: an answer over maxMessageBytes costs mcpx at most
// the limit and a buffer: the line is gathered up to the limit, then
// only skimmed for its id. (Before: four times the limit, the garbage of
// growing it.)
func TestOverLimitMemory(t *testing.T) {
	t.Parallel()
	const limit, size = 16 << 20, 48_000_000
	whole := fx()
	whole["maxResultBytes"] = "off"
	c := startServe(t, writeConfig(t, map[string]any{"expose": "direct", "maxMessageBytes": "16MiB",
		"servers": map[string]any{"whole": whole}}))
	c.initialize()
	if _, e := c.request("tools/call", map[string]any{"name": "whole_big", "arguments": map[string]any{"bytes": 1000}}); e != nil {
		t.Fatal(e.Message)
	}
	pid := c.cmd.Process.Pid
	base := rssBase(t, pid)
	_, e := c.request("tools/call", map[string]any{"name": "whole_big", "arguments": map[string]any{"bytes": size}})
	if e == nil || !strings.Contains(e.Message, "over the limit of 16 MiB") {
		t.Fatalf("a %d MB answer under a 16 MiB limit: %+v, want an error naming the limit", size/1_000_000, e)
	}
	grew := rssPeak(t, pid) - base
	t.Logf("a %d MB answer over the 16 MiB limit: mcpx's peak RSS grew %s (%.2fx the limit)", size/1_000_000, mib(grew), float64(grew)/limit)
	if most := int64(limit + limit/4 + 4<<20); grew > most {
		t.Errorf("a %d MB answer over the 16 MiB limit grew mcpx's peak RSS by %s, over the limit and a buffer (%s)", size/1_000_000, mib(grew), mib(most))
	}
}

// BenchmarkAnswerMemory: how much one 24 MB answer grows mcpx's peak RSS
// over its RSS just before it (the most of b.N answers in turn), passed
// on whole, cut (a text with nothing escaped, and one with a newline
// every 16 bytes, which a cut must decode; what the store keeps of the
// answers before counts in the RSS before), and over maxMessageBytes
// (16 MiB), per byte of the answer and against holding it once in a
// process of the same build (the holder, same run).
//
//	go test -run '^$' -bench AnswerMemory -benchtime 3x ./cmd/mcpx/
func BenchmarkAnswerMemory(b *testing.B) {
	const size = 24_000_000
	hold := holdCost(b, size)
	for _, c := range []struct {
		name, tool, fill string
		limit            string
	}{
		{"whole", "whole_big", "0123456789abcdef", ""},
		{"cut", "cut_big", "0123456789abcdef", ""},
		{"cut-escaped", "cut_big", resultFill, ""},
		{"over-limit", "whole_big", "0123456789abcdef", "16MiB"},
	} {
		b.Run(c.name, func(b *testing.B) {
			whole := fx()
			whole["maxResultBytes"] = "off"
			cfg := map[string]any{"expose": "direct", "servers": map[string]any{"whole": whole, "cut": fx()}}
			if c.limit != "" {
				cfg["maxMessageBytes"] = c.limit
			}
			rc := startServe(b, writeConfig(b, cfg))
			rc.initialize()
			if _, e := rc.request("tools/call", map[string]any{"name": "whole_big", "arguments": map[string]any{"bytes": 1000}}); e != nil {
				b.Fatal(e.Message)
			}
			pid := rc.cmd.Process.Pid
			var grew int64 // the most one answer grew the peak over the RSS before it
			for b.Loop() {
				base := rssBase(b, pid)
				_, e := rc.request("tools/call", map[string]any{"name": c.tool, "arguments": map[string]any{"bytes": size, "fill": c.fill}})
				if (e != nil) != (c.limit != "") {
					b.Fatalf("%s: %+v", c.name, e)
				}
				grew = max(grew, rssPeak(b, pid)-base)
			}
			b.ReportMetric(float64(grew)/size, "rss/answer-byte")
			b.ReportMetric(float64(grew)/float64(hold), "rss/hold")
		})
	}
}
