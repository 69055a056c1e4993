package execpages

import (
	"os"
	"syscall"
)

// Drop unmaps the clean pages of the executable's read-only mappings
// from this process, and reports the size of the mappings it went over.
func Drop() (int64, error) { return dropFile("/proc/self/exe") }

// dropFile is Drop for the mappings of the file at path.
func dropFile(path string) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	var dropped int64
	for _, m := range droppable(smaps, devOf(st.Dev), st.Ino) {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); e != 0 {
			return dropped, e
		}
		dropped += int64(m.end - m.start)
	}
	return dropped, nil
}

// devOf is a device number as /proc shows it, major and minor.
func devOf(dev uint64) device {
	return device{
		major: uint32((dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)),
		minor: uint32(dev&0xff | (dev>>12)&^uint64(0xff)),
	}
}
