package session_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// Two Managers over one store stand for two servers sharing a database.

func sharedStore(t *testing.T, clk *clock) *bolt.Store {
	t.Helper()
	if clk == nil {
		clk = &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	}
	st := openStoreClock(t, filepath.Join(t.TempDir(), "shared.db"), clk)
	t.Cleanup(func() { st.Close() })
	return st
}

// TestSharedStaleCache: a Manager whose cached session another Manager
// has advanced sees the new version at its next operation: get, ask, tell
// and stop answer from the store, never from the stale cache.
func TestSharedStaleCache(t *testing.T) {
	ctx := context.Background()
	st := sharedStore(t, nil)
	a, b := session.NewManager(st, session.Options{}), session.NewManager(st, session.Options{})
	s, err := a.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Seed: seed(4)})
	if err != nil {
		t.Fatal(err)
	}
	b0, _ := a.Ask(ctx, s.ID) // cached in a
	if _, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: fitness(b0)}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Get(ctx, s.ID); err != nil || got.Generation != 1 {
		t.Fatalf("a's Get after b's tell: generation %d (%v), want 1", got.Generation, err)
	}
	b1, _ := a.Ask(ctx, s.ID)
	want, _ := b.Ask(ctx, s.ID)
	if b1.Generation != 1 || !reflect.DeepEqual(b1.Candidates, want.Candidates) {
		t.Fatalf("a's Ask after b's tell: generation %d, the candidates b hands out: %v", b1.Generation, reflect.DeepEqual(b1.Candidates, want.Candidates))
	}
	// b tells a part, a the rest: the generation is applied once, as one
	// Manager would have.
	if _, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 1, Indices: []int{0}, Fitness: fitness(b1)[:1]}); err != nil {
		t.Fatal(err)
	}
	f := fitness(b1)
	idx := make([]int, len(f)-1)
	for i := range idx {
		idx[i] = i + 1
	}
	got, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 1, Indices: idx, Fitness: f[1:]})
	if err != nil || got.Generation != 2 {
		t.Fatalf("a's tell of the rest: generation %d, %v", got.Generation, err)
	}
	if h, _ := b.History(ctx, s.ID, 0, 0); len(h) != 2 {
		t.Fatalf("%d history records, want 2", len(h))
	}
	// b stops it; a sees it stopped.
	if _, err := b.Stop(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = a.Ask(ctx, s.ID)
	wantCode(t, err, session.CodeStopped)
	// a deletes it; b knows it no more.
	if err := a.Delete(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.Get(ctx, s.ID)
	wantCode(t, err, session.CodeNotFound)
}

// TestSharedRacingTells: workers, each with a Manager of its own (a server
// each), tell the values of their candidates of every generation at once;
// the conflicting writes retry, no value is lost, every generation is
// applied once, and the run is the one a single Manager makes.
func TestSharedRacingTells(t *testing.T) {
	ctx := context.Background()
	st := sharedStore(t, nil)
	const lambda, gens = 6, 8
	p := session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: lambda, Seed: seed(12)}
	ms := make([]*session.Manager, lambda)
	for i := range ms {
		ms[i] = session.NewManager(st, session.Options{})
	}
	s, err := ms[0].Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for g := range gens {
		b, err := ms[g%lambda].Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		f := fitness(b)
		var wg sync.WaitGroup
		for i := range lambda {
			wg.Go(func() {
				if _, err := ms[i].Tell(ctx, s.ID, session.TellParams{Generation: g, Indices: []int{i}, Fitness: f[i : i+1]}); err != nil {
					t.Errorf("generation %d, candidate %d: %v", g, i, err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	got, err := ms[1].Get(ctx, s.ID)
	if err != nil || got.Generation != gens {
		t.Fatalf("generation %d (%v), want %d", got.Generation, err, gens)
	}
	// The reference: one Manager, whole tells.
	ref := session.NewManager(sharedStore(t, nil), session.Options{})
	r, _ := ref.Create(ctx, p)
	for range gens {
		b, _ := ref.Ask(ctx, r.ID)
		if _, err := ref.Tell(ctx, r.ID, session.TellParams{Generation: b.Generation, Fitness: fitness(b)}); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := ref.Get(ctx, r.ID)
	if !reflect.DeepEqual(got.Mean, want.Mean) || got.Sigma != want.Sigma {
		t.Fatalf("the shared run went another way: mean %v, σ %v; want %v, %v", got.Mean, got.Sigma, want.Mean, want.Sigma)
	}
	if h, _ := ms[2].History(ctx, s.ID, 0, 0); len(h) != gens {
		t.Fatalf("%d history records, want %d", len(h), gens)
	}
}

// conflictStore refuses every Put as written by someone else, while its
// Version keeps agreeing with the reader: a writer that never wins.
type conflictStore struct {
	session.Store
	puts atomic.Int64
}

func (s *conflictStore) Put(ctx context.Context, rec session.Record, h *session.HistoryEntry) (uint64, error) {
	if rec.Version == 0 {
		return s.Store.Put(ctx, rec, h)
	}
	s.puts.Add(1)
	return 0, fmt.Errorf("conflictStore: %w", session.ErrVersion)
}

// TestUpdateRetriesBounded: a write that keeps finding another version is
// tried a bounded number of times, then answered as a conflict, with
// nothing applied.
func TestUpdateRetriesBounded(t *testing.T) {
	ctx := context.Background()
	st := &conflictStore{Store: sharedStore(t, nil)}
	m := session.NewManager(st, session.Options{})
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Seed: seed(3)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: fitness(b)})
	wantCode(t, err, session.CodeConflict)
	if n := st.puts.Load(); n < 2 || n > 16 {
		t.Fatalf("%d attempts, want a few and a bound", n)
	}
	if got, _ := m.Get(ctx, s.ID); got.Generation != 0 {
		t.Fatalf("generation %d after the failed tell", got.Generation)
	}
	// The cache was dropped: the next ask decodes the stored batch again.
	if again, _ := m.Ask(ctx, s.ID); !reflect.DeepEqual(again.Candidates, b.Candidates) {
		t.Fatal("the batch changed after the failed tell")
	}
}

// TestMetaOnlyWrites: a partial tell and a stop leave the stored state's
// bytes as they were; the stop survives a restart as a stop requested at
// the generation told, and the session continues bit for bit with a
// session told whole.
func TestMetaOnlyWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	st := openStore(t, path)
	m := session.NewManager(st, session.Options{})
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Seed: seed(8)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: fitness(b)}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.Get(ctx, s.ID)
	b1, _ := m.Ask(ctx, s.ID)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 1, Indices: []int{1}, Fitness: fitness(b1)[1:2]}); err != nil {
		t.Fatal(err)
	}
	stopped, err := m.Stop(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := st.Get(ctx, s.ID)
	if after.Version != before.Version+2 || !bytes.Equal(after.State, before.State) || bytes.Equal(after.Meta, before.Meta) {
		t.Fatalf("version %d → %d, state kept %v, meta changed %v", before.Version, after.Version, bytes.Equal(after.State, before.State), !bytes.Equal(after.Meta, before.Meta))
	}
	want := []session.StopReason{{Name: "requested", Value: 1}}
	if !reflect.DeepEqual(stopped.StopReasons, want) || stopped.Status != session.StatusStopped {
		t.Fatalf("stop: %v %v", stopped.Status, stopped.StopReasons)
	}
	st.Close()
	st = openStore(t, path)
	defer st.Close()
	m = session.NewManager(st, session.Options{})
	got, err := m.Get(ctx, s.ID)
	if err != nil || !reflect.DeepEqual(got.StopReasons, want) || got.Status != session.StatusStopped || !reflect.DeepEqual(got.Partial.Indices, []int{1}) {
		t.Fatalf("after a restart: %v %v, held %v (%v)", got.Status, got.StopReasons, got.Partial.Indices, err)
	}
	_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 1, Fitness: fitness(b1)})
	wantCode(t, err, session.CodeStopped)
	if again, _ := m.Stop(ctx, s.ID); !reflect.DeepEqual(again.StopReasons, want) {
		t.Fatalf("a second stop: %v", again.StopReasons)
	}
	var probs []string
	if _, err := session.Check(ctx, st, func(id string, err error) { probs = append(probs, err.Error()) }); err != nil || len(probs) > 0 {
		t.Fatalf("Check of a session stopped by its meta: %v %v", probs, err)
	}
}

// TestSharedClaims: a lease taken through one Manager is honoured by the
// other, a renewal through the other keeps the worker's candidate, and
// the store's clock, not a Manager's, judges when a lease has run out.
func TestSharedClaims(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	st := sharedStore(t, clk)
	// The Managers' own clocks are far off: only the store's counts.
	off := func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
	a, b := session.NewManager(st, session.Options{Now: off}), session.NewManager(st, session.Options{})
	s, err := a.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(6)})
	if err != nil {
		t.Fatal(err)
	}
	claim := func(m *session.Manager, worker string, lease time.Duration) session.Claim {
		t.Helper()
		c, err := m.Claim(ctx, s.ID, lease, worker)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := claim(a, "w0", time.Minute); c.Index != 0 || !c.Expires.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("w0 through a: %+v", c)
	}
	if c := claim(b, "w1", time.Hour); c.Index != 1 {
		t.Fatalf("w1 through b: %+v, want 1 (0 is w0's)", c)
	}
	if c := claim(b, "w0", time.Second); c.Index != 0 {
		t.Fatalf("w0 through b: %+v, want its own lease", c)
	}
	clk.advance(30 * time.Second)
	if c, err := b.Renew(ctx, s.ID, 0, 0, 2*time.Minute, "w0"); err != nil || c.Index != 0 || !c.Expires.Equal(clk.Now().Add(2*time.Minute)) {
		t.Fatalf("w0 renewing through b: %+v, %v", c, err)
	}
	_, err = a.Renew(ctx, s.ID, 0, 1, time.Hour, "w0")
	wantCode(t, err, session.CodeConflict) // w1's, through the other Manager
	// w0's lease (2 minutes from 30 s) runs out by the store's clock.
	clk.advance(3 * time.Minute)
	if c := claim(a, "w2", time.Minute); c.Index != 0 {
		t.Fatalf("w2 after w0's lease ran out: %+v, want 0", c)
	}
	if c := claim(b, "", time.Minute); c.Index != 2 {
		t.Fatalf("an anonymous claim: %+v, want 2", c)
	}
	// A value told through a frees nothing for b: it has its value.
	bt, _ := a.Ask(ctx, s.ID)
	if _, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{3}, Fitness: fitness(bt)[3:]}); err != nil {
		t.Fatal(err)
	}
	if c := claim(b, "", time.Minute); c.Index != -1 {
		t.Fatalf("every candidate leased or told: %+v", c)
	}
	// The generation completes through b: a's next claim is of generation 1.
	if _, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{0, 1, 2}, Fitness: fitness(bt)[:3]}); err != nil {
		t.Fatal(err)
	}
	if c := claim(a, "w0", time.Minute); c.Generation != 1 || c.Index != 0 {
		t.Fatalf("the first claim of generation 1: %+v", c)
	}
}

// raceStore runs hook once, right after the first UpdateLeases: another
// server's write landing between a claim's lease and its check.
type raceStore struct {
	session.Store
	once sync.Once
	hook func()
}

func (s *raceStore) UpdateLeases(ctx context.Context, id string, g uint64, fn func(time.Time, []session.Lease) ([]session.Lease, error)) error {
	err := s.Store.UpdateLeases(ctx, id, g, fn)
	s.once.Do(s.hook)
	return err
}

// TestClaimRacingPartialTell: a partial tell through another Manager
// between a claim's lease and its check makes the claim look again, and
// its lease stands: one candidate leased, not two.
func TestClaimRacingPartialTell(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	st := sharedStore(t, clk)
	b := session.NewManager(st, session.Options{})
	s, err := b.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(7)})
	if err != nil {
		t.Fatal(err)
	}
	bt, _ := b.Ask(ctx, s.ID)
	rs := &raceStore{Store: st, hook: func() {
		if _, err := b.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{3}, Fitness: fitness(bt)[3:]}); err != nil {
			t.Error(err)
		}
	}}
	a := session.NewManager(rs, session.Options{})
	c, err := a.Claim(ctx, s.ID, time.Minute, "")
	if err != nil || c.Index != 0 || !reflect.DeepEqual(c.X, bt.Candidates[0]) {
		t.Fatalf("the claim: %+v, %v", c, err)
	}
	ls, _, err := st.Leases(ctx, s.ID, 0)
	if err != nil || len(ls) != 1 || ls[0].Index != 0 {
		t.Fatalf("leases after the race: %+v (%v), want candidate 0's only", ls, err)
	}
}

// TestSharedRacingWholeTells: eight clients tell different values of one
// generation through eight Managers at once: one tell is applied, the
// other seven are conflicts, and the generation has one history record.
func TestSharedRacingWholeTells(t *testing.T) {
	ctx := context.Background()
	st := sharedStore(t, nil)
	const clients = 8
	ms := make([]*session.Manager, clients)
	for i := range ms {
		ms[i] = session.NewManager(st, session.Options{})
	}
	s, err := ms[0].Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Seed: seed(21)})
	if err != nil {
		t.Fatal(err)
	}
	for g := range 3 {
		b, _ := ms[0].Ask(ctx, s.ID)
		for _, m := range ms {
			m.Ask(ctx, s.ID) // every Manager caches the session
		}
		var ok, conflict atomic.Int64
		var wg sync.WaitGroup
		for i, m := range ms {
			wg.Go(func() {
				f := fitness(b)
				f[0] += float64(i) // a tell of its own
				_, err := m.Tell(ctx, s.ID, session.TellParams{Generation: g, Fitness: f})
				switch {
				case err == nil:
					ok.Add(1)
				case session.ErrorCode(err) == session.CodeConflict:
					conflict.Add(1)
				default:
					t.Errorf("client %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 1 || conflict.Load() != clients-1 {
			t.Fatalf("generation %d: %d tells applied, %d conflicts; want 1 and %d", g, ok.Load(), conflict.Load(), clients-1)
		}
	}
	if h, _ := ms[3].History(ctx, s.ID, 0, 0); len(h) != 3 {
		t.Fatalf("%d history records, want 3", len(h))
	}
}
