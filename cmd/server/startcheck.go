package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// startCheck reads the whole bbolt file as -check does before the server
// serves it (bolt.Open has walked its pages already): a damaged file is
// refused with what is wrong and what to do, so that a server never serves,
// nor writes into, a file that -check rejects. It returns what it read, for
// the log. A PostgreSQL database is not read whole at every start (several
// servers share it, and restart one by one): -check reads
// it on demand.
func startCheck(ctx context.Context, st session.Store, path string) (session.CheckCounts, error) {
	var n session.CheckCounts
	bs, ok := st.(*bolt.Store)
	if !ok {
		return n, nil
	}
	if probs := checkStore(ctx, bs, &n); len(probs) > 0 {
		return n, damagedFile(path, len(probs), probs[0])
	}
	return n, nil
}

// damagedFile is the error of a server refusing the damaged file at path:
// how many problems, the first, and what to do.
func damagedFile(path string, n int, first error) error {
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" and %d more (-check -db %s lists them)", n-1, path)
	}
	return fmt.Errorf("%s is damaged: %v%s. %s", path, first, more, damagedAdvice(path))
}

// openError is the error of the server's bolt.Open, with what to do when
// the file is damaged or held.
func openError(path string, err error) error {
	var de *bolt.DamagedError
	switch {
	case errors.As(err, &de):
		return damagedFile(path, len(de.Problems), de.Problems[0])
	case errors.Is(err, bolt.ErrInUse):
		return fmt.Errorf("%w: another server serves %s; stop it, or serve another file", err, path)
	}
	return err
}
