package session

import "errors"

// ErrUnavailable is wrapped by the error of a Store's call that failed
// because the database could not be reached or would not answer: it is
// down, restarting or in recovery, the connection was cut, it answered
// nothing before the call's deadline, it has no connection left, or it is
// a standby since a switchover. Such a call may or may not have been
// applied (a cut commit); the request, sent again, finds out: a tell of the
// generation just applied never applies twice, a create with its
// Idempotency-Key never creates twice. httpapi answers 503
// store_unavailable with Retry-After.
var ErrUnavailable = errors.New("the store is unavailable")
