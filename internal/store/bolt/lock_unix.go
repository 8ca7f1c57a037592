//go:build unix

package bolt

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is tryLock's error for a file another process holds.
var errLocked = syscall.EWOULDBLOCK

// tryLock takes f's flock, as bbolt does, without waiting.
func tryLock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
