package session_test

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/bbob"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/sepcma"
	"github.com/selfcma/selfcma/internal/session"
)

// TestSepCovariance: a sep-cma-es session's C is diagonal: /covariance
// serves the diagonal (σ·√C_ii = stds) and, up to MaxCovarianceDimension,
// the diagonal matrix; above it the diagonal alone, where the other
// algorithms are out_of_range. The history keeps per coordinate what the
// others keep: √C_ii ascending as the axis lengths.
func TestSepCovariance(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3, 4}, Sigma0: 0.5, Algorithm: session.AlgorithmSepCMAES, Seed: seed(3)})
	if err != nil {
		t.Fatal(err)
	}
	s = runGenerations(t, m, s.ID, 15)
	c, err := m.Covariance(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Generation != s.Generation || c.Sigma != s.Sigma || len(c.C) != 4 || len(c.Diagonal) != 4 {
		t.Fatalf("covariance %+v, session generation %d σ %g", c, s.Generation, s.Sigma)
	}
	for i := range 4 {
		if got := c.Sigma * math.Sqrt(c.Diagonal[i]); math.Abs(got-s.Stds[i]) > 1e-14*s.Stds[i] {
			t.Errorf("σ·√C_%d%d = %g, stds %g", i, i, got, s.Stds[i])
		}
		for j := range 4 {
			if want := map[bool]float64{true: c.Diagonal[i], false: 0}[i == j]; c.C[i][j] != want {
				t.Errorf("C[%d][%d] = %g, want %g", i, j, c.C[i][j], want)
			}
		}
	}
	h, err := m.History(ctx, s.ID, 14, 1)
	if err != nil || len(h) != 1 {
		t.Fatal(h, err)
	}
	if len(h[0].AxisLengths) != 4 || len(h[0].Stds) != 4 || len(h[0].Mean) != 4 || !sortedAsc(h[0].AxisLengths) {
		t.Errorf("history per coordinate: axis lengths %v, stds %v, mean %v", h[0].AxisLengths, h[0].Stds, h[0].Mean)
	}

	n := session.MaxCovarianceDimension + 1
	big, err := m.Create(ctx, session.CreateParams{X0: make([]float64, n), Sigma0: 1, Algorithm: session.AlgorithmSepCMAES})
	if err != nil {
		t.Fatal(err)
	}
	c, err = m.Covariance(ctx, big.ID)
	if err != nil || c.C != nil || len(c.Diagonal) != n {
		t.Fatalf("n = %d: %d rows, %d diagonal values, %v; want 0, %d", n, len(c.C), len(c.Diagonal), err, n)
	}
}

func sortedAsc(v []float64) bool {
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			return false
		}
	}
	return true
}

// TestSepLimits: sep-cma-es has its own limits on n and λ·n, above the
// others'; options it has not are out_of_range.
func TestSepLimits(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	lim := session.DefaultLimits()
	sep, cma := session.AlgorithmSepCMAES, session.AlgorithmCMAES
	yes, pop := true, 0
	for _, tc := range []struct {
		name string
		p    session.CreateParams
		ok   bool
	}{
		{"sep above cma-es's n", session.CreateParams{X0: make([]float64, lim.MaxDimension+1), Algorithm: sep}, true},
		{"cma-es above its n", session.CreateParams{X0: make([]float64, lim.MaxDimension+1), Algorithm: cma}, false},
		{"sep above its n", session.CreateParams{X0: make([]float64, lim.MaxSepDimension+1), Algorithm: sep}, false},
		{"sep above its batch", session.CreateParams{X0: make([]float64, 1000), PopulationSize: lim.MaxSepBatch/1000 + 1, Algorithm: sep}, false},
		{"sep above cma-es's batch", session.CreateParams{X0: make([]float64, 1000), PopulationSize: lim.MaxBatch/1000 + 1, Algorithm: sep}, true},
		{"sep active", session.CreateParams{X0: make([]float64, 3), Active: &yes, Algorithm: sep}, false},
		{"sep init", session.CreateParams{X0: make([]float64, 3), Init: "uniform", Algorithm: sep}, false},
		{"sep population 0", session.CreateParams{X0: make([]float64, 3), PopulationSize: pop, Algorithm: sep}, true},
	} {
		tc.p.Sigma0 = 1
		s, err := m.Create(ctx, tc.p)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok:
			if session.ErrorCode(err) != session.CodeOutOfRange {
				t.Errorf("%s: error %v, want out_of_range", tc.name, err)
			}
		case s.Algorithm != sep || s.Active:
			t.Errorf("%s: algorithm %q, active %v", tc.name, s.Algorithm, s.Active)
		}
		if err == nil {
			m.Delete(ctx, s.ID)
		}
	}
}

// TestSepHeldBytes: the cache counts a sep-cma-es session as its engine
// states it (sepcma.HeldBytes), and CreateBytesFor charges a create with
// bounds in mind.
func TestSepHeldBytes(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	n := 10000
	s, err := m.Create(ctx, session.CreateParams{X0: make([]float64, n), Sigma0: 1, Algorithm: session.AlgorithmSepCMAES, Seed: seed(1)})
	if err != nil {
		t.Fatal(err)
	}
	runGenerations(t, m, s.ID, 2)
	_, got := session.CacheUse(m)
	lambda := sepcma.DefaultLambda(n)
	if want := sepcma.HeldBytes(n, lambda, false); got != want {
		t.Errorf("the cache counts %d bytes, the engine states %d", got, want)
	}
	if c := session.CreateBytesFor(session.AlgorithmSepCMAES, n, 0); c < sepcma.HeldBytes(n, lambda, true) || c > 2*sepcma.HeldBytes(n, lambda, true) {
		t.Errorf("CreateBytesFor = %d, engine %d", c, sepcma.HeldBytes(n, lambda, true))
	}
}

// TestSepClaimsWarmStart: claims and leases hand out a sep-cma-es
// session's candidates as any other's, and a sep session warm-starts from
// another session's mean and best point.
func TestSepClaimsWarmStart(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Algorithm: session.AlgorithmSepCMAES, PopulationSize: 4, Seed: seed(9)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	for i := range 4 {
		c, err := m.Claim(ctx, s.ID, time.Minute, "w")
		if err != nil || c.Index != i || !reflect.DeepEqual(c.X, b.Candidates[i]) {
			t.Fatalf("claim %d: %+v, %v", i, c, err)
		}
		if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{i}, Fitness: []float64{sphere(c.X)}}); err != nil {
			t.Fatal(err)
		}
	}
	s = runGenerations(t, m, s.ID, 5)
	w, err := m.Create(ctx, session.CreateParams{WarmStart: s.ID, Sigma0: 0.1, Algorithm: session.AlgorithmSepCMAES, Seed: seed(2)})
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := m.Ask(ctx, w.ID)
	if !reflect.DeepEqual(w.Mean, s.Mean) || !reflect.DeepEqual(wb.Candidates[0], s.Best.X) || w.Injected.InBatch != 1 {
		t.Errorf("warm start: mean %v (want %v), candidate 0 %v (want the best %v)", w.Mean, s.Mean, wb.Candidates[0], s.Best.X)
	}
}

// TestSepSessionEqualsInProcess: BBOB f1 and f2 in 10-D run over a
// sep-cma-es session (its defaults: BIPOP restarts) equal sepcma run in
// process with the configuration the session reports, candidate for
// candidate, to the target f_opt + 1e-8.
func TestSepSessionEqualsInProcess(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	for _, fn := range []int{1, 2} {
		p, err := bbob.New(fn, 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		target := p.FOpt() + 1e-8
		x0 := make([]float64, 10)
		s, err := m.Create(ctx, session.CreateParams{X0: x0, Sigma0: 2, Algorithm: session.AlgorithmSepCMAES, Seed: seed(uint64(fn)),
			Termination: session.Termination{TargetFitness: &target, MaxEvaluations: 200000}})
		if err != nil {
			t.Fatal(err)
		}
		rs := s.Restarts
		e, err := sepcma.New(sepcma.Config{X0: x0, Sigma0: 2, Seed: uint64(fn),
			Termination: cmaes.Termination{HasTarget: true, TargetFitness: target, MaxEvaluations: 200000},
			Restarts:    cmaes.Restarts{BIPOP: rs.Strategy == session.RestartsBIPOP, IPOP: rs.Strategy == session.RestartsIPOP, Max: rs.Max, IncPopSize: rs.IncPopSize}})
		if err != nil {
			t.Fatal(err)
		}
		for g := 0; s.Status == session.StatusRunning; g++ {
			b, err := m.Ask(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := e.Ask()
			if !reflect.DeepEqual(b.Candidates, want) {
				t.Fatalf("f%d, generation %d: the session's batch differs from sepcma's", fn, g)
			}
			f := make([]float64, len(want))
			for k, x := range want {
				f[k] = p.Eval(x)
			}
			if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: g, Fitness: f}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Tell(f); err != nil {
				t.Fatal(err)
			}
		}
		best, _ := e.Best()
		if s.Evaluations != e.Evaluations() || s.Best.F != best.F || len(e.Stopped()) == 0 || s.StopReasons[0].Name != cmaes.StopTargetFitness {
			t.Errorf("f%d: session %d evaluations, f %v, %v; in process %d, %v, %v", fn, s.Evaluations, s.Best.F, s.StopReasons, e.Evaluations(), best.F, e.Stopped())
		}
		t.Logf("f%d 10-D: %d evaluations to f_opt + 1e-8, session = in process", fn, s.Evaluations)
	}
}
