package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/store/postgres"
)

// Store kinds, as the log and /metrics name them.
const (
	kindBolt     = "bbolt"
	kindPostgres = "postgres"
)

// openStore opens the store that db names: a postgres:// (or
// postgresql://) URL is a PostgreSQL database, which several servers may
// share; anything else is the path of a bbolt file, which one server holds.
// It returns the store, its closer and its kind.
// A call of a PostgreSQL store fails past timeout (0: none).
func openStore(ctx context.Context, db string, onCommit func(int, time.Duration), timeout time.Duration) (session.Store, func() error, string, error) {
	if postgres.IsURL(db) {
		st, err := postgres.Open(ctx, db, &postgres.Options{OnCommit: onCommit, CallTimeout: timeout})
		if err != nil {
			return nil, nil, "", err
		}
		return st, st.Close, kindPostgres, nil
	}
	st, err := bolt.Open(db, &bolt.Options{OnCommit: onCommit})
	if err != nil {
		return nil, nil, "", err
	}
	return st, st.Close, kindBolt, nil
}

// redact is db as the log may show it: a URL without its password.
func redact(db string) string {
	if !postgres.IsURL(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// backupOf is the Backup of httpapi.Config for st: its Snapshot, or an
// error naming pg_dump.
func backupOf(st session.Store, db string) func() (io.ReadCloser, int64, error) {
	if sn, ok := st.(session.Snapshotter); ok {
		return sn.Snapshot
	}
	msg := fmt.Sprintf("this server keeps its sessions in PostgreSQL and makes no copies of it: back the database up with pg_dump, e.g. pg_dump --format=custom --file=selfcma.dump '%s'", redact(db))
	return func() (io.ReadCloser, int64, error) { return nil, 0, httpapi.BackupUnsupported(msg) }
}

// checkPostgres is -check of a PostgreSQL database (check reads a bbolt
// file): the database's own consistency (postgres.Store.Check), then
// session.Check of every session. It changes nothing, not even the schema.
func checkPostgres(ctx context.Context, db string, out io.Writer) error {
	st, err := postgres.Open(ctx, db, &postgres.Options{NoMigrate: true})
	if err != nil {
		return err
	}
	defer st.Close()
	// One snapshot for all that follows: a database in use shows no false
	// damage.
	snap, end, err := st.ReadSnapshot(ctx)
	if err != nil {
		return err
	}
	defer end()
	probs := 0
	for _, err := range snap.Check(ctx) {
		probs++
		fmt.Fprintln(out, "database:", err)
	}
	n, err := session.Check(ctx, snap, func(id string, err error) {
		probs++
		fmt.Fprintf(out, "session %s: %v\n", id, err)
	})
	if err != nil {
		probs++
		fmt.Fprintln(out, "sessions:", err)
	}
	fmt.Fprintf(out, "checked %s: sessions %d, history entries %d, problems %d\n", redact(db), n.Sessions, n.HistoryEntries, probs)
	if probs > 0 {
		return fmt.Errorf("%s: %d problems", redact(db), probs)
	}
	return nil
}

// keyOwner is a store that tells the idempotency key a record was created
// with (the bbolt store): the copy carries the keys over.
type keyOwner interface {
	KeyOf(ctx context.Context, id string) (key string, data []byte, err error)
}
