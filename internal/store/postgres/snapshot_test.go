package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
)

// A ReadSnapshot's store sees the database as it was when it began: a
// tell committed after it shows neither in the record nor in the history
// (so -check reads no history ahead of its session), and it writes nothing.
func TestReadSnapshot(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	v, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m0"), State: []byte("s0")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, end, err := st.ReadSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	if _, err := snap.Get(ctx, "a"); err != nil { // the snapshot is taken by its first read
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: v, Meta: []byte("m1"), State: []byte("s1")}, &session.HistoryEntry{Generation: 0, Data: []byte("h0")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, session.Record{ID: "b", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	r, err := snap.Get(ctx, "a")
	if err != nil || r.Version != v || string(r.Meta) != "m0" {
		t.Fatalf("the snapshot's Get after a Put: %+v %v, want version %d, meta m0", r, err, v)
	}
	if h, err := snap.History(ctx, "a", 0, 0); err != nil || len(h) != 0 {
		t.Fatalf("the snapshot's History after a tell: %v %v, want none", h, err)
	}
	if l, err := snap.List(ctx, "", 0); err != nil || len(l) != 1 {
		t.Fatalf("the snapshot's List: %d records %v, want 1", len(l), err)
	}
	if probs := snap.Check(ctx); len(probs) != 0 {
		t.Fatalf("Check of the snapshot: %v", probs)
	}
	if _, err := snap.Put(ctx, session.Record{ID: "c", Meta: []byte("m"), State: []byte("s")}, nil); !errors.Is(err, errSnapshotWrite) {
		t.Fatalf("a Put of the snapshot: %v", err)
	}
	if r, err := st.Get(ctx, "a"); err != nil || r.Version != v+1 {
		t.Fatalf("the store's Get: %+v %v", r, err)
	}
}

// Check finds the damage a server's writes never leave: a version at the
// largest bigint (its next Put would fail) and lease rows no claim writes.
func TestCheckFindsVersionsAndLeases(t *testing.T) {
	ctx := context.Background()
	st := open(t, pgtest.DB(t))
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := st.Put(ctx, session.Record{ID: id, Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"UPDATE sessions SET version = 9223372036854775807 WHERE id = 'a'",
		"INSERT INTO leases VALUES ('b', 0, -1, 'w', now() + interval '1 hour')",
		"INSERT INTO leases VALUES ('c', 0, 2, 'w', now()), ('c', 0, 2, 'v', now())",
		"INSERT INTO leases VALUES ('d', 0, 1, 'w', now()), ('d', 3, 1, 'w', now())",
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
		"session a: version 9223372036854775807, the largest a bigint holds: it cannot be written again",
		"session b: a negative generation or index (generation 0, index -1)",
		"session c: two leases of one candidate (generation 0, index 2, 2 rows)",
		"session d: leases of several generations (generations 0, 3)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Check found\n%q\nwant\n%q", got, want)
	}
}
