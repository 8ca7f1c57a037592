package bolt

import (
	"os"
	"syscall"
)

// fdatasync syncs f's data (and no timestamps), as bbolt syncs on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
