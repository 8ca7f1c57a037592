package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store"
	"github.com/selfcma/selfcma/internal/store/postgres"
)

// check reads the file at path as a server starting on it would (-check):
// it opens it read-only, runs store.Check and session.Check, writes each
// problem on a line of out and a summary last, and fails when it found any.
// A file of an earlier layout is checked as the server would migrate it: a
// copy, migrated in a temporary directory; the file is left as it is.
// A backup is checked before it is restored; the file of a running server
// cannot be opened (the server holds it): check a backup of it.
func check(ctx context.Context, path string, out io.Writer) error {
	if postgres.IsURL(path) {
		return checkPostgres(ctx, path, out)
	}
	st, err := store.Open(path, &store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrEarlierLayout) {
		var cleanup func()
		st, cleanup, err = openMigratedCopy(path)
		if err != nil {
			return err
		}
		defer cleanup()
		fmt.Fprintf(out, "%s is of an earlier layout: checking a copy migrated to layout %d, as a server would migrate it\n", path, store.SchemaVersion)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	probs := 0
	for _, err := range st.Check(ctx) {
		probs++
		fmt.Fprintln(out, "file:", err)
	}
	n, err := session.Check(ctx, st, func(id string, err error) {
		probs++
		fmt.Fprintf(out, "session %s: %v\n", id, err)
	})
	if err != nil {
		probs++
		fmt.Fprintln(out, "sessions:", err)
	}
	fmt.Fprintf(out, "checked %s: sessions %d, history entries %d, problems %d\n", path, n.Sessions, n.HistoryEntries, probs)
	if probs > 0 {
		return fmt.Errorf("%s: %d problems", path, probs)
	}
	return nil
}

// openMigratedCopy copies the file at path to a temporary directory and
// opens the copy for writing, which migrates it; cleanup removes the
// directory (after the store is closed).
func openMigratedCopy(path string) (st *store.Store, cleanup func(), err error) {
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
	if st, err = store.Open(copyPath, &store.Options{NoSync: true}); err != nil { // a throwaway copy
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
