package session

import (
	"errors"
	"strings"
	"syscall"
)

// ErrStorageFull is wrapped by the error of a Store's write that failed for
// lack of space and wrote nothing (a store whose errors are not the
// system's, PostgreSQL's disk full say, wraps it).
var ErrStorageFull = errors.New("no space left for the write")

// storageFull reports whether err is a write's failure for lack of space:
// the disk is full (ENOSPC), the user's quota is (EDQUOT), or the file
// would pass the size a process may write (EFBIG). bbolt passes the error of
// the write on, but flattens a few (a failed grow of the file) to text, which
// is read too.
func storageFull(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{ErrStorageFull, syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if errors.Is(err, e) {
			return true
		}
	}
	msg := err.Error()
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if strings.Contains(msg, e.Error()) {
			return true
		}
	}
	return false
}
