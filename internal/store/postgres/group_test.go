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

// heldWriter makes g's only writer busy for d (a statement that sleeps),
// so that the Puts sent meanwhile queue into one group. It returns when
// the writer is busy, and a wait for its end.
func heldWriter(t *testing.T, g *grouper, d time.Duration) (wait func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := g.put(context.Background(), &groupPut{id: "\xff", sql: "SELECT 1 FROM pg_sleep($1)", args: []any{d.Seconds()}})
		done <- err
	}()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		busy := g.active == 1
		g.mu.Unlock()
		if busy {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the writer never started")
		}
	}
	return func() {
		if err := <-done; err != nil {
			t.Errorf("the held writer: %v", err)
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

	wait := heldWriter(t, st.group, 300*time.Millisecond)
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
	wg.Wait()
	wait()

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
	wait := heldWriter(t, st.group, 300*time.Millisecond)
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
	wg.Wait()
	wait()
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
	wait := heldWriter(t, st.group, 3*time.Second)
	defer wait()
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
