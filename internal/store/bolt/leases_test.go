package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

// testClock is a clock that tests move on.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openClock(t *testing.T, path string, c *testClock) *Store {
	t.Helper()
	s, err := Open(path, &Options{NoSync: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// addLease returns an UpdateLeases fn that adds a lease of index to cur.
func addLease(index int, worker string, d time.Duration, seen *[]session.Lease) func(time.Time, []session.Lease) ([]session.Lease, error) {
	return func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
		if seen != nil {
			*seen = slices.Clone(cur)
		}
		return append(cur, session.Lease{Index: index, Worker: worker, Expires: now.Add(d)}), nil
	}
}

func sortLeases(ls []session.Lease) []session.Lease {
	slices.SortFunc(ls, func(a, b session.Lease) int { return a.Index - b.Index })
	return ls
}

// TestVersionAndMetaOnlyPut: Version reads the stored version; a Put of a
// stored record with State nil replaces the meta and keeps the state.
func TestVersionAndMetaOnlyPut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	s := open(t, path)
	if _, err := s.Version(ctx, "a"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Version of an unknown id: %v", err)
	}
	state := bytes.Repeat([]byte("s"), 5000)
	put(t, s, session.Record{ID: "a", Meta: []byte("m1"), State: state}, nil)
	v := put(t, s, session.Record{ID: "a", Version: 1, Meta: []byte("m2")}, nil)
	if got, err := s.Version(ctx, "a"); err != nil || got != 2 || v != 2 {
		t.Fatalf("Version after two puts: %d, %v (Put said %d), want 2", got, err, v)
	}
	s.Close()
	s = open(t, path)
	defer s.Close()
	rec, err := s.Get(ctx, "a")
	if err != nil || string(rec.Meta) != "m2" || !bytes.Equal(rec.State, state) {
		t.Fatalf("after a meta-only put: meta %q, %d bytes of state (%v); want m2 and the state kept", rec.Meta, len(rec.State), err)
	}
	if _, err := s.Put(ctx, session.Record{ID: "a", Version: 1, Meta: []byte("m3")}, nil); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("a stale meta-only put: %v, want ErrVersion", err)
	}
	// The state's value was not written again: the meta is in metas.
	s.db.View(func(tx *bbolt.Tx) error {
		if v := record(tx, []byte("a")); !bytes.Equal(v, recordValue(nil, 1, []byte("m1"), state)) {
			t.Errorf("the record's value was rewritten: %.40q", v)
		}
		if m := tx.Bucket(bucketMetas).Get([]byte("a")); !bytes.Equal(m, append(binary.BigEndian.AppendUint64(nil, 2), "m2"...)) {
			t.Errorf("metas holds %q", m)
		}
		return nil
	})
	if recs, err := s.List(ctx, "", 0); err != nil || len(recs) != 1 || recs[0].Version != 2 || string(recs[0].Meta) != "m2" {
		t.Fatalf("List after a meta-only put: %+v, %v", recs, err)
	}
	// A write of the state takes the meta back into the record.
	put(t, s, session.Record{ID: "a", Version: 2, Meta: []byte("m3"), State: []byte("s3")}, nil)
	s.db.View(func(tx *bbolt.Tx) error {
		if m := tx.Bucket(bucketMetas).Get([]byte("a")); m != nil {
			t.Errorf("metas kept %q after a write of the state", m)
		}
		return nil
	})
	if rec, err := s.Get(ctx, "a"); err != nil || rec.Version != 3 || string(rec.Meta) != "m3" || string(rec.State) != "s3" {
		t.Fatalf("after a write of the state: %+v, %v", rec, err)
	}
	put(t, s, session.Record{ID: "a", Version: 3, Meta: []byte("m4")}, nil)
	if err := s.Delete(ctx, "a", 4); err != nil {
		t.Fatal(err)
	}
	s.db.View(func(tx *bbolt.Tx) error {
		if m := tx.Bucket(bucketMetas).Get([]byte("a")); m != nil {
			t.Errorf("Delete left the meta %q", m)
		}
		return nil
	})
}

// TestLeases: UpdateLeases hands fn the unexpired leases of its generation
// by the store's clock, stores what fn returns as the whole set, drops
// other generations'; fn's error is returned as is and writes nothing; a
// Put with history of g drops the leases ≤ g; Delete drops them; they
// survive a reopen.
func TestLeases(t *testing.T) {
	ctx := context.Background()
	clk := &testClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "l.db")
	s := openClock(t, path, clk)
	if err := s.UpdateLeases(ctx, "a", 0, addLease(0, "", time.Minute, nil)); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("UpdateLeases of an unknown id: %v", err)
	}
	put(t, s, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil)

	var seen []session.Lease
	for i, w := range []string{"w0", "", "w2"} {
		if err := s.UpdateLeases(ctx, "a", 0, addLease(i, w, time.Duration(i+1)*time.Minute, &seen)); err != nil {
			t.Fatal(err)
		}
		if len(seen) != i {
			t.Fatalf("lease %d: fn saw %d leases, want %d", i, len(seen), i)
		}
	}
	t0 := clk.Now()
	want := []session.Lease{
		{Index: 0, Worker: "w0", Expires: t0.Add(time.Minute)},
		{Index: 1, Expires: t0.Add(2 * time.Minute)},
		{Index: 2, Worker: "w2", Expires: t0.Add(3 * time.Minute)},
	}
	got, now, err := s.Leases(ctx, "a", 0)
	if err != nil || !now.Equal(t0) || !slices.Equal(sortLeases(got), want) {
		t.Fatalf("Leases: %v at %v (%v), want %v at %v", got, now, err, want, t0)
	}

	// The store's clock judges expiry; a reopen keeps the leases.
	clk.Add(90 * time.Second)
	s.Close()
	s = openClock(t, path, clk)
	if got, _, _ := s.Leases(ctx, "a", 0); !slices.Equal(sortLeases(got), want[1:]) {
		t.Fatalf("after 90 s and a reopen: %v, want %v", got, want[1:])
	}
	if got, _, _ := s.Leases(ctx, "a", 1); len(got) != 0 {
		t.Fatalf("generation 1 has leases %v", got)
	}

	// fn's error comes back as is and nothing changes.
	boom := errors.New("boom")
	if err := s.UpdateLeases(ctx, "a", 0, func(time.Time, []session.Lease) ([]session.Lease, error) { return nil, boom }); err != boom {
		t.Fatalf("fn's error: %v, want it as is", err)
	}
	if got, _, _ := s.Leases(ctx, "a", 0); len(got) != 2 {
		t.Fatalf("a failed update changed the leases: %v", got)
	}

	// Another generation's leases replace g's.
	if err := s.UpdateLeases(ctx, "a", 1, addLease(4, "x", time.Hour, &seen)); err != nil || len(seen) != 0 {
		t.Fatalf("generation 1: %v, fn saw %v", err, seen)
	}
	if got, _, _ := s.Leases(ctx, "a", 0); len(got) != 0 {
		t.Fatalf("generation 0 kept %v after generation 1 leased", got)
	}

	// A Put with the history of generation 0 keeps generation 1's; one
	// of generation 1 drops them.
	put(t, s, session.Record{ID: "a", Version: 1, Meta: []byte("m"), State: []byte("s")}, &session.HistoryEntry{Generation: 0, Data: []byte("h0")})
	if got, _, _ := s.Leases(ctx, "a", 1); len(got) != 1 {
		t.Fatalf("history of generation 0 dropped generation 1's leases: %v", got)
	}
	put(t, s, session.Record{ID: "a", Version: 2, Meta: []byte("m"), State: []byte("s")}, &session.HistoryEntry{Generation: 1, Data: []byte("h1")})
	if got, _, _ := s.Leases(ctx, "a", 1); len(got) != 0 {
		t.Fatalf("history of generation 1 kept its leases: %v", got)
	}

	// Delete drops them.
	if err := s.UpdateLeases(ctx, "a", 2, addLease(0, "", time.Hour, nil)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a", 3); err != nil {
		t.Fatal(err)
	}
	s.db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketLeases).Get([]byte("a")); v != nil {
			t.Errorf("Delete left the leases %x", v)
		}
		return nil
	})
	s.Close()
}

// TestLeasesSerialize: concurrent UpdateLeases of one session each add a
// lease and none is lost.
func TestLeasesSerialize(t *testing.T) {
	ctx := context.Background()
	s := openClock(t, filepath.Join(t.TempDir(), "l.db"), &testClock{t: time.Now()})
	defer s.Close()
	put(t, s, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil)
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := s.UpdateLeases(ctx, "a", 0, addLease(i, fmt.Sprint("w", i), time.Hour, nil)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, _, _ := s.Leases(ctx, "a", 0); len(got) != n {
		t.Fatalf("%d leases after %d concurrent updates", len(got), n)
	}
}

// TestMigrateLayout4: a file of layout 4 gains the metas and leases buckets, its
// records and history as they were, and the file as it was is kept beside.
func TestMigrateLayout4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "four.db")
	s := open(t, path)
	state := bytes.Repeat([]byte("b"), 10000)
	put(t, s, session.Record{ID: "b", Meta: []byte("meta-b"), State: state, Key: "k", KeyData: []byte("d")}, &session.HistoryEntry{Generation: 0, Data: []byte("h")})
	s.Close()
	// Make it the file a server of layout 4 wrote.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketLeases, bucketMetas} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte("4"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(path, &Options{ReadOnly: true}); !errors.Is(err, ErrEarlierLayout) {
		t.Fatalf("read-only open of layout 4: %v, want ErrEarlierLayout", err)
	}

	s = open(t, path)
	rec, err := s.Get(ctx, "b")
	if err != nil || rec.Version != 1 || string(rec.Meta) != "meta-b" || !bytes.Equal(rec.State, state) {
		t.Fatalf("b after the migration: version %d, meta %q, %d bytes of state, %v", rec.Version, rec.Meta, len(rec.State), err)
	}
	if id, data, err := s.Key(ctx, "k"); err != nil || id != "b" || string(data) != "d" {
		t.Fatalf("key after the migration: %s %q %v", id, data, err)
	}
	if h, err := s.History(ctx, "b", 0, 0); err != nil || len(h) != 1 || string(h[0].Data) != "h" {
		t.Fatalf("history after the migration: %v %v", h, err)
	}
	if err := s.UpdateLeases(ctx, "b", 1, addLease(0, "", time.Hour, nil)); err != nil {
		t.Fatalf("a lease after the migration: %v", err)
	}
	s.Close()
	wantCurrentLayout(t, path)
	db, err = bbolt.Open(path+".layout4", 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the file of layout 4 was not kept: %v", err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keySchema); string(v) != "4" || tx.Bucket(bucketLeases) != nil || tx.Bucket(bucketMetas) != nil {
			t.Errorf("the kept file is of layout %q, with the buckets of layout 5: %v", v, tx.Bucket(bucketLeases) != nil || tx.Bucket(bucketMetas) != nil)
		}
		return nil
	})
}

// TestImport: a session imported is stored as it was, with its key and
// history; a second import of the id, or of the key, is refused.
func TestImport(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	s := open(t, path)
	rec := session.Record{ID: "a", Version: 7, Meta: []byte("m"), State: []byte("state"), Key: "k", KeyData: []byte("d")}
	hist := []session.HistoryEntry{{Generation: 0, Data: []byte("h0")}, {Generation: 1, Data: []byte("h1")}}
	if err := s.Import(ctx, rec, hist); err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, rec, nil); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("a second import: %v, want ErrVersion", err)
	}
	if err := s.Import(ctx, session.Record{ID: "b", Meta: []byte("m"), State: []byte("s"), Key: "k"}, nil); !errors.Is(err, session.ErrKeyTaken) {
		t.Fatalf("an import of a key taken: %v, want ErrKeyTaken", err)
	}
	s.Close()
	s = open(t, path)
	defer s.Close()
	got, err := s.Get(ctx, "a")
	if err != nil || got.Version != 7 || string(got.Meta) != "m" || string(got.State) != "state" {
		t.Fatalf("imported: %+v, %v", got, err)
	}
	if id, data, err := s.Key(ctx, "k"); err != nil || id != "a" || string(data) != "d" {
		t.Fatalf("key: %s %q %v", id, data, err)
	}
	if h, err := s.History(ctx, "a", 0, 0); err != nil || len(h) != 2 || string(h[1].Data) != "h1" {
		t.Fatalf("history: %v %v", h, err)
	}
	if _, err := s.Get(ctx, "b"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("the refused import stored b: %v", err)
	}
	if p := s.Check(ctx); len(p) > 0 {
		t.Fatalf("Check after imports: %v", p)
	}
}

// TestLeasesInMemory: a lease write makes no commit (it waits for no
// fsync); a crash (the file closed without Close) loses the leases taken
// since Open, and those the file held stand again; Close writes them.
func TestLeasesInMemory(t *testing.T) {
	ctx := context.Background()
	clk := &testClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "l.db")
	var commits int
	s, err := Open(path, &Options{NoSync: true, Now: clk.Now, OnCommit: func(int, time.Duration) { commits++ }})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil)
	before := commits
	if err := s.UpdateLeases(ctx, "a", 0, addLease(0, "w", time.Hour, nil)); err != nil {
		t.Fatal(err)
	}
	if commits != before {
		t.Fatalf("a lease write made %d commits, want none", commits-before)
	}
	s.Close()
	s = openClock(t, path, clk)
	if err := s.UpdateLeases(ctx, "a", 0, addLease(1, "v", time.Hour, nil)); err != nil {
		t.Fatal(err)
	}
	if ls, _, _ := s.Leases(ctx, "a", 0); len(ls) != 2 {
		t.Fatalf("leases before the crash: %v, want 2", ls)
	}
	s.db.Close() // a crash: Close never runs
	s = openClock(t, path, clk)
	defer s.Close()
	if ls, _, _ := s.Leases(ctx, "a", 0); len(ls) != 1 || ls[0].Worker != "w" {
		t.Fatalf("leases after the crash: %v, want w's, which Close wrote", ls)
	}
}
