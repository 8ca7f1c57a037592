package session

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Code classifies an Error; httpapi maps each to one HTTP status.
type Code string

// The codes of the domain.
const (
	CodeInvalid     Code = "invalid"      // the request is not of the documented shape
	CodeOutOfRange  Code = "out_of_range" // a value outside its range, or inconsistent with the others or the session
	CodeNotFound    Code = "not_found"    // no such session
	CodeConflict    Code = "conflict"     // a tell for another generation than the pending one, or of a value told otherwise before
	CodeStopped     Code = "stopped"      // the session has stopped
	CodeStorageFull Code = "storage_full" // the store's disk is full: nothing was written; retry later
	CodeInternal    Code = "internal"     // anything else; the message is not shown to clients
)

// Error is the one error type of the service's domain.
type Error struct {
	Code    Code
	Message string

	// Generation is the pending generation, for CodeConflict and CodeStopped.
	Generation int
	// StopReasons are the criteria that stopped the session, for CodeStopped.
	StopReasons []StopReason

	Err error // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the Code of err's Error, CodeInternal if it has none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrStorageFull is wrapped by the error of a Store's write that failed for
// lack of space and wrote nothing (a store whose errors are not the
// system's, PostgreSQL's disk full say, wraps it).
var ErrStorageFull = errors.New("no space left for the write")

// internal is the error of a step that failed for a reason not the
// client's: CodeStorageFull when the store's disk is full, CodeInternal
// otherwise.
func internal(step string, err error) *Error {
	if storageFull(err) {
		return &Error{Code: CodeStorageFull, Message: "the server's storage is full: nothing was written; retry later", Err: fmt.Errorf("%s: %w", step, err)}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("%s: %w", step, err)}
}

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
