package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// A Put without a state leaves the state as it is: a partial tell does
// not rewrite it, in line (the row's TOAST value, for a row of schema 3) or
// in chunks; a Put with one writes it again.
func TestMetaOnlyKeepsTheState(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	state := make([]byte, 100_000)
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: state}, nil); err != nil {
		t.Fatal(err)
	}
	first := chunkXmins(t, st, "a")
	if len(first) != (len(state)+chunkSize-1)/chunkSize {
		t.Fatalf("chunks after the first Put: %v", first)
	}
	if got := toastChunks(t, st); len(got) != 0 {
		t.Fatalf("TOAST values of a chunked state: %v, want none", got)
	}
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: 1, Meta: []byte("m2")}, &session.HistoryEntry{Generation: 0, Data: []byte("h")}); err != nil {
		t.Fatal(err)
	}
	if got := chunkXmins(t, st, "a"); !slices.Equal(got, first) {
		t.Fatalf("chunks after a Put without state: xmin %v, want %v (the state rewritten)", got, first)
	}
	if r, err := st.Get(ctx, "a"); err != nil || !bytes.Equal(r.State, state) || string(r.Meta) != "m2" {
		t.Fatalf("Get after a Put without state: %v, meta %q, state of %d bytes", err, r.Meta, len(r.State))
	}
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: 2, Meta: []byte("m3"), State: state}, nil); err != nil {
		t.Fatal(err)
	}
	if got := chunkXmins(t, st, "a"); len(got) != len(first) || got[0] == first[0] {
		t.Fatalf("chunks after a Put with a state: xmin %v, then %v", first, got)
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
		"ALTER TABLE leases DROP CONSTRAINT leases_session_fkey", // as of schema 1
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

// The errors of a lack of space wrap session.ErrStorageFull (a 507, not a
// 500), and those of a transaction rolled back for another one (a deadlock,
// a serialization failure) wrap session.ErrVersion (the update starts over
// from the store); other errors, other lacks of resources among them, wrap
// neither, and no error is lost.
func TestErrorClasses(t *testing.T) {
	full := func(err error) error { return storageFull(rolledBack(err)) }
	for _, tc := range []struct {
		name string
		err  error
		want error // nil: neither
	}{
		{"disk full", &pgconn.PgError{Code: "53100", Message: `could not extend file "base/5/16384": wrote only 4096 of 8192 bytes at block 7`}, session.ErrStorageFull},
		{"disk full, wrapped", fmt.Errorf("commit: %w", &pgconn.PgError{Code: "53100", Message: "could not write"}), session.ErrStorageFull},
		{"no space", &pgconn.PgError{Code: "53000", Message: `could not write to file "pg_wal/xlogtemp.1": No space left on device`}, session.ErrStorageFull},
		{"quota", &pgconn.PgError{Code: "53000", Message: "could not create file", Detail: "Disk quota exceeded"}, session.ErrStorageFull},
		{"deadlock", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}, session.ErrVersion},
		{"serialization", fmt.Errorf("commit: %w", &pgconn.PgError{Code: "40001", Message: "could not serialize access"}), session.ErrVersion},
		{"open files", &pgconn.PgError{Code: "53000", Message: "could not open file: Too many open files"}, nil},
		{"out of memory", &pgconn.PgError{Code: "53200", Message: "out of memory"}, nil},
		{"too many connections", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}, nil},
		{"program limit", &pgconn.PgError{Code: "54000", Message: "index row size 3000 exceeds btree version 4 maximum 2704"}, nil},
		{"unique violation", &pgconn.PgError{Code: "23505", Message: "duplicate key"}, nil},
		{"not postgres", errors.New("connection reset by peer"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := full(tc.err)
			for _, class := range []error{session.ErrStorageFull, session.ErrVersion} {
				if is, want := errors.Is(got, class), class == tc.want; is != want {
					t.Fatalf("%v: wraps %v %v, want %v", got, class, is, want)
				}
			}
			if !errors.Is(got, tc.err) {
				t.Fatalf("%v lost the error %v", got, tc.err)
			}
		})
	}
}

// UpdateLeases(g) when leases of a later generation are stored (another
// server told g and leases g+1) writes nothing and wraps ErrVersion.
func TestLeasesOfAnOlderGeneration(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	set := func(g uint64, idx ...int) error {
		return st.UpdateLeases(ctx, "a", g, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
			var ls []session.Lease
			for _, i := range idx {
				ls = append(ls, session.Lease{Index: i, Worker: "w", Expires: now.Add(time.Hour)})
			}
			return ls, nil
		})
	}
	rows := func() []string {
		t.Helper()
		return queryStrings(t, st, "SELECT generation || ':' || index FROM leases ORDER BY generation, index")
	}
	if err := set(4, 0); err != nil {
		t.Fatal(err)
	}
	if err := set(5, 1, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(), []string{"5:1", "5:2"}; !slices.Equal(got, want) {
		t.Fatalf("leases after UpdateLeases(5): %q, want %q (4's dropped)", got, want)
	}
	for _, g := range []uint64{4, 0} {
		if err := set(g, 3); !errors.Is(err, session.ErrVersion) {
			t.Fatalf("UpdateLeases(%d) after leases of 5: %v, want ErrVersion", g, err)
		}
		if got, want := rows(), []string{"5:1", "5:2"}; !slices.Equal(got, want) {
			t.Fatalf("leases after a refused UpdateLeases(%d): %q, want %q", g, got, want)
		}
	}
	// An expired lease of a later generation still says it was asked.
	if _, err := st.pool.Exec(ctx, "UPDATE leases SET expires_at = now() - interval '1 hour'"); err != nil {
		t.Fatal(err)
	}
	if err := set(4, 3); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("UpdateLeases(4) after expired leases of 5: %v, want ErrVersion", err)
	}
	if err := set(5, 0); err != nil {
		t.Fatal(err)
	}
	if err := set(6, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(), []string{"6:1"}; !slices.Equal(got, want) {
		t.Fatalf("leases after UpdateLeases(6): %q, want %q", got, want)
	}
}

// List with limit ≤ 0 returns all, as the bbolt store does.
func TestListAll(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	for _, id := range []string{"c", "a", "b"} {
		if _, err := st.Put(ctx, session.Record{ID: id, Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		after string
		limit int
		want  []string
	}{
		{"", 0, []string{"a", "b", "c"}},
		{"", -1, []string{"a", "b", "c"}},
		{"a", 0, []string{"b", "c"}},
		{"", 2, []string{"a", "b"}},
	} {
		recs, err := st.List(ctx, tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("List(%q, %d) = %q, want %q", tc.after, tc.limit, got, tc.want)
		}
	}
}

// databaseAtSchema is the URL of a new database brought to schema version
// by the migrations of this package, as a build of that schema left it,
// with the statements then run in it.
func databaseAtSchema(t *testing.T, version int, then ...string) string {
	t.Helper()
	ctx := context.Background()
	url := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	qs := []string{"CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"}
	for v := range version {
		qs = append(qs, migrations[v], fmt.Sprintf("INSERT INTO schema_migrations (version) VALUES (%d)", v+1))
	}
	for _, q := range append(qs, then...) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return url
}

// A database of schema 1 with a lease of a deleted session (left by a claim
// that raced the Delete) migrates: the orphan goes, the other leases stay,
// and from then on the database refuses an orphan and a Delete cascades.
func TestMigration2DropsOrphanLeases(t *testing.T) {
	ctx := context.Background()
	url := databaseAtSchema(t, 1,
		"INSERT INTO sessions VALUES ('a', 1, 'm', 's')",
		"INSERT INTO leases VALUES ('a', 3, 0, 'w', now() + interval '1 hour')",
		"INSERT INTO leases VALUES ('gone', 3, 1, 'w', now() + interval '1 hour')")
	st := open(t, url)
	checkClean(t, st)
	leases := func() []string {
		t.Helper()
		return queryStrings(t, st, "SELECT convert_from(session, 'UTF8') || ':' || index FROM leases ORDER BY 1")
	}
	if got, want := leases(), []string{"a:0"}; !slices.Equal(got, want) {
		t.Fatalf("leases after the migration: %q, want %q", got, want)
	}
	if _, err := st.pool.Exec(ctx, "INSERT INTO leases VALUES ('gone', 3, 1, 'w', now())"); err == nil {
		t.Fatal("a lease of a session not stored was inserted")
	}
	if _, err := st.pool.Exec(ctx, "DELETE FROM sessions WHERE id = 'a'"); err != nil {
		t.Fatal(err)
	}
	if got := leases(); len(got) != 0 {
		t.Fatalf("leases after their session's row was deleted: %q, want none", got)
	}
}

// An UpdateLeases whose fn returns the leases it was given (a claim with no
// candidate free, a renewal that moves no expiry) writes no row: the lease
// rows keep the transaction that wrote them (xmin).
func TestUnchangedLeasesNotWritten(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	xmins := func() string {
		var s string
		if err := st.pool.QueryRow(ctx, "SELECT string_agg(xmin::text, ',' ORDER BY index) FROM leases").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	take := func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
		return append(cur, session.Lease{Index: len(cur), Worker: "w", Expires: now.Add(time.Hour)}), nil
	}
	same := func(_ time.Time, cur []session.Lease) ([]session.Lease, error) { return cur, nil }
	for range 2 {
		if err := st.UpdateLeases(ctx, "a", 0, take); err != nil {
			t.Fatal(err)
		}
	}
	before := xmins()
	for range 5 {
		if err := st.UpdateLeases(ctx, "a", 0, same); err != nil {
			t.Fatal(err)
		}
	}
	if after := xmins(); after != before {
		t.Fatalf("lease rows rewritten by unchanged updates: xmin %s, then %s", before, after)
	}
	if err := st.UpdateLeases(ctx, "a", 0, take); err != nil {
		t.Fatal(err)
	}
	if after := xmins(); after == before {
		t.Fatal("a changed lease set was not written")
	}
}
