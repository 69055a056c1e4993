package execpages

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// rssOf is the Rss in kB of this process's mapping that starts at start,
// -1 if there is none.
func rssOf(t *testing.T, start uintptr) int64 {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	head := strconv.FormatUint(uint64(start), 16)
	head = strings.Repeat("0", max(0, 8-len(head))) + head + "-" // as Linux prints it: %08lx
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && !strings.HasSuffix(f[0], ":") { // a mapping's header
			in = strings.HasPrefix(line, head)
			continue
		}
		if in && len(f) >= 2 && f[0] == "Rss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	return -1
}

// TestDropKeepsPrivateCopies maps one file twice: once read-only, its
// pages read in, and once with a page written (a private copy, as a
// loader's relocations make) and then made read-only. Drop gives back
// the first mapping's pages, which read the same afterwards, and leaves
// the second alone.
func TestDropKeepsPrivateCopies(t *testing.T) {
	page := os.Getpagesize()
	content := bytes.Repeat([]byte("mcpx"), 4*page/4)
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clean, err := syscall.Mmap(int(f.Fd()), 0, len(content), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(clean)
	copied, err := syscall.Mmap(int(f.Fd()), 0, len(content), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(copied)
	copied[0] = 'X'
	if err := syscall.Mprotect(copied, syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(clean, content) {
		t.Fatal("the clean mapping does not read as the file")
	}
	cleanAt := uintptr(unsafe.Pointer(&clean[0]))
	if rss := rssOf(t, cleanAt); rss <= 0 {
		t.Fatalf("the clean mapping's pages are not resident after reading them (Rss %d kB)", rss)
	}

	dropped, err := dropFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != int64(len(content)) {
		t.Errorf("dropped %d bytes of mappings, want the clean mapping's %d", dropped, len(content))
	}
	if rss := rssOf(t, cleanAt); rss != 0 {
		t.Errorf("the clean mapping keeps %d kB resident after Drop, want 0", rss)
	}
	if copied[0] != 'X' || !bytes.Equal(copied[1:], content[1:]) {
		t.Errorf("the mapping with a private copy lost it: starts %q", copied[:8])
	}
	if !bytes.Equal(clean, content) {
		t.Error("the clean mapping does not read as the file after Drop")
	}
}

// TestDrop gives back this test binary's own pages, and the binary goes
// on running.
func TestDrop(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	maps := droppable(smaps, devOf(st.Dev), st.Ino)
	if len(maps) == 0 {
		t.Fatal("no mapping of the executable to drop: the choice or the device number is wrong")
	}
	var before int64
	for _, m := range maps {
		before += rssOf(t, m.start)
	}
	dropped, err := Drop()
	if err != nil || dropped == 0 {
		t.Fatalf("Drop() = %d, %v", dropped, err)
	}
	var after int64
	for _, m := range maps {
		after += rssOf(t, m.start)
	}
	// What runs between the drop and the count (reading smaps, this
	// loop) faults some pages back; far fewer than a start touched.
	if after >= before {
		t.Errorf("the executable's resident pages went from %d kB to %d kB", before, after)
	}
	t.Logf("the executable's resident pages: %d kB before Drop, %d kB after", before, after)
}
