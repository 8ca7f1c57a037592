package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/store/postgres"
)

// copySessions copies every session of the bbolt file at from into the
// PostgreSQL database at to (-copy-from FILE -db URL), exactly: each
// record's meta, state, version and idempotency key, and all its history,
// one session per transaction. A session already in the database is
// skipped if its record is the file's, byte for byte (a copy run again
// after an interruption), and an error otherwise. The file is opened
// read-only: stop its server first (or copy a backup of it).
func copySessions(ctx context.Context, from, to string, out io.Writer) error {
	if !postgres.IsURL(to) {
		return fmt.Errorf("-copy-from copies into PostgreSQL: -db %q is no postgres:// URL", to)
	}
	src, err := bolt.Open(from, &bolt.Options{ReadOnly: true})
	if errors.Is(err, bolt.ErrEarlierLayout) {
		var cleanup func()
		src, cleanup, err = openMigratedCopy(from)
		if err != nil {
			return err
		}
		defer cleanup()
	}
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, to, nil)
	if err != nil {
		return err
	}
	defer dst.Close()
	var copied, skipped, entries int
	for after := ""; ; {
		recs, err := src.List(ctx, after, 100)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			n, fresh, err := copySession(ctx, src, dst, r.ID)
			if err != nil {
				return fmt.Errorf("copy of session %s: %w (%d sessions copied before it)", r.ID, err, copied)
			}
			if fresh {
				copied++
				entries += n
			} else {
				skipped++
			}
		}
		after = recs[len(recs)-1].ID
	}
	fmt.Fprintf(out, "copied %d sessions (%d history entries) from %s to %s; %d were there already\n", copied, entries, from, redact(to), skipped)
	return nil
}

// copySession copies the session id from src to dst, and returns the
// number of history entries copied, and false if dst held it already.
func copySession(ctx context.Context, src *bolt.Store, dst *postgres.Store, id string) (int, bool, error) {
	rec, err := src.Get(ctx, id)
	if err != nil {
		return 0, false, err
	}
	var ko keyOwner = src
	switch key, data, err := ko.KeyOf(ctx, id); {
	case err == nil:
		rec.Key, rec.KeyData = key, data
	case !errors.Is(err, session.ErrNoRecord):
		return 0, false, err
	}
	hist, err := src.History(ctx, id, 0, 0)
	if err != nil {
		return 0, false, err
	}
	err = dst.Import(ctx, rec, hist)
	if errors.Is(err, session.ErrVersion) {
		have, gerr := dst.Get(ctx, id)
		if gerr == nil && have.Version == rec.Version && bytes.Equal(have.Meta, rec.Meta) && bytes.Equal(have.State, rec.State) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("the database holds another record of it")
	}
	return len(hist), true, err
}
