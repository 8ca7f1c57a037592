package cmaes

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkDistribution compares the distribution fields of rec, told by e
// without a restart, with their formulas computed anew from e's state:
// D from an eigendecomposition of C by gonum (not the ES's own), the
// standard deviations from C's diagonal, the mean and the overall step.
func checkDistribution(tb testing.TB, e *ES, rec Record) {
	tb.Helper()
	n := e.Dim()
	g := rec.Generation
	if len(rec.D) != n || len(rec.Stds) != n || len(rec.Mean) != n {
		tb.Fatalf("generation %d: %d axis lengths, %d stds, %d mean coordinates; want n = %d", g, len(rec.D), len(rec.Stds), len(rec.Mean), n)
	}
	c, sigma := e.C(), e.Sigma()
	var eig mat.EigenSym
	if !eig.Factorize(c, false) {
		tb.Fatalf("generation %d: gonum's EigenSym failed", g)
	}
	lambda := eig.Values(nil)
	slices.Sort(lambda)
	lmax := lambda[n-1]
	for i := range n {
		if i > 0 && rec.D[i] < rec.D[i-1] {
			tb.Fatalf("generation %d: D not ascending: %v", g, rec.D)
		}
		// √λ_i(C), to the accuracy of an eigendecomposition.
		if d := math.Abs(rec.D[i]*rec.D[i] - lambda[i]); d > 1e-10*lmax {
			tb.Errorf("generation %d: D[%d]² = %g, eigenvalue %g of C", g, i, rec.D[i]*rec.D[i], lambda[i])
		}
		// σ·√C_ii, exactly.
		if want := sigma * math.Sqrt(c.At(i, i)); rec.Stds[i] != want {
			tb.Errorf("generation %d: std %d = %g, want σ·√C_ii = %g", g, i, rec.Stds[i], want)
		}
	}
	if want := sigma * math.Sqrt(lmax); math.Abs(rec.OverallStep-want) > 1e-10*want {
		tb.Errorf("generation %d: overall step %g, want σ·√λ_max(C) = %g", g, rec.OverallStep, want)
	}
	_, d := e.Eigen()
	if rec.OverallStep != sigma*d[n-1] || !slices.Equal(rec.D, d) {
		tb.Errorf("generation %d: overall step %g and D %v, the ES has σ·max D = %g and D %v", g, rec.OverallStep, rec.D, sigma*d[n-1], d)
	}
	if rec.AxisRatio != rec.D[n-1]/rec.D[0] {
		tb.Errorf("generation %d: axis ratio %g, want max D/min D = %g", g, rec.AxisRatio, rec.D[n-1]/rec.D[0])
	}
	if m := e.Mean(); !slices.Equal(rec.Mean, m) {
		tb.Errorf("generation %d: mean %v, want m = %v", g, rec.Mean, m)
	}
}

// The record's overall step, axis lengths, standard deviations and mean
// are those of the distribution after the update: on the 10-D Rosenbrock
// function to convergence (the run whose σ jumps where the scale moves
// into C), with bounds, and after a generation whose every evaluation
// failed. A record that ends a run describes the run that ended, not the
// restarted one.
func TestRecordDistribution(t *testing.T) {
	t.Run("rosenbrock", func(t *testing.T) {
		e := mustNew(t, Config{X0: constVec(10, 0), Sigma0: 0.5, Seed: 4})
		for e.Stopped() == nil && e.Generation() < 20000 {
			checkDistribution(t, e, step(t, e, rosenbrock))
		}
		if b, _ := e.Best(); !(b.F < 1e-10) {
			t.Fatalf("stopped after %d generations at f = %g, not converged", e.Generation(), b.F)
		}
	})
	t.Run("bounds and a failed generation", func(t *testing.T) {
		e := mustNew(t, Config{X0: constVec(4, 0.5), Sigma0: 0.3, Seed: 2,
			Bounds: &Bounds{Lower: constVec(4, 0), Upper: constVec(4, 1)}})
		for range 30 {
			checkDistribution(t, e, step(t, e, sphere))
		}
		nan := make([]float64, e.Params().Lambda)
		for k := range nan {
			nan[k] = math.NaN()
		}
		rec, err := e.Tell(nan)
		if err != nil {
			t.Fatal(err)
		}
		checkDistribution(t, e, rec)
	})
	t.Run("restart", func(t *testing.T) {
		x0 := constVec(3, 2)
		e := mustNew(t, Config{X0: x0, Sigma0: 1, Seed: 1, Restarts: Restarts{IPOP: true, Max: 1},
			Termination: Termination{TolFun: 1e-8}})
		for e.Run() == 0 {
			if e.Stopped() != nil || e.Generation() > 5000 {
				t.Fatalf("no restart after %d generations", e.Generation())
			}
			rec := step(t, e, sphere)
			if !rec.Restarted {
				checkDistribution(t, e, rec)
				continue
			}
			// The sphere's run ends near 0 with a small step.
			if slices.Equal(rec.Mean, x0) || !(rec.OverallStep < 1e-2) || !(rec.Stds[0] < 1e-2) {
				t.Errorf("restarting record: mean %v, overall step %g, stds %v: not the ended run's", rec.Mean, rec.OverallStep, rec.Stds)
			}
		}
	})
}
