package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
)

// randomBytes is n incompressible bytes of seed.
func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// checkClean fails t unless Check finds no problem in st.
func checkClean(t *testing.T, st *Store) {
	t.Helper()
	if probs := st.Check(context.Background()); len(probs) != 0 {
		t.Fatalf("Check: %v", probs)
	}
}

// queryStrings is the text column of the rows sql returns.
func queryStrings(t *testing.T, st *Store, sql string, args ...any) []string {
	t.Helper()
	r, err := st.pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(r, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// chunkRows is id's chunks as "seq:md5:xmin", in order of seq.
func chunkRows(t *testing.T, st *Store, id string) []string {
	return queryStrings(t, st, "SELECT seq || ':' || md5(data) || ':' || xmin FROM state_chunks WHERE session = $1 ORDER BY seq", []byte(id))
}

// chunkXmins is the transactions that wrote id's chunks, in order of seq.
func chunkXmins(t *testing.T, st *Store, id string) []string {
	return queryStrings(t, st, "SELECT xmin::text FROM state_chunks WHERE session = $1 ORDER BY seq", []byte(id))
}

// countChunks is the number of chunk rows of id, and the number its
// session row says.
func countChunks(t *testing.T, st *Store, id string) (rows, counted int) {
	t.Helper()
	err := st.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM state_chunks WHERE session = $1),
		coalesce((SELECT chunks FROM sessions WHERE id = $1), -1)`, []byte(id)).Scan(&rows, &counted)
	if err != nil {
		t.Fatal(err)
	}
	return rows, counted
}

// wantChunks is the number of chunks of a state of n bytes beside meta.
func wantChunks(meta, n int) int {
	if meta+n <= maxInlineRow {
		return 0
	}
	return (n + chunkSize - 1) / chunkSize
}

// readsBack checks that Get and GetNewer return state, bit for bit, at
// version v, and that GetNewer of v returns no state.
func readsBack(t *testing.T, st *Store, id string, v uint64, meta, state []byte) {
	t.Helper()
	ctx := context.Background()
	r, err := st.Get(ctx, id)
	if err != nil || r.Version != v || !bytes.Equal(r.Meta, meta) || !bytes.Equal(r.State, state) || r.State == nil {
		t.Fatalf("Get %s: %v, version %d (want %d), meta %d bytes, state %d bytes (want %d), equal %v",
			id, err, r.Version, v, len(r.Meta), len(r.State), len(state), bytes.Equal(r.State, state))
	}
	r, err = st.GetNewer(ctx, id, v-1)
	if err != nil || r.Version != v || !bytes.Equal(r.Meta, meta) || !bytes.Equal(r.State, state) || r.State == nil {
		t.Fatalf("GetNewer %s of %d: %v, version %d, state %d bytes (want %d), equal %v",
			id, v-1, err, r.Version, len(r.State), len(state), bytes.Equal(r.State, state))
	}
	r, err = st.GetNewer(ctx, id, v)
	if err != nil || r.Version != v || r.Meta != nil || r.State != nil {
		t.Fatalf("GetNewer %s of the version stored: %v, version %d, meta %d bytes, state %v; want no meta nor state", id, err, r.Version, len(r.Meta), r.State != nil)
	}
}

// States of every size read back exactly, written new and rewritten, and
// are stored in line or in the chunks they need.
func TestChunkSizes(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	meta := randomBytes(1500, 1)
	inline := maxInlineRow - len(meta) // the largest state kept in the row
	for _, n := range []int{
		0, 1, chunkSize - 1, chunkSize, chunkSize + 1,
		inline, inline + 1, 8 << 10,
		3*chunkSize - 1, 3 * chunkSize, 3*chunkSize + 1,
		91 << 10, 1 << 20,
	} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			id := fmt.Sprint("size-", n)
			state := randomBytes(n, uint64(n))
			if _, err := st.Put(ctx, session.Record{ID: id, Meta: meta, State: state}, nil); err != nil {
				t.Fatal(err)
			}
			readsBack(t, st, id, 1, meta, state)
			if rows, counted := countChunks(t, st, id); rows != wantChunks(len(meta), n) || counted != rows {
				t.Fatalf("%d chunk rows, %d counted; want %d", rows, counted, wantChunks(len(meta), n))
			}
			state = randomBytes(n, uint64(n)+1)
			if _, err := st.Put(ctx, session.Record{ID: id, Version: 1, Meta: meta, State: state}, &session.HistoryEntry{Generation: 0, Data: []byte("h")}); err != nil {
				t.Fatal(err)
			}
			readsBack(t, st, id, 2, meta, state)
			if rows, counted := countChunks(t, st, id); rows != wantChunks(len(meta), n) || counted != rows {
				t.Fatalf("after a rewrite: %d chunk rows, %d counted; want %d", rows, counted, wantChunks(len(meta), n))
			}
		})
	}
	checkClean(t, st)
}

// A state that shrinks leaves no chunk beyond its own; one that goes back
// in line leaves none; and it grows back into chunks.
func TestChunksShrinkAndGrow(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	meta := []byte("m")
	v := uint64(0)
	for i, n := range []int{91 << 10, 20 << 10, 1 << 10, 0, 171 << 10, 91 << 10} {
		state := randomBytes(n, uint64(i))
		var err error
		if v, err = st.Put(ctx, session.Record{ID: "a", Version: v, Meta: meta, State: state}, nil); err != nil {
			t.Fatal(err)
		}
		readsBack(t, st, "a", v, meta, state)
		rows, counted := countChunks(t, st, "a")
		var total int
		if err := st.pool.QueryRow(ctx, "SELECT count(*) FROM state_chunks").Scan(&total); err != nil {
			t.Fatal(err)
		}
		if want := wantChunks(len(meta), n); rows != want || counted != want || total != want {
			t.Fatalf("state of %d bytes: %d chunk rows of the session, %d counted, %d in all; want %d", n, rows, counted, total, want)
		}
	}
	checkClean(t, st)
}

// A Put that loses its compare-and-swap writes no chunk, nor does a new
// record whose id is taken.
func TestChunksOfAConflictNotWritten(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	state := randomBytes(91<<10, 1)
	v, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: state}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err = st.Put(ctx, session.Record{ID: "a", Version: v, Meta: []byte("m"), State: state}, nil); err != nil {
		t.Fatal(err)
	}
	before := chunkRows(t, st, "a")
	for _, rec := range []session.Record{
		{ID: "a", Version: v - 1, Meta: []byte("m"), State: randomBytes(171<<10, 2)}, // more chunks
		{ID: "a", Version: v - 1, Meta: []byte("m"), State: randomBytes(20<<10, 3)},  // fewer
		{ID: "a", Version: v - 1, Meta: []byte("m"), State: []byte("s")},             // in line
		{ID: "a", Meta: []byte("m"), State: randomBytes(171<<10, 4)},                 // new
	} {
		if _, err := st.Put(ctx, rec, &session.HistoryEntry{Generation: 9, Data: []byte("h")}); !errors.Is(err, session.ErrVersion) {
			t.Fatalf("Put of version %d: %v, want ErrVersion", rec.Version, err)
		}
		if got := chunkRows(t, st, "a"); !slices.Equal(got, before) {
			t.Fatalf("chunks after a conflict (version %d, %d bytes): %d rows, changed", rec.Version, len(rec.State), len(got))
		}
	}
	readsBack(t, st, "a", v, []byte("m"), state)
}

// Puts of chunked states that go in one group are all written, each with
// its chunks, and the stale one writes none.
func TestGroupCommitOfChunks(t *testing.T) {
	ctx := context.Background()
	st, commits := openCounting(t)
	const k = 6
	for i := range k {
		if _, err := st.Put(ctx, session.Record{ID: fmt.Sprint("s", i), Meta: []byte("m"), State: randomBytes(30<<10, uint64(i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	stale := chunkRows(t, st, "s2")
	commits.reset()
	release := heldWriter(t, st)
	states := make([][]byte, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		states[i] = randomBytes((40+20*i)<<10, uint64(100+i))
		if i == 4 {
			states[i] = []byte("back in line")
		}
		wg.Go(func() {
			version := uint64(1)
			if i == 2 {
				version = 5 // stale
			}
			_, errs[i] = st.Put(ctx, session.Record{ID: fmt.Sprint("s", i), Version: version, Meta: []byte("m2"), State: states[i]}, nil)
		})
	}
	queued(t, st, k)
	release()
	wg.Wait()
	got := commits.get()
	if len(got) != 2 || got[1] != k {
		t.Errorf("commits of %v writes, want the held writer's 1, then one of %d", got, k)
	}
	for i, err := range errs {
		id := fmt.Sprint("s", i)
		if i == 2 {
			if !errors.Is(err, session.ErrVersion) || !slices.Equal(chunkRows(t, st, id), stale) {
				t.Errorf("%s: the stale Put gave %v, or changed its chunks", id, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		readsBack(t, st, id, 2, []byte("m2"), states[i])
		if rows, counted := countChunks(t, st, id); rows != wantChunks(2, len(states[i])) || counted != rows {
			t.Errorf("%s: %d chunk rows, %d counted, want %d", id, rows, counted, wantChunks(2, len(states[i])))
		}
	}
	checkClean(t, st)
}

// A Delete leaves no chunk.
func TestDeleteDropsChunks(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	for _, id := range []string{"a", "b"} {
		if _, err := st.Put(ctx, session.Record{ID: id, Meta: []byte("m"), State: randomBytes(91<<10, 1)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Delete(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	if rows, counted := countChunks(t, st, "a"); rows != 0 || counted != -1 {
		t.Fatalf("after Delete: %d chunk rows, session row counting %d; want none, no row", rows, counted)
	}
	if rows, _ := countChunks(t, st, "b"); rows != wantChunks(1, 91<<10) {
		t.Fatalf("the other session's chunks after Delete: %d rows", rows)
	}
}

// Check finds a chunk removed, an orphan chunk, and chunks whose row also
// holds a state.
func TestCheckFindsChunks(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	for _, id := range []string{"a", "b", "c"} {
		if _, err := st.Put(ctx, session.Record{ID: id, Meta: []byte("m"), State: randomBytes(20<<10, 1)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"DELETE FROM state_chunks WHERE session = 'a' AND seq = 2",
		"DELETE FROM state_chunks WHERE session = 'b' AND seq = 5", // the last
		"UPDATE sessions SET state = 'x' WHERE id = 'c'",
		"ALTER TABLE state_chunks DROP CONSTRAINT state_chunks_session_fkey",
		"INSERT INTO state_chunks VALUES ('gone', 0, 'x')",
		"ALTER TABLE state_chunks ALTER COLUMN data SET STORAGE EXTERNAL",
	} {
		if _, err := st.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var got []string
	for _, p := range st.Check(ctx) {
		got = append(got, p.Error())
	}
	want := []string{
		`schema: the chunks' data column's storage is "e", want PLAIN (p): a chunk would be compressed or moved out of line`,
		"session a: 6 chunks counted, 5 stored, of seq 0 to 5",
		"session b: 6 chunks counted, 5 stored, of seq 0 to 4",
		"session c: a state of 1 bytes in its row and 6 chunks",
		"state chunk 0 of session gone, which is not stored",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Check found\n%q\nwant\n%q", got, want)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := st.Get(ctx, id); !errors.Is(err, errMissingChunks) {
			t.Errorf("Get of %s with a chunk missing: %v, want errMissingChunks", id, err)
		}
	}
}

// The update of a chunk is a HOT update: its new version stays on its
// page, for an id as long as a UUID and longer.
func TestChunkUpdatesStayOnTheirPage(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	id := "0193a6c4-5b1e-7c3d-9f2a-123456789abc-and-more" // 44 bytes
	pages := func() []string {
		t.Helper()
		r, err := st.pool.Query(ctx, "SELECT (ctid::text::point)[0]::text FROM state_chunks WHERE session = $1 ORDER BY seq", []byte(id))
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	v, err := st.Put(ctx, session.Record{ID: id, Meta: []byte("m"), State: randomBytes(91<<10, 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := pages()
	for i := range 6 {
		if v, err = st.Put(ctx, session.Record{ID: id, Version: v, Meta: []byte("m"), State: randomBytes(91<<10, uint64(i+1))}, nil); err != nil {
			t.Fatal(err)
		}
		if got := pages(); !slices.Equal(got, first) {
			t.Fatalf("pages of the chunks after update %d: %v, were %v", i+1, got, first)
		}
	}
}

// A database of schema 3 with a state in the TOAST table migrates: the
// session reads back exactly, its next Put writes it as chunks, and the
// TOAST value goes.
func TestMigration4KeepsOldRows(t *testing.T) {
	ctx := context.Background()
	url := databaseAtSchema(t, 3)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	state := randomBytes(91<<10, 3)
	if _, err := conn.Exec(ctx, "INSERT INTO sessions VALUES ('a', 7, 'm', $1), ('b', 1, 'm', 'small')", state); err != nil {
		t.Fatal(err)
	}
	// The server's -check reads it as it is.
	old, err := Open(ctx, url, &Options{NoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	readsBack(t, old, "a", 7, []byte("m"), state)
	readsBack(t, old, "b", 1, []byte("m"), []byte("small"))
	if probs := old.Check(ctx); len(probs) != 1 || !strings.Contains(probs[0].Error(), "schema: version 3") {
		t.Fatalf("Check of schema 3: %v, want the schema's version only", probs)
	}

	st := open(t, url)
	checkClean(t, st)
	if len(toastChunks(t, st)) != 1 {
		t.Fatal("the state of schema 3 is not in the TOAST table")
	}
	readsBack(t, st, "a", 7, []byte("m"), state)
	readsBack(t, st, "b", 1, []byte("m"), []byte("small"))
	// A Put without state keeps the old state where it is.
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: 7, Meta: []byte("m2")}, nil); err != nil {
		t.Fatal(err)
	}
	readsBack(t, st, "a", 8, []byte("m2"), state)
	state2 := randomBytes(91<<10, 4)
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: 8, Meta: []byte("m2"), State: state2}, nil); err != nil {
		t.Fatal(err)
	}
	readsBack(t, st, "a", 9, []byte("m2"), state2)
	if rows, counted := countChunks(t, st, "a"); rows != wantChunks(2, len(state2)) || counted != rows {
		t.Fatalf("after a Put: %d chunk rows, %d counted", rows, counted)
	}
	if got := toastChunks(t, st); len(got) != 0 {
		t.Fatalf("TOAST values after the Put: %v, want none", got)
	}
	checkClean(t, st)
}

// Import writes a large state as chunks.
func TestImportChunks(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	state := randomBytes(171<<10, 5)
	if err := st.Import(ctx, session.Record{ID: "a", Version: 4, Meta: []byte("m"), State: state}, nil); err != nil {
		t.Fatal(err)
	}
	readsBack(t, st, "a", 4, []byte("m"), state)
	if rows, counted := countChunks(t, st, "a"); rows != wantChunks(1, len(state)) || counted != rows {
		t.Fatalf("after Import: %d chunk rows, %d counted", rows, counted)
	}
	checkClean(t, st)
}
