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
