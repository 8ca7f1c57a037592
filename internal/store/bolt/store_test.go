package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func put(t *testing.T, s *Store, rec session.Record, hist *session.HistoryEntry) uint64 {
	t.Helper()
	v, err := s.Put(context.Background(), rec, hist)
	if err != nil {
		t.Fatalf("Put(%s, version %d): %v", rec.ID, rec.Version, err)
	}
	return v
}

func TestPutGetReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)

	v := put(t, s, session.Record{ID: "a", Meta: []byte("m0"), State: []byte("s0")}, nil)
	if v != 1 {
		t.Fatalf("new version = %d, want 1", v)
	}
	v = put(t, s, session.Record{ID: "a", Version: 1, Meta: []byte("m1"), State: []byte("s1")},
		&session.HistoryEntry{Generation: 0, Data: []byte("h0")})
	if v != 2 {
		t.Fatalf("version = %d, want 2", v)
	}
	put(t, s, session.Record{ID: "b", Meta: []byte("mb"), State: []byte("sb")}, nil)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = open(t, path)
	defer s.Close()
	got, err := s.Get(ctx, "a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := session.Record{ID: "a", Version: 2, Meta: []byte("m1"), State: []byte("s1")}
	if got.ID != want.ID || got.Version != want.Version || !bytes.Equal(got.Meta, want.Meta) || !bytes.Equal(got.State, want.State) {
		t.Errorf("Get after reopen = %+v, want %+v", got, want)
	}
	h, err := s.History(ctx, "a", 0, 0)
	if err != nil || len(h) != 1 || h[0].Generation != 0 || string(h[0].Data) != "h0" {
		t.Errorf("History = %+v, %v; want one entry h0", h, err)
	}
	list, err := s.List(ctx, "", 0)
	if err != nil || len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" || list[0].State != nil || string(list[1].Meta) != "mb" {
		t.Errorf("List = %+v, %v", list, err)
	}
	list, err = s.List(ctx, "a", 1)
	if err != nil || len(list) != 1 || list[0].ID != "b" {
		t.Errorf("List after a = %+v, %v", list, err)
	}
}

func TestConflicts(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	put(t, s, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil)

	tests := []struct {
		name string
		rec  session.Record
		want error
	}{
		{"create existing", session.Record{ID: "a", State: []byte{}}, session.ErrVersion},
		{"stale version", session.Record{ID: "a", Version: 7, State: []byte{}}, session.ErrVersion},
		{"unknown id", session.Record{ID: "zz", Version: 1, State: []byte{}}, session.ErrNoRecord},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Put(ctx, tc.rec, &session.HistoryEntry{Generation: 3, Data: []byte("x")})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Put error = %v, want %v", err, tc.want)
			}
		})
	}
	if h, _ := s.History(ctx, "a", 0, 0); len(h) != 0 {
		t.Errorf("a failed put wrote history %+v", h)
	}
	if got, _ := s.Get(ctx, "a"); got.Version != 1 || string(got.Meta) != "m" {
		t.Errorf("a failed put changed the record: %+v", got)
	}
	if _, err := s.Get(ctx, "zz"); !errors.Is(err, session.ErrNoRecord) {
		t.Errorf("Get unknown: %v, want ErrNoRecord", err)
	}
	if err := s.Delete(ctx, "a", 2); !errors.Is(err, session.ErrVersion) {
		t.Errorf("Delete stale: %v, want ErrVersion", err)
	}
	if err := s.Delete(ctx, "zz", 1); !errors.Is(err, session.ErrNoRecord) {
		t.Errorf("Delete unknown: %v, want ErrNoRecord", err)
	}
}

func TestHistoryAndDelete(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	v := put(t, s, session.Record{ID: "a", State: []byte("s")}, nil)
	for g := range uint64(300) {
		v = put(t, s, session.Record{ID: "a", Version: v, State: []byte("s")},
			&session.HistoryEntry{Generation: g, Data: fmt.Appendf(nil, "g%d", g)})
	}
	h, err := s.History(ctx, "a", 256, 3)
	if err != nil || len(h) != 3 || h[0].Generation != 256 || string(h[2].Data) != "g258" {
		t.Fatalf("History(from 256, limit 3) = %+v, %v", h, err)
	}
	if err := s.Delete(ctx, "a", v); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if h, _ := s.History(ctx, "a", 0, 0); len(h) != 0 {
		t.Errorf("history survived delete: %d entries", len(h))
	}
	// The id can be created again, from scratch.
	if v := put(t, s, session.Record{ID: "a", State: []byte("s")}, nil); v != 1 {
		t.Errorf("recreated version = %d, want 1", v)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	s.Close()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path, nil); err == nil {
		s.Close()
		t.Fatal("Open of a file of layout 99 succeeded")
	}
	if m, _ := filepath.Glob(path + ".*"); len(m) > 0 {
		t.Errorf("files beside a file refused: %q", m)
	}
}

// TestConcurrentWrites: concurrent writes to different sessions share
// commits, and every record reads back whole: the values, of sizes from a
// byte to several pages, are built in pooled buffers that the next write
// reuses, so a buffer reused too early would show here.
func TestConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	const sessions, gens = 32, 20
	state := func(i int, g uint64) []byte { return bytes.Repeat([]byte{byte(g), byte(i)}, 1+i*i*10) }
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%02d", i)
			v, err := s.Put(ctx, session.Record{ID: id, Meta: []byte(id), State: state(i, 0)}, nil)
			for g := uint64(0); err == nil && g < gens; g++ {
				v, err = s.Put(ctx, session.Record{ID: id, Version: v, Meta: []byte(id), State: state(i, g+1)},
					&session.HistoryEntry{Generation: g, Data: []byte{byte(g)}})
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c, w := s.commits.Load(), int64(sessions*(gens+1)); c >= w {
		t.Errorf("%d commits for %d concurrent writes: no group commit", c, w)
	}
	s.Close()
	s = open(t, path)
	defer s.Close()
	for i := range sessions {
		id := fmt.Sprintf("s%02d", i)
		rec, err := s.Get(ctx, id)
		if err != nil || rec.Version != gens+1 || string(rec.Meta) != id || !bytes.Equal(rec.State, state(i, gens)) {
			t.Errorf("%s: version %d, meta %q, %d state bytes, %v", id, rec.Version, rec.Meta, len(rec.State), err)
		}
		if h, _ := s.History(ctx, id, 0, 0); len(h) != gens {
			t.Errorf("%s: %d history entries, want %d", id, len(h), gens)
		}
	}
}

// TestCloseWhileWriting: Close waits for the commits under way and the
// writes queued behind them; every Put either lands (its record reads back
// after a reopen) or returns ErrClosed, and Close does not hang.
func TestCloseWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	const writers = 16
	versions := make([]uint64, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("w%02d", i)
			for {
				v, err := s.Put(ctx, session.Record{ID: id, Version: versions[i], State: []byte{byte(versions[i])}}, nil)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				versions[i] = v
			}
		})
	}
	for s.commits.Load() < 20 {
		runtime.Gosched()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s = open(t, path)
	defer s.Close()
	for i, v := range versions {
		id := fmt.Sprintf("w%02d", i)
		rec, err := s.Get(ctx, id)
		if v == 0 {
			if !errors.Is(err, session.ErrNoRecord) {
				t.Errorf("%s: never written, Get: %v", id, err)
			}
			continue
		}
		if err != nil || rec.Version != v || !bytes.Equal(rec.State, []byte{byte(v - 1)}) {
			t.Errorf("%s: version %d state %v (%v), the last Put answered version %d", id, rec.Version, rec.State, err, v)
		}
	}
}

// TestSnapshot: snapshots taken while sessions are written are files that
// Open opens, each holding every session at a committed version with the
// history of exactly that version (record and entry commit together), and
// they leave no file behind.
func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "s.db"))
	defer s.Close()
	const sessions, gens = 8, 40
	state := func(v uint64) []byte { return bytes.Repeat([]byte{byte(v)}, 100+int(v)*50) }
	for i := range sessions {
		put(t, s, session.Record{ID: fmt.Sprintf("s%d", i), State: state(1)}, nil)
	}
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i)
			for v := uint64(1); v <= gens; v++ {
				if _, err := s.Put(ctx, session.Record{ID: id, Version: v, State: state(v + 1)},
					&session.HistoryEntry{Generation: v, Data: []byte(id)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var snaps []string
	for k := 0; k < 5; k++ {
		r, n, err := s.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "snap.db")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := io.Copy(f, r); err != nil || m != n {
			t.Fatalf("snapshot %d: copied %d of %d bytes: %v", k, m, n, err)
		}
		f.Close()
		r.Close()
		snaps = append(snaps, path)
	}
	wg.Wait()
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("the store's directory holds %d entries after the snapshots, want only the file and its log", len(ents))
	}
	for _, path := range snaps {
		c := open(t, path)
		for i := range sessions {
			id := fmt.Sprintf("s%d", i)
			rec, err := c.Get(ctx, id)
			if err != nil {
				t.Fatalf("%s: %s: %v", path, id, err)
			}
			h, err := c.History(ctx, id, 0, 0)
			if err != nil || !bytes.Equal(rec.State, state(rec.Version)) || len(h) != int(rec.Version)-1 {
				t.Errorf("%s: version %d with %d state bytes and %d history entries (%v)", id, rec.Version, len(rec.State), len(h), err)
			}
		}
		c.Close()
	}
}

// TestOnCommit: the hook sees every commit once, with the writes it
// carried.
func TestOnCommit(t *testing.T) {
	var mu sync.Mutex
	calls, writes := 0, 0
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), &Options{OnCommit: func(n int, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		writes += n
		if took <= 0 {
			t.Errorf("a commit took %v", took)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const sessions, gens = 8, 10
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i)
			var v uint64
			for range gens {
				var err error
				if v, err = s.Put(context.Background(), session.Record{ID: id, Version: v, State: []byte{}}, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if writes != sessions*gens || int64(calls) != s.commits.Load() {
		t.Errorf("the hook saw %d commits of %d writes; %d commits of %d writes were made", calls, writes, s.commits.Load(), sessions*gens)
	}
}

// waitQueue waits until a write leads (or none does) with n writes queued
// behind it.
func waitQueue(s *Store, leading bool, n int) {
	for {
		s.mu.Lock()
		l, q := s.leading, len(s.queue)
		s.mu.Unlock()
		if l == leading && q == n {
			return
		}
		runtime.Gosched()
	}
}

// TestBatchFailure: a write that fails unexpectedly in a shared commit rolls
// back only itself: the writes that shared the transaction are committed
// again on their own, and what the failed one wrote is gone.
func TestBatchFailure(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	put := func(key string, fail bool) func(*bbolt.Tx) error {
		return func(tx *bbolt.Tx) error {
			if err := tx.Bucket(bucketMeta).Put([]byte(key), []byte("v")); err != nil {
				return err
			}
			if fail {
				return errors.New("broken")
			}
			return nil
		}
	}
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() { // holds the lead until the others have queued
		first <- s.write(func(tx *bbolt.Tx) error { <-release; return put("first", false)(tx) }, nil)
	}()
	waitQueue(s, true, 0)
	errs := make(chan error, 3)
	for _, k := range []string{"a", "bad", "b"} {
		go func() { errs <- s.write(put(k, k == "bad"), nil) }()
	}
	waitQueue(s, true, 3)
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	failed := 0
	for range 3 {
		if err := <-errs; err != nil {
			if err.Error() != "broken" {
				t.Errorf("error %v", err)
			}
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d writes failed, want 1", failed)
	}
	s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		for _, k := range []string{"first", "a", "b"} {
			if b.Get([]byte(k)) == nil {
				t.Errorf("%s was not committed", k)
			}
		}
		if b.Get([]byte("bad")) != nil {
			t.Error("the failed write's put was committed")
		}
		return nil
	})
}

// TestCommitPanic: a commit that panics answers every write of its batch
// (the leader's goroutine panics, the others get an error), hands the lead
// on, and the store goes on: later writes commit and Close returns.
func TestCommitPanic(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	put := func(key string) func(*bbolt.Tx) error {
		return func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put([]byte(key), []byte("v")) }
	}
	release := make(chan struct{})
	go s.write(func(tx *bbolt.Tx) error { <-release; return put("first")(tx) }, nil)
	waitQueue(s, true, 0)
	outcomes := make(chan string, 3)
	for _, fn := range []func(*bbolt.Tx) error{put("a"), func(*bbolt.Tx) error { panic("broken page") }, put("b")} {
		go func() {
			defer func() {
				if p := recover(); p != nil {
					outcomes <- "panic"
				}
			}()
			if err := s.write(fn, nil); err != nil {
				outcomes <- "error"
			} else {
				outcomes <- "ok"
			}
		}()
	}
	waitQueue(s, true, 3)
	close(release)
	got := map[string]int{}
	for range 3 {
		got[<-outcomes]++
	}
	if got["panic"] != 1 || got["error"] != 2 {
		t.Errorf("outcomes %v, want the leader's panic and two errors", got)
	}
	if err := s.write(put("after"), nil); err != nil {
		t.Errorf("a write after the panic: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestClosed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	s.Close()
	if _, err := s.Put(context.Background(), session.Record{ID: "a", State: []byte{}}, nil); !errors.Is(err, ErrClosed) || !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
}

// A file of layout 1 (meta, state and a history bucket per session apart)
// is migrated on Open, in one transaction, and reads as it was written.
func TestMigrateLayout1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	writeV1 := func(withStates bool) {
		db, err := bbolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bbolt.Tx) error {
			for _, name := range []string{"meta", "sessions", "states", "history"} {
				if name == "states" && !withStates {
					continue
				}
				if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
					return err
				}
			}
			tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("1"))
			for i, id := range []string{"a", "ab", "b"} {
				tx.Bucket([]byte("sessions")).Put([]byte(id), append(u64(uint64(10+i)), "meta-"+id...))
				if withStates {
					tx.Bucket([]byte("states")).Put([]byte(id), []byte("state-"+id))
				}
				h, err := tx.Bucket([]byte("history")).CreateBucket([]byte(id))
				if err != nil {
					return err
				}
				for g := range uint64(5 + i) {
					h.Put(u64(g), fmt.Appendf(nil, "%s/%d", id, g))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}

	// A broken file of layout 1 is refused and left as it was.
	writeV1(false)
	if s, err := Open(path, nil); err == nil {
		s.Close()
		t.Fatal("Open migrated a layout-1 file without its states bucket")
	}
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keySchema); string(v) != "1" || tx.Bucket([]byte("history")) == nil {
			t.Errorf("the failed migration changed the file: schema %q", v)
		}
		return nil
	})
	db.Close()

	os.Remove(path)
	writeV1(true)
	for range 2 { // migrated, then opened as the current layout
		s := open(t, path)
		for i, id := range []string{"a", "ab", "b"} {
			rec, err := s.Get(ctx, id)
			if err != nil || rec.Version != uint64(10+i) || string(rec.Meta) != "meta-"+id || string(rec.State) != "state-"+id {
				t.Errorf("Get(%s) = %+v, %v", id, rec, err)
			}
			h, err := s.History(ctx, id, 1, 0)
			if err != nil || len(h) != 4+i || h[0].Generation != 1 || string(h[len(h)-1].Data) != fmt.Sprintf("%s/%d", id, 4+i) {
				t.Errorf("History(%s) = %+v, %v", id, h, err)
			}
		}
		list, err := s.List(ctx, "", 0)
		if err != nil || len(list) != 3 || string(list[1].Meta) != "meta-ab" || list[1].Version != 11 {
			t.Errorf("List = %+v, %v", list, err)
		}
		s.Close()
	}
	wantCurrentLayout(t, path, "states", "history")
	if _, err := os.Stat(path + ".layout1"); err != nil {
		t.Errorf("the file of layout 1 was not kept: %v", err)
	}
}

// wantCurrentLayout checks that the file at path is of layout SchemaVersion,
// with its buckets and without the buckets named gone.
func wantCurrentLayout(t *testing.T, path string, gone ...string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keySchema); string(v) != strconv.Itoa(SchemaVersion) {
			t.Errorf("layout after migration %q, want %d", v, SchemaVersion)
		}
		for _, b := range dataBuckets {
			if tx.Bucket(b) == nil {
				t.Errorf("no bucket %s after migration", b)
			}
		}
		for _, b := range gone {
			if tx.Bucket([]byte(b)) != nil {
				t.Errorf("bucket %s survived the migration", b)
			}
		}
		return tx.Bucket(bucketSessions).ForEach(func(id, v []byte) error {
			if v != nil || record(tx, id) == nil {
				t.Errorf("session %s: not a bucket with a record", id)
			}
			return nil
		})
	})
}

// History keys of ids that are prefixes of one another stay apart.
func TestHistoryPrefixIDs(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	ids := []string{"a", "a\x00", "a\x00\x00\x00\x00\x00\x00\x00\x01", "aa", "b"}
	vs := map[string]uint64{}
	for _, id := range ids {
		vs[id] = put(t, s, session.Record{ID: id, State: []byte{}}, nil)
	}
	for g := range uint64(3) {
		for _, id := range ids {
			vs[id] = put(t, s, session.Record{ID: id, Version: vs[id], State: []byte{}}, &session.HistoryEntry{Generation: g, Data: []byte(id)})
		}
	}
	for _, id := range ids {
		h, err := s.History(ctx, id, 0, 0)
		if err != nil || len(h) != 3 {
			t.Fatalf("History(%q) = %d entries, %v", id, len(h), err)
		}
		for i, e := range h {
			if e.Generation != uint64(i) || string(e.Data) != id {
				t.Errorf("History(%q)[%d] = %d %q", id, i, e.Generation, e.Data)
			}
		}
	}
	if err := s.Delete(ctx, "a", vs["a"]); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[1:] {
		if h, _ := s.History(ctx, id, 0, 0); len(h) != 3 {
			t.Errorf("deleting a took %q's history: %d left", id, len(h))
		}
	}
}

// TestIdempotencyKeys: a new record's key is kept with its data until the
// record is deleted, survives a reopen, and a second new record with the
// same key is refused without writing anything, alone or in a shared
// commit; writes of a stored record leave the key alone.
func TestIdempotencyKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	if _, _, err := s.Key(ctx, "k1"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Key of an unknown key: %v", err)
	}
	put(t, s, session.Record{ID: "a", Meta: []byte("m"), Key: "k1", KeyData: []byte("fingerprint"), State: []byte{}}, nil)
	put(t, s, session.Record{ID: "b", Key: "k2", State: []byte{}}, nil) // no data
	put(t, s, session.Record{ID: "c", State: []byte{}}, nil)            // no key
	if _, err := s.Put(ctx, session.Record{ID: "d", Key: "k1", KeyData: []byte("other"), State: []byte{}}, nil); !errors.Is(err, session.ErrKeyTaken) {
		t.Fatalf("a second record with key k1: %v, want ErrKeyTaken", err)
	}
	if _, err := s.Get(ctx, "d"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatal("the refused record was written")
	}
	// In a shared commit the refused write fails alone.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = s.Put(ctx, session.Record{ID: fmt.Sprint("e", i), Key: "k-race", KeyData: []byte{byte(i)}, State: []byte{}}, nil)
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won < 0:
			won = i
		case err == nil:
			t.Fatalf("two records took key k-race: e%d and e%d", won, i)
		case !errors.Is(err, session.ErrKeyTaken):
			t.Fatalf("e%d: %v", i, err)
		}
	}
	if id, data, err := s.Key(ctx, "k-race"); err != nil || id != fmt.Sprint("e", won) || !bytes.Equal(data, []byte{byte(won)}) {
		t.Fatalf("Key(k-race) = %q, %v, %v; e%d took it", id, data, err, won)
	}
	// A write of the stored record keeps its key, whatever it carries.
	put(t, s, session.Record{ID: "a", Version: 1, Meta: []byte("m2"), Key: "k3", State: []byte{}}, nil)
	s.Close()

	s = open(t, path)
	defer s.Close()
	for key, want := range map[string]struct{ id, data string }{"k1": {"a", "fingerprint"}, "k2": {"b", ""}} {
		if id, data, err := s.Key(ctx, key); err != nil || id != want.id || string(data) != want.data {
			t.Errorf("after reopen, Key(%s) = %q, %q, %v; want %q, %q", key, id, data, err, want.id, want.data)
		}
	}
	if _, _, err := s.Key(ctx, "k3"); !errors.Is(err, session.ErrNoRecord) {
		t.Error("a write of a stored record set a key")
	}
	if err := s.Delete(ctx, "a", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Key(ctx, "k1"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatal("the key of a deleted record is still there")
	}
	if v := put(t, s, session.Record{ID: "a2", Key: "k1", State: []byte{}}, nil); v != 1 {
		t.Fatal("the key of a deleted record cannot be used again")
	}
	if err := s.Delete(ctx, "c", 1); err != nil { // a record without a key
		t.Fatal(err)
	}
}

// writeFlat writes a file of layout 2 or 3 (records as values of the
// sessions bucket; keys and keyof from layout 3 on): sessions a (with key
// "key-a" in layout 3) and b, each with two history entries.
func writeFlat(t *testing.T, path string, layout int) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		names := [][]byte{bucketMeta, bucketSessions, bucketHist}
		if layout >= 3 {
			names = append(names, bucketKeys, bucketKeyOf)
		}
		for _, name := range names {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(layout)))
		for i, id := range []string{"a", "b"} {
			if err := tx.Bucket(bucketSessions).Put([]byte(id), recordValue(nil, uint64(7+i), []byte("meta-"+id), bytes.Repeat([]byte(id), 10000))); err != nil {
				return err
			}
			for g := range uint64(2) {
				if err := tx.Bucket(bucketHist).Put(histKey(id, g), fmt.Appendf(nil, "%s/%d", id, g)); err != nil {
					return err
				}
			}
		}
		if layout >= 3 {
			tx.Bucket(bucketKeys).Put([]byte("key-a"), append(histPrefix("a"), "data"...))
			tx.Bucket(bucketKeyOf).Put([]byte("a"), []byte("key-a"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantKept checks that the file of layout before its migration was kept
// beside path, whole and as it was: of that layout, with session b's flat
// record, and that nothing else was.
func wantKept(t *testing.T, path string, layout int) {
	t.Helper()
	kept := fmt.Sprint(path, ".layout", layout)
	if m, _ := filepath.Glob(path + ".*"); len(m) != 2 || m[0] != kept || m[1] != path+LogSuffix {
		t.Errorf("files beside the migrated one: %q, want %s and the log", m, kept)
	}
	db, err := bbolt.Open(kept, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keySchema); string(v) != strconv.Itoa(layout) {
			t.Errorf("the kept file is of layout %q", v)
		}
		if v := tx.Bucket(bucketSessions).Get([]byte("b")); !bytes.Equal(v, recordValue(nil, 8, []byte("meta-b"), bytes.Repeat([]byte("b"), 10000))) {
			t.Errorf("the kept file has b's record %.40q", v)
		}
		return nil
	})
}

// TestMigrateLayouts2And3: Open nests the records of a file of layout 2 or
// 3 in buckets of their own (and adds the key buckets to layout 2); the
// sessions, their histories and keys read as before, and take writes.
func TestMigrateLayouts2And3(t *testing.T) {
	ctx := context.Background()
	for _, layout := range []int{2, 3} {
		t.Run(fmt.Sprint("layout ", layout), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "flat.db")
			writeFlat(t, path, layout)
			for i := range 2 { // migrated, then opened as it is
				s := open(t, path)
				for j, id := range []string{"a", "b"} {
					rec, err := s.Get(ctx, id)
					version, meta, state := uint64(7+j), "meta-"+id, bytes.Repeat([]byte(id), 10000)
					if id == "b" && i == 1 { // as written after the migration
						version, meta, state = 9, "meta-b2", []byte("state-b2")
					}
					if err != nil || rec.Version != version || string(rec.Meta) != meta || !bytes.Equal(rec.State, state) {
						t.Fatalf("Get(%s): %d %q, %v", id, rec.Version, rec.Meta, err)
					}
					if h, err := s.History(ctx, id, 0, 0); err != nil || len(h) != 2+i*j || string(h[1].Data) != id+"/1" {
						t.Fatalf("History(%s): %+v, %v", id, h, err)
					}
				}
				if list, err := s.List(ctx, "", 0); err != nil || len(list) != 2+i || string(list[0].Meta) != "meta-a" {
					t.Errorf("List: %+v, %v", list, err)
				}
				if id, data, err := s.Key(ctx, "key-a"); layout == 3 && (err != nil || id != "a" || string(data) != "data") {
					t.Errorf("Key: %q %q %v", id, data, err)
				}
				if i == 0 {
					put(t, s, session.Record{ID: "b", Version: 8, Meta: []byte("meta-b2"), State: []byte("state-b2")}, &session.HistoryEntry{Generation: 2})
				}
				wantKept(t, path, layout)
				put(t, s, session.Record{ID: fmt.Sprint("k", i), Key: fmt.Sprint("key", i), State: []byte{}}, nil)
				if probs := s.Check(ctx); probs != nil {
					t.Errorf("Check: %v", probs)
				}
				s.Close()
			}
			wantCurrentLayout(t, path)
		})
	}
}

// TestWriteAmplification: rewriting a large record allocates (and writes)
// the pages of that record, whatever other sessions the file holds. With
// the records as values of one bucket (layout 3), bbolt kept two to four
// of them in one leaf and a write rewrote them all.
func TestWriteAmplification(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	state := bytes.Repeat([]byte{1}, 200_000)
	pages := func(id string, v uint64) int64 { // bytes of pages one write allocates
		before := s.db.Stats()
		put(t, s, session.Record{ID: id, Version: v, State: state}, nil)
		after := s.db.Stats()
		return after.TxStats.GetPageAlloc() - before.TxStats.GetPageAlloc()
	}
	v := put(t, s, session.Record{ID: "m", State: state}, nil)
	alone := pages("m", v)
	v++
	for i := range 3 { // neighbours on both sides of m
		put(t, s, session.Record{ID: fmt.Sprint("l", i), State: state}, nil)
		put(t, s, session.Record{ID: fmt.Sprint("n", i), State: state}, nil)
	}
	with := pages("m", v)
	if alone < int64(len(state)) || with > alone+alone/5 {
		t.Errorf("a write of a record of %d bytes allocates %d bytes of pages alone, %d among 6 others", len(state), alone, with)
	}
}
