package execpages

import (
	"slices"
	"testing"
)

// sample is an smaps as Linux writes it, with one mapping of each kind
// the choice must tell apart; the executable is inode 1234 on fd:01.
const sample = `00400000-00c6a000 r-xp 00000000 fd:01 1234                               /opt/mcpx/bin/mcpx
Size:               8616 kB
Rss:                6400 kB
Anonymous:             0 kB
Locked:                0 kB
00c6a000-01400000 r--p 0086a000 fd:01 1234                               /opt/mcpx/bin/mcpx
Size:               7768 kB
Anonymous:             0 kB
Locked:                0 kB
01400000-01460000 rw-p 01000000 fd:01 1234                               /opt/mcpx/bin/mcpx
Anonymous:           120 kB
Locked:                0 kB
01460000-01470000 r--p 01060000 fd:01 1234                               /opt/mcpx/bin/mcpx
Anonymous:             8 kB
Locked:                0 kB
01470000-01480000 r--p 01070000 fd:01 1234                               /opt/mcpx/bin/mcpx
Anonymous:             0 kB
Locked:               64 kB
01480000-01490000 r--s 01080000 fd:01 1234                               /opt/mcpx/bin/mcpx
Anonymous:             0 kB
Locked:                0 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:01 99                         /usr/lib/libc.so.6
Anonymous:             0 kB
Locked:                0 kB
7f0000100000-7f0000200000 r-xp 00000000 fd:02 1234                       /mnt/other
Anonymous:             0 kB
Locked:                0 kB
7f0000200000-7f0000300000 r--p 00000000 fd:01 1234                       /opt/my apps/mcpx (deleted)
Anonymous:             0 kB
Locked:                0 kB
7f0000300000-7f0000400000 r--p zz fd:01 1234
Anonymous:             0 kB
7fff00000000-7fff00021000 rw-p 00000000 00:00 0                          [stack]
Anonymous:           132 kB
Locked:                0 kB
`

func TestDroppable(t *testing.T) {
	var got []uintptr
	for _, m := range droppable([]byte(sample), device{0xfd, 0x01}, 1234) {
		got = append(got, m.start)
	}
	// The executable's code and read-only data, and the same file mapped
	// again under a path with a space, since deleted: not the writable
	// data, the read-only pages a loader relocated (private copies), the
	// locked ones, the shared mapping, other files, another device's
	// inode 1234, or a header that does not parse.
	want := []uintptr{0x00400000, 0x00c6a000, 0x7f0000200000}
	if !slices.Equal(got, want) {
		t.Errorf("droppable starts = %#x, want %#x", got, want)
	}
}

func TestParseSmapsBadInput(t *testing.T) {
	// Headers that do not parse: no mapping.
	for _, in := range []string{"", "\n\n", "garbage\n", "-\n", "0-\n", "00400000-00c6a000\n",
		"00400000-00c6a000 r-xp 00000000 fd01 1234 /x\n",
		"00400000-00c6a000 r-xp 00000000 fd:01 12x4 /x\n",
		"00400000-00c6a000 r-x 00000000 fd:01 1234 /x\n",
		"ffffffffffffffffff-0 r-xp 00000000 fd:01 1 /x\n"} {
		if got := parseSmaps([]byte(in + "Anonymous: 0 kB\nLocked: 0 kB\n")); len(got) != 0 {
			t.Errorf("parseSmaps(%q) = %+v, want none", in, got)
		}
	}
	// A mapping whose own lines are missing, garbled, or belong to a
	// header before it that did not parse, is kept.
	for _, in := range []string{
		"00400000-00c6a000 r-xp 0 fd:01 1 /x\n",
		"00400000-00c6a000 r-xp 0 fd:01 1 /x\nAnonymous:\nLocked: 0 kB\n",
		"00400000-00c6a000 r-xp 0 fd:01 1 /x\nAnonymous: 0 kB\nLocked: x kB\n",
		"00400000-00c6a000 r-xp 0 fd:01 1 /x\n0-1 bad\nAnonymous: 0 kB\nLocked: 0 kB\n",
	} {
		if got := droppable([]byte(in), device{0xfd, 1}, 1); len(got) != 0 {
			t.Errorf("droppable(%q) = %+v, want none", in, got)
		}
	}
	if got := droppable([]byte("00400000-00c6a000 r-xp 0 fd:01 1 /x\nAnonymous: 0 kB\nLocked: 0 kB\n"), device{0xfd, 1}, 1); len(got) != 1 {
		t.Errorf("the well-formed control case: droppable = %+v, want it", got)
	}
}
