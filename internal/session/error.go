package session

import (
	"errors"
	"fmt"
)

// Code classifies an Error; httpapi maps each to one HTTP status.
type Code string

// The codes of the domain.
const (
	CodeInvalid    Code = "invalid"      // the request is not of the documented shape
	CodeOutOfRange Code = "out_of_range" // a value outside its range, or inconsistent with the others or the session
	CodeNotFound   Code = "not_found"    // no such session
	CodeConflict   Code = "conflict"     // a tell for another generation than the pending one, or of a value told otherwise before
	CodeStopped    Code = "stopped"      // the session has stopped
	CodeInternal   Code = "internal"     // anything else; the message is not shown to clients

	// The store's disk is full (or a quota, or a file size limit, is
	// reached): nothing was written; the same request, later, applies once.
	CodeStorageFull Code = "storage_full"

	// The store could not be reached or did not answer in time (the
	// database is down, restarting, failing over, or out of
	// connections): the same request, later, applies at most once.
	CodeStoreUnavailable Code = "store_unavailable"

	// The session's stored record is damaged (DamagedError): no request
	// to it can succeed until an operator restores or deletes it.
	CodeDamaged Code = "damaged"
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

// internal is the error of a step that failed for a reason not the
// client's: CodeStorageFull when the store's disk is full,
// CodeStoreUnavailable when the store cannot be reached, CodeInternal
// otherwise.
func internal(step string, err error) *Error {
	var de *DamagedError
	if errors.As(err, &de) {
		return &Error{Code: CodeDamaged, Message: fmt.Sprintf("session %s is damaged in the store (%s): the server's -check lists what is wrong; restore the session from a backup, or remove it", de.ID, de.What), Err: fmt.Errorf("%s: %w", step, err)}
	}
	if errors.Is(err, ErrUnavailable) {
		return &Error{Code: CodeStoreUnavailable, Message: "the sessions' store is unavailable (its database is unreachable, restarting or out of connections); send the request again after Retry-After", Err: fmt.Errorf("%s: %w", step, err)}
	}
	if storageFull(err) {
		return &Error{Code: CodeStorageFull, Message: "the server's storage is full: nothing was written; retry later", Err: fmt.Errorf("%s: %w", step, err)}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("%s: %w", step, err)}
}
