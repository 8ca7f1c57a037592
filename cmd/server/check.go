package main

import (
	"context"
	"fmt"
	"io"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store"
)

// check reads the file at path as a server starting on it would (-check):
// it opens it read-only, runs store.Check and session.Check, writes each
// problem on a line of out and a summary last, and fails when it found any.
// A backup is checked before it is restored; the file of a running server
// cannot be opened (the server holds it): check a backup of it.
func check(ctx context.Context, path string, out io.Writer) error {
	st, err := store.Open(path, &store.Options{ReadOnly: true})
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
