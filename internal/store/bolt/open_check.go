package bolt

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrInUse is the error of an Open of a file that another process holds:
// a running server holds its file (for writing) as long as it runs.
var ErrInUse = errors.New("in use by another process (a running server?)")

// ErrDamaged is wrapped by the error of an Open of a file whose pages bbolt
// could not read safely (a *DamagedError).
var ErrDamaged = errors.New("the file is damaged")

// DamagedError lists what is wrong with the pages of a damaged file.
type DamagedError struct {
	Problems []error
}

func (e *DamagedError) Error() string {
	s := fmt.Sprintf("%v: %v", ErrDamaged, e.Problems[0])
	if len(e.Problems) > 1 {
		s += fmt.Sprintf(" (and %d more problems)", len(e.Problems)-1)
	}
	return s
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }

// openChecked is bbolt's Options.OpenFile for Open: it opens the file, locks
// it as bbolt then will (bbolt's lock on the same open file succeeds at
// once), and walks its pages before bbolt maps it, so that a damaged file
// is refused with what is wrong instead of faulting in bbolt. An empty
// file, new, is bbolt's to write.
func openChecked(timeout time.Duration) func(string, int, os.FileMode) (*os.File, error) {
	return func(path string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(path, flag, mode)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, flag&(os.O_WRONLY|os.O_RDWR) != 0, timeout); err != nil {
			f.Close()
			return nil, err
		}
		if err := checkPages(f); err != nil {
			f.Close() // unlocks
			return nil, err
		}
		return f, nil
	}
}

// checkPages walks the pages of f (see pages.go): a *DamagedError if they
// are not sound. An empty file passes.
func checkPages(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	pf, err := readPageFile(f, fi.Size())
	if err != nil {
		return &DamagedError{Problems: []error{err}}
	}
	if probs := walkFile(pf, nil); len(probs) > 0 {
		return &DamagedError{Problems: probs}
	}
	return nil
}

// lockRetry is how often lockFile tries again for a file held by another.
const lockRetry = 50 * time.Millisecond

// lockFile takes the lock of f (exclusive or shared), waiting up to timeout
// for another process to let it go: ErrInUse after that.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := tryLock(f, exclusive)
		if err == nil || !errors.Is(err, errLocked) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrInUse
		}
		time.Sleep(lockRetry)
	}
}
