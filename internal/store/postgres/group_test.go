package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
)

// heldWriter makes st's only group writer busy (a statement that waits
// for an advisory lock the test holds) until release is called, so that
// the Puts sent meanwhile queue into one group. It returns when the writer
// is busy. release lets the statement finish and waits for it; it is
// called at the end of the test if the test did not.
func heldWriter(t *testing.T, st *Store) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := st.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const key = 7411
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		conn.Release()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.group.put(ctx, &groupPut{id: "\xff", sql: "SELECT 1 FROM pg_advisory_xact_lock($1)", args: []any{key}})
		done <- err
	}()
	waitFor(t, "the held writer to start", func() bool {
		st.group.mu.Lock()
		defer st.group.mu.Unlock()
		return st.group.active == 1
	})
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key)
			conn.Release()
			if err != nil {
				t.Errorf("unlock: %v", err)
			}
			if err := <-done; err != nil {
				t.Errorf("the held writer: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// queued waits until n Puts wait in st's queue.
func queued(t *testing.T, st *Store, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d Puts to queue", n), func() bool {
		st.group.mu.Lock()
		defer st.group.mu.Unlock()
		return len(st.group.pending) == n
	})
}

// waitFor polls cond until it holds, failing the test after a minute (a
// deadline for a stuck test on a loaded machine, not a measure of speed).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// commitLog records the writes of each commit of a store (OnCommit).
type commitLog struct {
	mu      sync.Mutex
	commits []int
}

func (c *commitLog) add(w int, _ time.Duration) {
	c.mu.Lock()
	c.commits = append(c.commits, w)
	c.mu.Unlock()
}
func (c *commitLog) reset()     { c.mu.Lock(); c.commits = nil; c.mu.Unlock() }
func (c *commitLog) get() []int { c.mu.Lock(); defer c.mu.Unlock(); return slices.Clone(c.commits) }

// openCounting opens a store on a new database with one group writer and
// a log of its commits; it is closed at the end of the test.
func openCounting(t *testing.T) (*Store, *commitLog) {
	t.Helper()
	c := &commitLog{}
	st, err := Open(context.Background(), pgtest.DB(t), &Options{GroupWriters: 1, OnCommit: c.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, c
}

// Puts that arrive while the writer is busy go in one transaction, and
// each keeps its own compare-and-swap: the stale one is a conflict, the
// others are written with their history.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	st, commits := openCounting(t)
	const k = 12
	for i := range k {
		if _, err := st.Put(ctx, session.Record{ID: fmt.Sprint("s", i), Meta: []byte("m"), State: []byte("x")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	commits.reset()

	release := heldWriter(t, st)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			version := uint64(1)
			if i == 5 {
				version = 7 // stale
			}
			rec := session.Record{ID: fmt.Sprint("s", i), Version: version, Meta: []byte("m2"), State: []byte{byte(i)}}
			if i%3 == 0 {
				rec.State = nil // a meta-only Put groups too
			}
			_, errs[i] = st.Put(ctx, rec, &session.HistoryEntry{Generation: 0, Data: []byte{byte(i)}})
		})
	}
	queued(t, st, k)
	release()
	wg.Wait()

	got := commits.get()
	if len(got) != 2 || got[0] != 1 || got[1] != k {
		t.Errorf("commits of %v writes, want the held writer's 1, then one of %d", got, k)
	}
	for i, err := range errs {
		id := fmt.Sprint("s", i)
		r, gerr := st.Get(ctx, id)
		if gerr != nil {
			t.Fatal(gerr)
		}
		h, herr := st.History(ctx, id, 0, 10)
		if herr != nil {
			t.Fatal(herr)
		}
		if i == 5 {
			if !errors.Is(err, session.ErrVersion) || r.Version != 1 || len(h) != 0 {
				t.Errorf("%s: stale Put gave %v, stored version %d, %d history entries; want ErrVersion, 1, 0", id, err, r.Version, len(h))
			}
			continue
		}
		want := []byte{byte(i)}
		if i%3 == 0 {
			want = []byte("x")
		}
		if err != nil || r.Version != 2 || string(r.Meta) != "m2" || string(r.State) != string(want) || len(h) != 1 || h[0].Data[0] != byte(i) {
			t.Errorf("%s: %v, version %d, meta %q, state %v, history %v", id, err, r.Version, r.Meta, r.State, h)
		}
	}
}

// A statement that fails aborts its group's transaction: every other Put
// of the group is then written alone, and only the failing one fails.
func TestGroupCommitFallsBackAlone(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, pgtest.DB(t), &Options{GroupWriters: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const k = 6
	for i := range k {
		if _, err := st.Put(ctx, session.Record{ID: fmt.Sprint("s", i), Meta: []byte("m"), State: []byte("x")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	release := heldWriter(t, st)
	var wg sync.WaitGroup
	errs := make([]error, k)
	var bad error
	for i := range k {
		wg.Go(func() {
			_, errs[i] = st.Put(ctx, session.Record{ID: fmt.Sprint("s", i), Version: 1, Meta: []byte("m2"), State: []byte("y")}, nil)
		})
	}
	wg.Go(func() {
		_, bad = st.group.put(ctx, &groupPut{id: "s3a", sql: "SELECT 1/0"})
	})
	queued(t, st, k+1)
	release()
	wg.Wait()
	if bad == nil {
		t.Error("the failing statement gave no error")
	}
	for i, err := range errs {
		r, gerr := st.Get(ctx, fmt.Sprint("s", i))
		if err != nil || gerr != nil || r.Version != 2 || string(r.State) != "y" {
			t.Errorf("s%d: %v, %v, version %d, state %q; want written", i, err, gerr, r.Version, r.State)
		}
	}
}

// A Put of a large state does not queue behind a busy writer: it is
// written at once, on its own connection.
func TestLargeStateSkipsTheGroup(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, pgtest.DB(t), &Options{GroupWriters: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Put(ctx, session.Record{ID: "big", Meta: []byte("m"), State: []byte("x")}, nil); err != nil {
		t.Fatal(err)
	}
	release := heldWriter(t, st)
	defer release()
	big := make([]byte, maxGroupedState+1)
	if _, err := st.Put(ctx, session.Record{ID: "big", Version: 1, Meta: []byte("m"), State: big}, nil); err != nil {
		t.Fatal(err)
	}
	st.group.mu.Lock()
	active, queued := st.group.active, len(st.group.pending)
	st.group.mu.Unlock()
	if active != 1 || queued != 0 {
		t.Errorf("after the large Put: %d writers active, %d Puts queued; want the held writer still busy, none queued", active, queued)
	}
}
