package session_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

func openStore(t *testing.T, path string) *bolt.Store {
	t.Helper()
	st, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newManager(t *testing.T) (*session.Manager, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st := openStore(t, path)
	t.Cleanup(func() { st.Close() })
	return session.NewManager(st, session.Options{}), path
}

func seed(v uint64) *uint64 { return &v }

func sphere(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

func fitness(b session.Batch) []float64 {
	f := make([]float64, len(b.Candidates))
	for i, x := range b.Candidates {
		f[i] = sphere(x)
	}
	return f
}

// runGenerations asks and tells gens generations of session id on the
// sphere and returns the session after the last tell.
func runGenerations(t *testing.T, m *session.Manager, id string, gens int) session.Session {
	t.Helper()
	ctx := context.Background()
	var s session.Session
	for range gens {
		b, err := m.Ask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = m.Tell(ctx, id, session.TellParams{Generation: b.Generation, Fitness: fitness(b)}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func wantCode(t *testing.T, err error, code session.Code) {
	t.Helper()
	if got := session.ErrorCode(err); err == nil || got != code {
		t.Fatalf("error %v (code %q), want code %q", err, got, code)
	}
}

func TestAskTellRetryConflict(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES, session.AlgorithmSepCMAES} {
		t.Run(alg, func(t *testing.T) {
			m, _ := newManager(t)
			s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Algorithm: alg, Seed: seed(7), Metadata: []byte(` {"a": 1} `)})
			if err != nil {
				t.Fatal(err)
			}
			// Default λ: 4 + ⌊3 ln 3⌋ = 7 for both (selfcma.DefaultLambda).
			wantLambda := 7
			if s.Generation != 0 || s.Seed != 7 || s.PopulationSize != wantLambda || s.Status != session.StatusRunning || string(s.Metadata) != `{"a":1}` {
				t.Fatalf("created %+v", s)
			}
			b1, err := m.Ask(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			b2, _ := m.Ask(ctx, s.ID)
			if !reflect.DeepEqual(b1, b2) {
				t.Fatal("two asks gave different batches")
			}
			f := fitness(b1)
			f[2] = math.NaN() // a failed evaluation
			s1, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: f})
			if err != nil {
				t.Fatal(err)
			}
			if s1.Generation != 1 || s1.Evaluations != wantLambda {
				t.Fatalf("after tell: generation %d, evaluations %d", s1.Generation, s1.Evaluations)
			}
			again, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: f})
			if err != nil || !reflect.DeepEqual(again, s1) {
				t.Fatalf("retry: %v, answer differs: %v", err, !reflect.DeepEqual(again, s1))
			}
			g := slicesClone(f)
			g[0]++
			_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: g})
			wantCode(t, err, session.CodeConflict)
			_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 5, Fitness: f})
			wantCode(t, err, session.CodeConflict)
			_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 1, Fitness: f[:3]})
			wantCode(t, err, session.CodeOutOfRange)
			h, err := m.History(ctx, s.ID, 0, 0)
			if err != nil || len(h) != 1 || h[0].Generation != 0 || (alg == session.AlgorithmSelfCMAES) != (h[0].Aux != nil) {
				t.Fatalf("history %+v, %v", h, err)
			}
			if got, _ := m.Get(ctx, s.ID); !reflect.DeepEqual(got, s1) {
				t.Fatal("bad tells changed the session")
			}
		})
	}
}

func slicesClone(f []float64) []float64 { return append([]float64(nil), f...) }

// A new Manager over the reopened file continues exactly: CMA-ES, and
// self-CMA-ES small and at n = 60 (where its state leaves out most of the
// primary's C, which the kept step gives: state encoding 6).
func TestRestartContinues(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		alg     string
		n, gens int
	}{{session.AlgorithmCMAES, 4, 30}, {session.AlgorithmSelfCMAES, 4, 30}, {session.AlgorithmSelfCMAES, 60, 6}} {
		t.Run(fmt.Sprintf("%s/n=%d", c.alg, c.n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			x0 := make([]float64, c.n)
			for i := range x0 {
				x0[i] = 1
			}
			run := func(restart bool) []session.Batch {
				st := openStore(t, path+map[bool]string{true: "r", false: ""}[restart])
				m := session.NewManager(st, session.Options{})
				s, err := m.Create(ctx, session.CreateParams{Algorithm: c.alg, X0: x0, Sigma0: 1, Seed: seed(3)})
				if err != nil {
					t.Fatal(err)
				}
				var out []session.Batch
				for range c.gens {
					if restart {
						st.Close()
						st = openStore(t, path+"r")
						m = session.NewManager(st, session.Options{})
					}
					b, err := m.Ask(ctx, s.ID)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, b)
					if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: fitness(b)}); err != nil {
						t.Fatal(err)
					}
				}
				st.Close()
				return out
			}
			want, got := run(false), run(true)
			if !reflect.DeepEqual(got, want) {
				t.Fatal("a session reloaded every generation went another way")
			}
		})
	}
}

func TestStopped(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 1}, Sigma0: 1, Seed: seed(1), Termination: session.Termination{MaxEvaluations: 12}})
	if err != nil {
		t.Fatal(err)
	}
	var last session.TellParams
	for s.Status == session.StatusRunning {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		last = session.TellParams{Generation: b.Generation, Fitness: fitness(b)}
		if s, err = m.Tell(ctx, s.ID, last); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.StopReasons) != 1 || s.StopReasons[0].Name != "max_evaluations" {
		t.Fatalf("stop reasons %+v", s.StopReasons)
	}
	_, err = m.Ask(ctx, s.ID)
	wantCode(t, err, session.CodeStopped)
	if _, err := m.Tell(ctx, s.ID, last); err != nil {
		t.Fatalf("retry of the stopping tell: %v", err)
	}
	_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: s.Generation, Fitness: last.Fitness})
	wantCode(t, err, session.CodeStopped)
}

// Stop ends a running session at its client's request, for good: after a
// restart too, with its history, and without an IPOP restart; a retry of
// the last tell is still answered; stopping again changes nothing.
func TestStop(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES, session.AlgorithmSepCMAES} {
		t.Run(alg, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			st := openStore(t, path)
			m := session.NewManager(st, session.Options{})
			max := 3
			s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 1, Algorithm: alg, PopulationSize: 8, Seed: seed(6),
				Restarts: session.Restarts{Strategy: "ipop", Max: &max}})
			if err != nil {
				t.Fatal(err)
			}
			var last session.TellParams
			for range 3 {
				b, _ := m.Ask(ctx, s.ID)
				last = session.TellParams{Generation: b.Generation, Fitness: fitness(b)}
				if _, err := m.Tell(ctx, s.ID, last); err != nil {
					t.Fatal(err)
				}
			}
			stopped, err := m.Stop(ctx, s.ID)
			want := []session.StopReason{{Name: "requested", Value: 3}}
			if err != nil || stopped.Status != session.StatusStopped || !reflect.DeepEqual(stopped.StopReasons, want) || stopped.Generation != 3 {
				t.Fatalf("Stop: %+v, %v", stopped, err)
			}
			again, err := m.Stop(ctx, s.ID)
			if err != nil || !reflect.DeepEqual(again, stopped) {
				t.Fatalf("Stop again: %v, changed %v", err, !reflect.DeepEqual(again, stopped))
			}
			_, err = m.Ask(ctx, s.ID)
			wantCode(t, err, session.CodeStopped)
			_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 3, Fitness: last.Fitness})
			wantCode(t, err, session.CodeStopped)
			if r, err := m.Tell(ctx, s.ID, last); err != nil || r.Generation != 3 {
				t.Fatalf("retry of the last tell: %+v, %v", r, err)
			}

			st.Close()
			st = openStore(t, path)
			defer st.Close()
			m = session.NewManager(st, session.Options{})
			if got, err := m.Get(ctx, s.ID); err != nil || !reflect.DeepEqual(got, stopped) {
				t.Fatalf("after a restart: %+v, %v", got, err)
			}
			if h, err := m.History(ctx, s.ID, 0, 0); err != nil || len(h) != 3 {
				t.Fatalf("history after Stop: %d records, %v", len(h), err)
			}
			if got, _ := m.Get(ctx, s.ID); got.Restarts.Count != 0 {
				t.Fatalf("a restart followed the stop: %+v", got.Restarts)
			}
			_, err = m.Stop(ctx, "nope")
			wantCode(t, err, session.CodeNotFound)
		})
	}
}

func TestCreateValidation(t *testing.T) {
	m, _ := newManager(t)
	one := 1
	tests := []struct {
		name string
		p    session.CreateParams
	}{
		{"empty x0", session.CreateParams{Sigma0: 1}},
		{"nan x0", session.CreateParams{X0: []float64{math.NaN()}, Sigma0: 1}},
		{"sigma0 0", session.CreateParams{X0: []float64{1}}},
		{"lambda 1", session.CreateParams{X0: []float64{1}, Sigma0: 1, PopulationSize: 1}},
		{"dimension", session.CreateParams{X0: make([]float64, 2001), Sigma0: 1}},
		{"algorithm", session.CreateParams{X0: []float64{1}, Sigma0: 1, Algorithm: "x"}},
		{"init with cma-es", session.CreateParams{X0: []float64{1}, Sigma0: 1, Algorithm: "cma-es", Init: "uniform"}},
		{"bounds order", session.CreateParams{X0: []float64{1}, Sigma0: 1, Bounds: &session.Bounds{Lower: []float64{2}, Upper: []float64{2}}}},
		{"x0 outside", session.CreateParams{X0: []float64{3}, Sigma0: 1, Bounds: &session.Bounds{Lower: []float64{0}, Upper: []float64{2}}}},
		{"bounds length", session.CreateParams{X0: []float64{1}, Sigma0: 1, Bounds: &session.Bounds{Lower: []float64{0, 0}, Upper: []float64{2}}}},
		{"max with strategy none", session.CreateParams{X0: []float64{1}, Sigma0: 1, Restarts: session.Restarts{Strategy: session.RestartsNone, Max: &one}}},
		{"metadata not object", session.CreateParams{X0: []float64{1}, Sigma0: 1, Metadata: []byte("[1]")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Create(context.Background(), tc.p)
			wantCode(t, err, session.CodeOutOfRange)
		})
	}
	if l, _ := m.List(context.Background(), "", 0); len(l) != 0 {
		t.Errorf("failed creates left %d sessions", len(l))
	}
}

// Eight clients race tells on one session: every generation is applied
// exactly once, and the losers get conflicts or retry answers.
func TestRacingTells(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: make([]float64, 5), Sigma0: 1, Seed: seed(9)})
	if err != nil {
		t.Fatal(err)
	}
	const gens = 40
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				b, err := m.Ask(ctx, s.ID)
				if err != nil {
					t.Error(err)
					return
				}
				if b.Generation >= gens {
					return
				}
				_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: fitness(b)})
				if err != nil && session.ErrorCode(err) != session.CodeConflict {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	h, err := m.History(ctx, s.ID, 0, 0)
	if err != nil || len(h) < gens {
		t.Fatalf("history of %d records, %v", len(h), err)
	}
	for i, r := range h {
		if r.Generation != i || r.Evaluations != (i+1)*s.PopulationSize {
			t.Fatalf("record %d: generation %d, evaluations %d", i, r.Generation, r.Evaluations)
		}
	}
}

// With a cache of two sessions, or of fewer bytes than six sessions' states,
// sessions evicted and decoded again go on exactly as if they had stayed,
// and the cache stays within its bounds.
func TestCacheEviction(t *testing.T) {
	t.Run("large sessions told at once", testCacheLarge)
	for _, tc := range []struct {
		name string
		opt  session.Options
	}{
		{"sessions", session.Options{CacheCap: 2}},
		// Fewer bytes than six sessions hold (n = 2, λ = 6, active, as the
		// engine reports them): some are evicted.
		{"bytes", session.Options{CacheBytes: 3 * cmaes.HeldBytes(2, 6, true, false, cmaes.NumericsLatest)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "s.db")
			st := openStore(t, path)
			defer st.Close()
			small := session.NewManager(st, tc.opt)
			ref, _ := newManager(t)
			var ids, refIDs []string
			for i := range 6 {
				p := session.CreateParams{X0: []float64{1, 2}, Sigma0: 1, Seed: seed(uint64(i)), PopulationSize: 6}
				s, err := small.Create(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				r, err := ref.Create(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				ids, refIDs = append(ids, s.ID), append(refIDs, r.ID)
			}
			for range 5 {
				for i := range ids {
					b, err := small.Ask(ctx, ids[i])
					if err != nil {
						t.Fatal(err)
					}
					rb, _ := ref.Ask(ctx, refIDs[i])
					if !reflect.DeepEqual(b, rb) {
						t.Fatalf("session %d: the batch differs after eviction", i)
					}
					if _, err := small.Tell(ctx, ids[i], session.TellParams{Generation: b.Generation, Fitness: fitness(b)}); err != nil {
						t.Fatal(err)
					}
					ref.Tell(ctx, refIDs[i], session.TellParams{Generation: rb.Generation, Fitness: fitness(rb)})
					n, bytes := session.CacheUse(small)
					if tc.opt.CacheCap > 0 && n > tc.opt.CacheCap || tc.opt.CacheBytes > 0 && bytes > tc.opt.CacheBytes {
						t.Fatalf("the cache holds %d sessions, %d bytes; options %+v", n, bytes, tc.opt)
					}
					if n == 0 || bytes == 0 {
						t.Fatalf("the cache holds %d sessions, %d bytes: the one just used should stay", n, bytes)
					}
				}
			}
		})
	}
}

// testCacheLarge: six self-CMA-ES sessions of n = 2000 told at once, with a
// cache of 256 MiB, each session holding more than that decoded. The
// sessions take turns: the cache's count, sessions in use included, stays
// under its bound plus one session (what the cache reserves for one, from
// the engine's report). Each tell decodes C's eigendecomposition and makes
// one: about a minute here; -short skips it, except in CI.
func testCacheLarge(t *testing.T) {
	if testing.Short() && os.Getenv("CI") == "" {
		t.Skip("SKIP: -short: six sessions of n = 2000 take about a minute")
	}
	const n, sessions, cacheBytes = 2000, 6, 256 << 20
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "s.db"))
	defer st.Close()
	m := session.NewManager(st, session.Options{CacheBytes: cacheBytes})
	x0 := make([]float64, n)
	ids := make([]string, sessions)
	for i := range ids {
		s, err := m.Create(ctx, session.CreateParams{X0: x0, Sigma0: 1, Algorithm: session.AlgorithmSelfCMAES, Seed: seed(uint64(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = s.ID
	}
	lambda := cmaes.DefaultLambda(n)
	one := selfcma.HeldBytes(n, lambda, true, true, cmaes.NumericsLatest, true) // the cache's reservation
	var peak int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if _, b := session.CacheUse(m); b > peak {
				peak = b
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			f := make([]float64, lambda)
			for k := range f {
				f[k] = float64(i + k)
			}
			s, err := m.Tell(ctx, id, session.TellParams{Generation: 0, Fitness: f})
			if err != nil || s.Generation != 1 {
				t.Errorf("session %d: generation %d, %v", i, s.Generation, err)
			}
		})
	}
	wg.Wait()
	close(done)
	<-sampled
	t.Logf("%d sessions of n = %d told at once: the cache counted at most %d MB (bound %d MB, one session %d MB)", sessions, n, peak>>20, cacheBytes>>20, one>>20)
	if peak > cacheBytes+one {
		t.Errorf("the cache counted %d bytes, want at most its bound and one session, %d", peak, cacheBytes+one)
	}
}
