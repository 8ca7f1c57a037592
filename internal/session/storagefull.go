package session

import (
	"errors"
	"strings"
	"syscall"
)

// ErrStorageFull is wrapped by the error of a Store's write that failed for
// lack of space and wrote nothing, by a store whose errors are not the
// system's: the PostgreSQL store wraps it in the errors of SQLSTATE 53100
// disk_full (and of 53000 that name ENOSPC or EDQUOT). A PostgreSQL whose
// write of its WAL fails may stop instead (PANIC): a lost connection, a
// 500.
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
