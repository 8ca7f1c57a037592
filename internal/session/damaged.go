package session

import "fmt"

// DamagedError is the error of a session whose stored record cannot be
// used: it does not decode, its state's parts are not all stored, or its
// version cannot grow. A store returns it (wrapped) for what it can tell;
// the Manager for a record that does not decode. httpapi answers it with
// code damaged, naming the session, instead of a bare internal error; the
// server's -check lists the same damage.
type DamagedError struct {
	ID   string
	What string // what is wrong, for the operator
	Err  error  // the cause, if any
}

func (e *DamagedError) Error() string { return fmt.Sprintf("session %s is damaged: %s", e.ID, e.What) }

func (e *DamagedError) Unwrap() error { return e.Err }
