package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/store/postgres"
)

// check reads the file at path as a server starting on it would (-check):
// it opens it read-only, runs bolt.Check and session.Check, writes each
// problem on a line of out and a summary last, and fails when it found any.
// A file of an earlier layout is checked as the server would migrate it: a
// copy, migrated in a temporary directory; the file is left as it is.
// A backup is checked before it is restored; the file of a running server
// cannot be opened (the server holds it): check a backup of it. A file
// whose pages are damaged is read without bbolt (bolt.OpenDamaged), for
// every session it can tell damaged.
func check(ctx context.Context, path string, out io.Writer) error {
	if postgres.IsURL(path) {
		return checkPostgres(ctx, path, out)
	}
	st, err := bolt.Open(path, &bolt.Options{ReadOnly: true})
	if errors.Is(err, bolt.ErrEarlierLayout) {
		var cleanup func()
		st, cleanup, err = openMigratedCopy(path)
		if err != nil {
			return err
		}
		defer cleanup()
		fmt.Fprintf(out, "%s is of an earlier layout: checking a copy migrated to layout %d, as a server would migrate it\n", path, bolt.SchemaVersion)
	}
	var de *bolt.DamagedError
	switch {
	case errors.As(err, &de):
		return checkDamaged(ctx, path, de, out)
	case errors.Is(err, bolt.ErrInUse):
		return fmt.Errorf("%w: check a backup of it (GET /v1/backup), or stop the server first", err)
	case err != nil:
		return err
	}
	defer st.Close()
	probs, n := 0, session.CheckCounts{}
	for _, err := range checkStore(ctx, st, &n) {
		probs++
		fmt.Fprintln(out, err)
	}
	fmt.Fprintf(out, "checked %s: sessions %d, history entries %d, problems %d\n", path, n.Sessions, n.HistoryEntries, probs)
	if probs > 0 {
		fmt.Fprintln(out, damagedAdvice(path))
		return fmt.Errorf("%s: %d problems", path, probs)
	}
	return nil
}

// checkStore runs bolt.Check and session.Check on st, a file whose pages
// passed bolt.Open's walk, and returns their problems as -check prints
// them ("file: ..." and "session ID: ..."), counting what it read in n. A
// panic or a fault while reading (which a damage that the walk missed
// might cause) is a problem too, not a crash.
func checkStore(ctx context.Context, st *bolt.Store, n *session.CheckCounts) (probs []error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			probs = append(probs, fmt.Errorf("file: reading it failed: %v", r))
		}
	}()
	for _, err := range st.Check(ctx) {
		probs = append(probs, fmt.Errorf("file: %w", err))
	}
	var err error
	*n, err = session.Check(ctx, st, func(id string, err error) {
		probs = append(probs, fmt.Errorf("session %s: %w", id, err))
	})
	if err != nil {
		probs = append(probs, fmt.Errorf("sessions: %w", err))
	}
	return probs
}

// checkDamaged is check of a file whose pages bbolt cannot read safely
// (bolt.Open refused it): it prints what is wrong with the pages, then reads
// the sessions that it can without bbolt and prints what is wrong with
// those, and which would be lost, and fails.
func checkDamaged(ctx context.Context, path string, de *bolt.DamagedError, out io.Writer) error {
	probs := 0
	d, err := bolt.OpenDamaged(path)
	pageProbs := de.Problems
	if err == nil {
		defer d.Close()
		pageProbs = d.Problems() // the same walk, on past a file cut short
	}
	for _, p := range pageProbs {
		probs++
		fmt.Fprintln(out, "file:", p)
	}
	if err != nil {
		probs++
		fmt.Fprintln(out, "file:", err)
		fmt.Fprintf(out, "checked %s: no session can be read, problems %d\n", path, probs)
		fmt.Fprintln(out, damagedAdvice(path))
		return fmt.Errorf("%s: %d problems", path, probs)
	}
	if l := d.Layout(); earlierLayout(l) {
		probs++
		fmt.Fprintf(out, "file: of layout %s, whose sessions are read only once a server has migrated it, which it does not do to a damaged file\n", l)
		fmt.Fprintf(out, "checked %s: problems %d\n", path, probs)
		fmt.Fprintf(out, "The file is damaged and a server refuses it. Restore a backup (check it first with -check): -salvage reads layouts %d to %d only.\n", bolt.SalvageFrom, bolt.SchemaVersion)
		return fmt.Errorf("%s: %d problems", path, probs)
	}
	r := salvageable(ctx, d)
	for _, id := range r.lostIDs() {
		probs++
		fmt.Fprintf(out, "session %s: %v\n", id, joinErrs(r.lost[id]))
	}
	fmt.Fprintf(out, "checked %s: sessions %d (%d read soundly), history entries %d, problems %d\n",
		path, r.read+len(r.unlisted), len(r.sound), r.histRead, probs)
	fmt.Fprintln(out, damagedAdvice(path))
	return fmt.Errorf("%s: %d problems", path, probs)
}

// damagedAdvice is what to do with the damaged file at path.
func damagedAdvice(path string) string {
	return "The file is damaged and a server refuses it. Restore a backup (check it first with -check), " +
		"or write the sessions that read soundly to a new file, losing only the damaged ones: " +
		"selfcma-server -salvage -db " + path + " -out NEW.db, then serve NEW.db."
}

// openMigratedCopy copies the file at path to a temporary directory and
// opens the copy for writing, which migrates it; cleanup removes the
// directory (after the store is closed).
func openMigratedCopy(path string) (st *bolt.Store, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "selfcma-check-")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	copyPath := filepath.Join(dir, filepath.Base(path))
	if err := copyFile(path, copyPath); err != nil {
		cleanup()
		return nil, nil, err
	}
	if st, err = bolt.Open(copyPath, &bolt.Options{NoSync: true}); err != nil { // a throwaway copy
		cleanup()
		return nil, nil, err
	}
	return st, cleanup, nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}
