package postgres

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/session/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t *testing.T, url string) *Store {
	t.Helper()
	st, err := Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store { return open(t, pgtest.DB(t)) })
}

// Servers starting at once on a new database migrate it once.
func TestConcurrentMigrations(t *testing.T) {
	url := pgtest.DB(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			st, err := Open(context.Background(), url, nil)
			if err == nil {
				st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	st := open(t, url)
	var n, v int
	if err := st.pool.QueryRow(context.Background(), "SELECT count(*), max(version) FROM schema_migrations").Scan(&n, &v); err != nil || n != SchemaVersion || v != SchemaVersion {
		t.Fatalf("schema_migrations: %d rows, version %d, %v; want %d", n, v, err, SchemaVersion)
	}
	// A database of a later schema is refused.
	if _, err := st.pool.Exec(context.Background(), "INSERT INTO schema_migrations (version) VALUES ($1)", SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if st2, err := Open(context.Background(), url, nil); err == nil || !strings.Contains(err.Error(), "later than") {
		if st2 != nil {
			st2.Close()
		}
		t.Fatalf("Open of a later schema: %v", err)
	}
	if probs := st.Check(context.Background()); len(probs) != 1 || !strings.Contains(probs[0].Error(), "schema") {
		t.Fatalf("Check of a later schema: %v", probs)
	}
}

// toastChunks is the set of TOAST values of the sessions table.
func toastChunks(t *testing.T, st *Store) []uint32 {
	t.Helper()
	ctx := context.Background()
	var toast string
	if err := st.pool.QueryRow(ctx, "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'sessions'::regclass").Scan(&toast); err != nil {
		t.Fatal(err)
	}
	rows, err := st.pool.Query(ctx, "SELECT DISTINCT chunk_id::oid::bigint FROM "+toast+" ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	var out []uint32
	for _, id := range ids {
		out = append(out, uint32(id))
	}
	return out
}

// A Put without a state leaves the state's TOAST value as it is: a partial
// tell does not rewrite it; a Put with one writes a new value, uncompressed.
func TestMetaOnlyKeepsTheState(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	state := make([]byte, 100_000) // compressible, yet stored as is
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: state}, nil); err != nil {
		t.Fatal(err)
	}
	first := toastChunks(t, st)
	if len(first) != 1 {
		t.Fatalf("TOAST values after the first Put: %v, want 1", first)
	}
	var stored int
	if err := st.pool.QueryRow(ctx, "SELECT pg_column_size(state) FROM sessions").Scan(&stored); err != nil || stored < len(state) {
		t.Fatalf("the state takes %d bytes (%v), want %d uncompressed: STORAGE EXTERNAL", stored, err, len(state))
	}
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: 1, Meta: []byte("m2")}, &session.HistoryEntry{Generation: 0, Data: []byte("h")}); err != nil {
		t.Fatal(err)
	}
	if got := toastChunks(t, st); !slices.Equal(got, first) {
		t.Fatalf("TOAST values after a Put without state: %v, want %v (the state rewritten)", got, first)
	}
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: 2, Meta: []byte("m3"), State: state}, nil); err != nil {
		t.Fatal(err)
	}
	if got := toastChunks(t, st); slices.Equal(got, first) {
		t.Fatalf("TOAST values after a Put with a state: %v, the same", got)
	}
}

// Check finds orphans and a state column that is not EXTERNAL.
func TestCheckFinds(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO history VALUES ('gone', 3, 'x')",
		"INSERT INTO idempotency_keys VALUES ('k', 'gone2', 'x')",
		"INSERT INTO leases VALUES ('gone3', 1, 0, 'w', now())",
		"ALTER TABLE sessions ALTER COLUMN state SET STORAGE EXTENDED",
	} {
		if _, err := st.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, p := range st.Check(ctx) {
		got = append(got, p.Error())
	}
	want := []string{
		`schema: the state column's storage is "x", want EXTERNAL (e): every commit pays pglz's attempt on the incompressible state`,
		"history 3 of session gone, which is not stored",
		"idempotency key k of session gone2, which is not stored",
		"lease 1 of session gone3, which is not stored",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Check found\n%q\nwant\n%q", got, want)
	}
}
