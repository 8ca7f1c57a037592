package session_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// versionCounter counts the Store.Version reads of the store it wraps.
type versionCounter struct {
	session.Store
	n atomic.Int64
}

func (c *versionCounter) Version(ctx context.Context, id string) (uint64, error) {
	c.n.Add(1)
	return c.Store.Version(ctx, id)
}

// TestTellOnCurrentCache: a tell on a cached session that is current makes
// no Version read (its write's compare-and-swap confirms the version);
// every outcome that rests on a stale cache is answered from the store: a
// tell of the generation another Manager applied is a retry, a tell of the
// generation that is pending now applies, a claim sees the other Manager's
// leases.
func TestTellOnCurrentCache(t *testing.T) {
	ctx := context.Background()
	st := &versionCounter{Store: sharedStore(t, nil)}
	a, b := session.NewManager(st, session.Options{}), session.NewManager(st, session.Options{})
	s, err := a.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Seed: seed(9)})
	if err != nil {
		t.Fatal(err)
	}
	b0, _ := a.Ask(ctx, s.ID)
	before := st.n.Load()
	if _, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: fitness(b0)}); err != nil {
		t.Fatal(err)
	}
	if n := st.n.Load() - before; n != 0 {
		t.Errorf("a tell on a current cache made %d Version reads, want 0", n)
	}

	// b applies generation 1; a's cache still holds it pending.
	b1, _ := b.Ask(ctx, s.ID)
	if _, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 1, Fitness: fitness(b1)}); err != nil {
		t.Fatal(err)
	}
	// The same tell through a is a retry of what b applied, not a second
	// application from a's stale cache.
	got, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 1, Fitness: fitness(b1)})
	if err != nil || got.Generation != 2 {
		t.Fatalf("the retried tell through a: generation %d, %v; want 2", got.Generation, err)
	}
	if h, _ := a.History(ctx, s.ID, 0, 0); len(h) != 2 {
		t.Fatalf("%d history records, want 2", len(h))
	}
	// b applies generation 2; a tell of generation 3 through a, whose
	// cache says 2 is pending, is a conflict from the store's view: 3 has
	// not been asked.
	b2, _ := b.Ask(ctx, s.ID)
	if _, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 2, Fitness: fitness(b2)}); err != nil {
		t.Fatal(err)
	}
	b3, _ := b.Ask(ctx, s.ID)
	if got, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 3, Fitness: fitness(b3)}); err != nil || got.Generation != 4 {
		t.Fatalf("a's tell of the pending generation 3: generation %d, %v; want 4", got.Generation, err)
	}
	// A claim through b (its cache stale now) takes another candidate than
	// the one a's worker holds.
	ca, err := a.Claim(ctx, s.ID, 0, "wa")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Claim(ctx, s.ID, 0, "wb")
	if err != nil {
		t.Fatal(err)
	}
	if ca.Generation != 4 || cb.Generation != 4 || ca.Index == cb.Index {
		t.Fatalf("claims through a and b: generation %d index %d, generation %d index %d", ca.Generation, ca.Index, cb.Generation, cb.Index)
	}
}

// newerGetter adds session.NewerGetter to the store it wraps (as the
// PostgreSQL store has it) and counts the reads.
type newerGetter struct {
	session.Store
	versions, gets, newer atomic.Int64
}

func (c *newerGetter) Version(ctx context.Context, id string) (uint64, error) {
	c.versions.Add(1)
	return c.Store.Version(ctx, id)
}

func (c *newerGetter) Get(ctx context.Context, id string) (session.Record, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, id)
}

func (c *newerGetter) GetNewer(ctx context.Context, id string, version uint64) (session.Record, error) {
	c.newer.Add(1)
	r, err := c.Store.Get(ctx, id)
	if err == nil && r.Version == version {
		r = session.Record{ID: id, Version: version}
	}
	return r, err
}

func (c *newerGetter) reads() [3]int64 {
	return [3]int64{c.versions.Load(), c.gets.Load(), c.newer.Load()}
}

// TestStaleCacheOneRead: on a store with GetNewer, a request that finds its
// cache stale (another server wrote since) costs one read, which brings the
// stored session; one on a current cache costs none (a tell) or one that
// brings nothing (an ask).
func TestStaleCacheOneRead(t *testing.T) {
	ctx := context.Background()
	st := &newerGetter{Store: sharedStore(t, nil)}
	a, b := session.NewManager(st, session.Options{}), session.NewManager(st, session.Options{})
	s, err := a.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Seed: seed(9)})
	if err != nil {
		t.Fatal(err)
	}
	for g := range 6 {
		m := a
		if g%2 == 1 {
			m = b // every tell through the other Manager: each finds its cache stale
		}
		before := st.reads()
		batch, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		mid := st.reads()
		got, err := m.Tell(ctx, s.ID, session.TellParams{Generation: g, Fitness: fitness(batch)})
		if err != nil || got.Generation != g+1 {
			t.Fatalf("tell %d: generation %d, %v", g, got.Generation, err)
		}
		after := st.reads()
		ask := [3]int64{mid[0] - before[0], mid[1] - before[1], mid[2] - before[2]}
		tell := [3]int64{after[0] - mid[0], after[1] - mid[1], after[2] - mid[2]}
		// The first ask through b has nothing cached: one Get.
		wantAsk := [3]int64{0, 0, 1}
		if g == 1 {
			wantAsk = [3]int64{0, 1, 0}
		}
		if ask != wantAsk || tell != [3]int64{} {
			t.Errorf("generation %d: reads (Version, Get, GetNewer) of the ask %v, of the tell %v; want %v and none", g, ask, tell, wantAsk)
		}
	}
	// A tell straight through the stale Manager, without an ask: one read.
	batch, _ := a.Ask(ctx, s.ID) // a is current after this ask (b told last)
	if _, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 6, Fitness: fitness(batch)}); err != nil {
		t.Fatal(err)
	}
	b7, _ := a.Ask(ctx, s.ID)
	before := st.reads()
	got, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 7, Fitness: fitness(b7)})
	if err != nil || got.Generation != 8 {
		t.Fatalf("tell 7 through b: generation %d, %v", got.Generation, err)
	}
	if d := st.reads(); d != [3]int64{before[0], before[1], before[2] + 1} {
		t.Errorf("a tell on a stale cache: reads %v -> %v, want one GetNewer", before, d)
	}
}
