package sepcma

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

func sphere(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

// ellipsoid is the separable ellipsoid Σ 10^{6(i−1)/(n−1)} x_i².
func ellipsoid(x []float64) float64 {
	n := len(x)
	coef := ellipsoidCoef[n]
	if coef == nil {
		coef = make([]float64, n)
		for i := range coef {
			coef[i] = math.Pow(10, 6*float64(i)/float64(n-1))
		}
		ellipsoidCoef[n] = coef
	}
	var s float64
	for i, v := range x {
		s += coef[i] * v * v
	}
	return s
}

var ellipsoidCoef = map[int][]float64{} // tests that use it do not run in parallel

func rastrigin(x []float64) float64 {
	s := 10 * float64(len(x))
	for _, v := range x {
		s += v*v - 10*math.Cos(2*math.Pi*v)
	}
	return s
}

func evalAll(f func([]float64) float64, xs [][]float64) []float64 {
	out := make([]float64, len(xs))
	for k, x := range xs {
		out[k] = f(x)
	}
	return out
}

func fill(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

// TestInvariants checks after every tell: the batch is the same until
// told, C_ii > 0, σ > 0 and finite, the counters, and points sampled from
// N(m, σ² diag(C)).
func TestInvariants(t *testing.T) {
	e, err := New(Config{X0: fill(30, 1), Sigma0: 0.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for g := range 200 {
		a, b := e.Ask(), e.Ask()
		if !slices.EqualFunc(a, b, slices.Equal) {
			t.Fatal("Ask changed without a tell")
		}
		a[0][0] = math.NaN() // a fresh copy: the ES keeps its own
		if math.IsNaN(e.Ask()[0][0]) {
			t.Fatal("Ask returned the ES's own slice")
		}
		rec, err := e.Tell(evalAll(ellipsoid, b))
		if err != nil {
			t.Fatal(err)
		}
		if rec.Generation != g || e.Generation() != g+1 || e.Evaluations() != (g+1)*e.Params().Lambda {
			t.Fatalf("generation %d: record %d, ES %d, evaluations %d", g, rec.Generation, e.Generation(), e.Evaluations())
		}
		s := e.State()
		for i, c := range s.C {
			if !(c > 0) || math.IsInf(c, 0) {
				t.Fatalf("generation %d: C[%d] = %v", g, i, c)
			}
		}
		if !(s.Sigma > 0) || math.IsInf(s.Sigma, 0) {
			t.Fatalf("generation %d: σ = %v", g, s.Sigma)
		}
		if len(rec.Stop) > 0 {
			t.Fatalf("stopped at %d: %v", g, rec.Stop)
		}
	}
	// The standardized coordinates of a batch, (x_i − m_i)/(σ√C_ii), are
	// N(0, 1): over 30·λ of them the mean is near 0 and the variance near 1.
	s, x := e.State(), e.Ask()
	var sum, sq float64
	var k int
	for _, p := range x {
		for i, v := range p {
			z := (v - s.Mean[i]) / (s.Sigma * math.Sqrt(s.C[i]))
			sum += z
			sq += z * z
			k++
		}
	}
	mean, variance := sum/float64(k), sq/float64(k)-(sum/float64(k))*(sum/float64(k))
	if math.Abs(mean) > 0.15 || math.Abs(variance-1) > 0.2 {
		t.Errorf("standardized batch: mean %.3f, variance %.3f; want 0 and 1", mean, variance)
	}
}

func TestConvergence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      func([]float64) float64
		n      int
		budget int // evaluations; the measured need, seeds 1–5, is about half
	}{
		{"sphere/n=10", sphere, 10, 3000},
		{"sphere/n=100", sphere, 100, 40000},
		{"ellipsoid/n=10", ellipsoid, 10, 6000},
		{"ellipsoid/n=100", ellipsoid, 100, 80000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(5) {
				e, err := New(Config{X0: fill(tc.n, 3), Sigma0: 2, Seed: seed,
					Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-10, MaxEvaluations: tc.budget}})
				if err != nil {
					t.Fatal(err)
				}
				var rec Record
				for len(rec.Stop) == 0 {
					if rec, err = e.Tell(evalAll(tc.f, e.Ask())); err != nil {
						t.Fatal(err)
					}
				}
				if rec.Stop[0].Name != cmaes.StopTargetFitness {
					t.Errorf("seed %d: stopped by %v after %d evaluations, best %g", seed, rec.Stop, e.Evaluations(), rec.BestSoFar)
				}
			}
		})
	}
}

// TestLearnsScales: on the separable ellipsoid C learns the inverse
// Hessian's diagonal, C_ii ∝ 10^{−6(i−1)/(n−1)}: the axis ratio reaches
// about 10³.
func TestLearnsScales(t *testing.T) {
	e, _ := New(Config{X0: fill(10, 3), Sigma0: 2, Seed: 1, Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-12}})
	for len(e.Stopped()) == 0 {
		e.Tell(evalAll(ellipsoid, e.Ask()))
	}
	if r := e.AxisRatio(); r < 300 || r > 3000 {
		t.Errorf("axis ratio %g, want about 1000", r)
	}
	c := e.C()
	for i := 1; i < len(c); i++ {
		if !(c[i] < c[i-1]) {
			t.Errorf("C not decreasing along the axes: %v", c)
			break
		}
	}
}

func TestNaNRanksWorst(t *testing.T) {
	e, _ := New(Config{X0: fill(5, 1), Sigma0: 1, Seed: 2})
	f := evalAll(sphere, e.Ask())
	f[0], f[3] = math.NaN(), math.NaN()
	rec, err := e.Tell(f)
	if err != nil || math.IsNaN(rec.Best) {
		t.Fatalf("tell: %v, best %v", err, rec.Best)
	}
	// A generation of failures changes nothing but the counters.
	before := e.State()
	all := fill(e.Params().Lambda, math.NaN())
	if _, err := e.Tell(all); err != nil {
		t.Fatal(err)
	}
	after := e.State()
	if !slices.Equal(before.Mean, after.Mean) || before.Sigma != after.Sigma || !slices.Equal(before.C, after.C) {
		t.Error("a generation of NaN moved the distribution")
	}
}

func TestFailedGenerationsStop(t *testing.T) {
	e, _ := New(Config{X0: fill(5, 1), Sigma0: 1, Restarts: cmaes.Restarts{IPOP: true}})
	var rec Record
	for range cmaes.DefaultMaxFailedGenerations {
		rec, _ = e.Tell(fill(e.Params().Lambda, math.NaN()))
	}
	if len(rec.Stop) != 1 || rec.Stop[0].Name != cmaes.StopFailedEvaluations || rec.Restarted {
		t.Errorf("stop %v, restarted %v; want failed_evaluations without a restart", rec.Stop, rec.Restarted)
	}
	if _, err := e.Tell(fill(e.Params().Lambda, 1)); !errors.Is(err, ErrStopped) {
		t.Errorf("tell after the stop: %v, want ErrStopped", err)
	}
	if e.Ask() != nil {
		t.Error("Ask after the stop returned points")
	}
}

func TestBadInput(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no x0":        {Sigma0: 1},
		"nan x0":       {X0: []float64{1, math.NaN()}, Sigma0: 1},
		"sigma0 0":     {X0: []float64{1}, Sigma0: 0},
		"lambda 1":     {X0: []float64{1}, Sigma0: 1, Lambda: 1},
		"rates":        {X0: []float64{1}, Sigma0: 1, Rates: 9},
		"ipop+bipop":   {X0: []float64{1}, Sigma0: 1, Restarts: cmaes.Restarts{IPOP: true, BIPOP: true}},
		"uniform":      {X0: []float64{1}, Sigma0: 1, Restarts: cmaes.Restarts{IPOP: true, Point: cmaes.RestartPoint{Uniform: true}}},
		"region":       {X0: []float64{1}, Sigma0: 1, Restarts: cmaes.Restarts{Point: cmaes.RestartPoint{Region: &cmaes.Bounds{Lower: []float64{1}, Upper: []float64{0}}}}},
		"incpopsize":   {X0: []float64{1}, Sigma0: 1, Restarts: cmaes.Restarts{IPOP: true, IncPopSize: 0.5}},
		"max evals":    {X0: []float64{1}, Sigma0: 1, Termination: cmaes.Termination{MaxEvaluations: -1}},
		"inf tolerans": {X0: []float64{1}, Sigma0: 1, Termination: cmaes.Termination{TolFun: math.Inf(1)}},
		"nipop":        {X0: []float64{1}, Sigma0: 1, Restarts: cmaes.Restarts{IPOP: true, SigmaDec: 1.6}},
		"nbipop":       {X0: []float64{1}, Sigma0: 1, Restarts: cmaes.Restarts{BIPOP: true, SigmaDec: 1.6, Budget: 2}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	e, _ := New(Config{X0: fill(3, 0), Sigma0: 1})
	if _, err := e.Tell([]float64{1}); err == nil {
		t.Error("a tell of 1 value for λ = 7 accepted")
	}
}

// TestBoundSigma: a σ beyond maxSigmaOverD·max √C_ii moves into C and
// p_c; the distribution σ√C_ii stays as it was (to rounding).
func TestBoundSigma(t *testing.T) {
	e, _ := New(Config{X0: fill(4, 0), Sigma0: 1})
	e.s.Sigma = 1e12
	e.s.C = []float64{1e-6, 4e-6, 1e-8, 1e-4}
	e.s.PC = []float64{1, 2, 3, 4}
	e.setD()
	before := e.Stds()
	e.boundSigma()
	// As cmaes's: σ becomes the old max D, and max D the old σ.
	closeTo(t, "σ", e.s.Sigma, 1e-2, 1e-15)
	closeTo(t, "max D", maxOf(e.d), 1e12, 1e-14)
	vecClose(t, "σ√C", e.Stds(), before, 1e-14)
	vecClose(t, "σ p_c", []float64{e.s.Sigma * e.s.PC[3]}, []float64{1e12 * 4}, 1e-14)
	// Rosenbrock at n = 20 from far away: SepCMA's update alone lets C
	// shrink to 1e-24 and tol_up_sigma stop the run (BBOB f8, cmd/sepbench);
	// with the bound it reaches 1e-8 in about 160000 evaluations.
	rosen := func(x []float64) float64 {
		var s float64
		for i := range len(x) - 1 {
			a, b := x[i]*x[i]-x[i+1], x[i]-1
			s += 100*a*a + b*b
		}
		return s
	}
	e, _ = New(Config{X0: fill(20, -3), Sigma0: 2, Seed: 1,
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-8, MaxEvaluations: 400000}})
	for len(e.Stopped()) == 0 {
		e.Tell(evalAll(rosen, e.Ask()))
	}
	if s := e.Stopped(); s[0].Name != cmaes.StopTargetFitness {
		t.Errorf("Rosenbrock n = 20: stopped by %v after %d evaluations", s, e.Evaluations())
	}
}
