//go:build !linux

package bolt

import "os"

// fdatasync syncs f (fsync where fdatasync is not).
func fdatasync(f *os.File) error { return f.Sync() }
