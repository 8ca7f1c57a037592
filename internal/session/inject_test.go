package session_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// injectRun drives a session for gens generations, injecting points[g]
// (when present) after the ask of generation g. Between, it calls at(g) with
// the manager, which it may replace (a reopened store); it returns every
// batch and the history.
func injectRun(t *testing.T, p session.CreateParams, gens int, points map[int][][]float64,
	m *session.Manager, at func(g int, m *session.Manager) *session.Manager) ([]session.Batch, []session.HistoryRecord, session.Session) {
	t.Helper()
	ctx := context.Background()
	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var batches []session.Batch
	for g := range gens {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
		if pts, ok := points[g]; ok {
			in, err := m.Inject(ctx, s.ID, pts, true)
			if err != nil || in != (session.Injection{Queued: len(pts), Generation: g + 1, Waiting: len(pts)}) {
				t.Fatalf("generation %d: inject: %+v, %v", g, in, err)
			}
		}
		if at != nil {
			m = at(g, m)
		}
		if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: g, Fitness: fitness(b)}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := m.History(ctx, s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err = m.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return batches, h, s
}

// Injected points are persisted with the state: a reopened store, a write
// that failed (nothing queued) and another Manager on the same store all
// continue the run exactly as one without them.
func TestInjectPersisted(t *testing.T) {
	ctx := context.Background()
	points := map[int][][]float64{1: {{0.1, 0.2, 0.3, 0.4}}, 4: {{0, 0, 0, 0}, {1, -1, 1, -1}}, 5: {{0.5, 0.5, 0.5, 0.5}}}
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES, session.AlgorithmSepCMAES} {
		t.Run(alg, func(t *testing.T) {
			p := session.CreateParams{X0: []float64{1, -2, 0.5, 3}, Sigma0: 0.7, Algorithm: alg, PopulationSize: 8, Seed: seed(21)}
			plain, _ := newManager(t)
			wantB, wantH, wantS := injectRun(t, p, 10, points, plain, nil)
			for g, pts := range points {
				for k, x := range pts {
					if !reflect.DeepEqual(wantB[g+1].Candidates[k], x) {
						t.Fatalf("generation %d: candidate %d is %v, injected %v", g+1, k, wantB[g+1].Candidates[k], x)
					}
				}
				if wantH[g+1].Injected != len(pts) || wantH[g].Injected != len(points[g-1]) {
					t.Errorf("history of generation %d: %d injected, want %d", g+1, wantH[g+1].Injected, len(pts))
				}
			}

			// The store reopened after every injection.
			path := filepath.Join(t.TempDir(), "r.db")
			st := openStore(t, path)
			reopen := func(g int, m *session.Manager) *session.Manager {
				if _, ok := points[g]; !ok {
					return m
				}
				st.Close()
				st = openStore(t, path)
				return session.NewManager(st, session.Options{})
			}
			gotB, gotH, gotS := injectRun(t, p, 10, points, session.NewManager(st, session.Options{}), reopen)
			st.Close()
			same(t, "reopened", gotB, gotH, gotS, wantB, wantH, wantS)

			// A failed write queues nothing: the injection sent again is
			// queued once.
			fs := &faultStore{Store: openStore(t, filepath.Join(t.TempDir(), "f.db"))}
			defer fs.Store.(interface{ Close() error }).Close()
			fm := session.NewManager(fs, session.Options{})
			s, err := fm.Create(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := fm.Get(ctx, s.ID)
			fs.arm(failBefore)
			_, err = fm.Inject(ctx, s.ID, [][]float64{{9, 9, 9, 9}}, true)
			wantCode(t, err, session.CodeInternal)
			if after, _ := fm.Get(ctx, s.ID); !reflect.DeepEqual(after, before) || after.Injected.Waiting != 0 {
				t.Fatalf("a failed injection changed the session: %+v", after.Injected)
			}
			if in, err := fm.Inject(ctx, s.ID, [][]float64{{9, 9, 9, 9}}, true); err != nil || in.Waiting != 1 {
				t.Fatalf("the injection sent again: %+v %v", in, err)
			}

			// Another Manager's injection is seen by this one's next tell.
			st2 := openStore(t, filepath.Join(t.TempDir(), "s.db"))
			defer st2.Close()
			a, b := session.NewManager(st2, session.Options{}), session.NewManager(st2, session.Options{})
			s, err = a.Create(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			b0, _ := a.Ask(ctx, s.ID) // cached in a
			if _, err := b.Inject(ctx, s.ID, [][]float64{{7, 7, 7, 7}}, true); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: fitness(b0)}); err != nil {
				t.Fatal(err)
			}
			if b1, _ := a.Ask(ctx, s.ID); !reflect.DeepEqual(b1.Candidates[0], []float64{7, 7, 7, 7}) {
				t.Errorf("b's injection is not in a's next batch: %v", b1.Candidates[0])
			}
		})
	}
}

func same(t *testing.T, what string, gotB []session.Batch, gotH []session.HistoryRecord, gotS session.Session,
	wantB []session.Batch, wantH []session.HistoryRecord, wantS session.Session) {
	t.Helper()
	if !reflect.DeepEqual(gotB, wantB) {
		t.Errorf("%s: the batches differ", what)
	}
	if len(gotH) != len(wantH) {
		t.Fatalf("%s: %d history records, want %d", what, len(gotH), len(wantH))
	}
	for i := range gotH {
		if !reflect.DeepEqual(gotH[i], wantH[i]) {
			t.Errorf("%s: history record %d differs", what, i)
		}
	}
	gotS.ID, gotS.CreatedAt, gotS.UpdatedAt = "", wantS.CreatedAt, wantS.UpdatedAt
	wantS.ID = ""
	if !reflect.DeepEqual(gotS, wantS) {
		t.Errorf("%s: the sessions differ:\n%+v\n%+v", what, gotS, wantS)
	}
}

// An injection keeps what the pending generation holds: its partial tell
// and its leases.
func TestInjectKeepsPendingGeneration(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(5)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	c, err := m.Claim(ctx, s.ID, time.Hour, "w1")
	if err != nil || c.Index != 0 {
		t.Fatalf("claim: %+v %v", c, err)
	}
	f := fitness(b)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{1}, Fitness: f[1:2]}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Inject(ctx, s.ID, [][]float64{{0, 0}}, true); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Get(ctx, s.ID)
	if !reflect.DeepEqual(got.Partial.Indices, []int{1}) || got.Injected.Waiting != 1 {
		t.Fatalf("after the injection: partial %+v, injected %+v", got.Partial, got.Injected)
	}
	if c2, err := m.Claim(ctx, s.ID, time.Hour, "w2"); err != nil || c2.Index != 2 {
		t.Fatalf("a claim after the injection: %+v %v, want candidate 2 (0 leased, 1 told)", c2, err)
	}
	// The rest of the generation completes it; the point is next.
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{0, 2, 3}, Fitness: []float64{f[0], f[2], f[3]}}); err != nil {
		t.Fatal(err)
	}
	if b1, _ := m.Ask(ctx, s.ID); !reflect.DeepEqual(b1.Candidates[0], []float64{0, 0}) {
		t.Fatalf("generation 1 starts with %v", b1.Candidates[0])
	}
}

// TestInjectIdempotent: an injection sent again with its Idempotency-Key
// (its answer lost after the commit) queues nothing more and is answered as
// the first was, after a restart too; the same key with other points is
// out_of_range; without a key every injection queues.
func TestInjectIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st := openStore(t, path)
	m := session.NewManager(st, session.Options{})
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 6, Seed: seed(3)})
	if err != nil {
		t.Fatal(err)
	}
	pts := [][]float64{{0.5, 0.5}}
	want := session.Injection{Queued: 1, Generation: 1, Waiting: 1}
	in, queued, err := m.InjectIdempotent(ctx, s.ID, pts, true, "k1")
	if err != nil || !queued || in != want {
		t.Fatalf("first injection: %+v %v %v, want %+v queued", in, queued, err, want)
	}
	st.Close()
	st = openStore(t, path)
	defer st.Close()
	m = session.NewManager(st, session.Options{})
	for range 2 {
		in, queued, err = m.InjectIdempotent(ctx, s.ID, pts, true, "k1")
		if err != nil || queued || in != want {
			t.Fatalf("the retry: %+v %v %v, want %+v not queued", in, queued, err, want)
		}
	}
	_, _, err = m.InjectIdempotent(ctx, s.ID, [][]float64{{0.5, 0.25}}, true, "k1")
	wantCode(t, err, session.CodeOutOfRange)
	_, _, err = m.InjectIdempotent(ctx, s.ID, pts, false, "k1")
	wantCode(t, err, session.CodeOutOfRange)
	_, _, err = m.InjectIdempotent(ctx, s.ID, pts, true, "bad\x01key")
	wantCode(t, err, session.CodeInvalid)
	if in, err := m.Inject(ctx, s.ID, pts, true); err != nil || in.Waiting != 2 {
		t.Fatalf("an injection without a key: %+v %v, want 2 waiting", in, err)
	}
	// The batch of generation 1 holds the two points queued, not three.
	b, _ := m.Ask(ctx, s.ID)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: fitness(b)}); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Get(ctx, s.ID)
	if got.Injected.InBatch != 2 || got.Injected.Waiting != 0 {
		t.Fatalf("after the tell: %+v, want 2 injected in the batch, none waiting", got.Injected)
	}
	// The key is still known after the generation: a late retry queues nothing.
	if in, queued, err := m.InjectIdempotent(ctx, s.ID, pts, true, "k1"); err != nil || queued || in != want {
		t.Fatalf("a late retry: %+v %v %v", in, queued, err)
	}
}
