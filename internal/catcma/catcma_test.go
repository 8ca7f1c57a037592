package catcma_test

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

func newProblem(t testing.TB, p mixedfn.Problem, seed uint64) *catcma.CatCMA {
	t.Helper()
	x, z, c := p.Space()
	// The reference's runs do not stop on should_stop; nor do these.
	o, err := catcma.New(catcma.Config{Space: catcma.Space{X: x, Z: z, C: c}, Seed: seed,
		Termination: catcma.Termination{NoShouldStop: true}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// step asks, evaluates with f and tells; it returns the batch's best value.
func step(t testing.TB, o *catcma.CatCMA, f func(x, z []float64, c []int) float64) float64 {
	t.Helper()
	batch := o.Ask()
	vals := make([]float64, len(batch))
	for i, c := range batch {
		vals[i] = f(c.X, c.Z, c.C)
	}
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
	return slices.Min(vals)
}

// TestInvariants checks after every tell: each categorical distribution
// sums to 1 and respects its margin q_min; every candidate's integers are
// values of their lists, its x within the bounds, its categories in range;
// C symmetric with positive eigenvalues; σ positive and finite.
func TestInvariants(t *testing.T) {
	for _, p := range append(mixedfn.Problems(9), mixedfn.Problems(30)[0]) {
		t.Run(p.Name, func(t *testing.T) {
			o := newProblem(t, p, 3)
			for gen := range 300 {
				for _, c := range o.Ask() {
					for _, v := range c.X {
						if v < p.XLower || v > p.XUpper {
							t.Fatalf("gen %d: x %v outside [%v, %v]", gen, v, p.XLower, p.XUpper)
						}
					}
					for _, v := range c.Z {
						if !slices.Contains(p.ZValues, v) {
							t.Fatalf("gen %d: z %v not in %v", gen, v, p.ZValues)
						}
					}
					for _, v := range c.C {
						if v < 0 || v >= p.K {
							t.Fatalf("gen %d: category %d of %d", gen, v, p.K)
						}
					}
				}
				step(t, o, p.F)
				s, n := &o.State, o.Params.NMi
				for i, q := range s.Q {
					sum := 0.0
					for _, v := range q {
						sum += v
						if v < o.Params.QMin[i]*(1-1e-9) {
							t.Fatalf("gen %d: q[%d] = %v below the margin %v", gen, i, q, o.Params.QMin[i])
						}
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("gen %d: q[%d] sums to %v", gen, i, sum)
					}
				}
				if !(s.Sigma > 0) || math.IsInf(s.Sigma, 0) {
					t.Fatalf("gen %d: sigma %v", gen, s.Sigma)
				}
				for i := range n {
					if s.D[i] <= 0 {
						t.Fatalf("gen %d: D[%d] = %v", gen, i, s.D[i])
					}
					for j := range n {
						if s.C[i*n+j] != s.C[j*n+i] {
							t.Fatalf("gen %d: C not symmetric at %d, %d", gen, i, j)
						}
					}
				}
			}
		})
	}
}

// TestConvergence runs the benchmark problems at n = 9 to the target.
func TestConvergence(t *testing.T) {
	for _, p := range mixedfn.Problems(9) {
		t.Run(p.Name, func(t *testing.T) {
			for seed := range uint64(3) {
				o := newProblem(t, p, seed)
				evals, best := 0, math.Inf(1)
				for evals < 50000 && best > mixedfn.Target {
					best = math.Min(best, step(t, o, p.F))
					evals += o.Params.Lambda
				}
				if best > mixedfn.Target {
					t.Errorf("seed %d: best %v after %d evaluations, want ≤ %v", seed, best, evals, mixedfn.Target)
				}
			}
		})
	}
}

// TestSeed: a seed reproduces a run; another seed gives another.
func TestSeed(t *testing.T) {
	p := mixedfn.Problems(9)[0]
	run := func(seed uint64) catcma.State {
		o := newProblem(t, p, seed)
		for range 20 {
			step(t, o, p.F)
		}
		return o.State
	}
	if !reflect.DeepEqual(run(5), run(5)) {
		t.Error("two runs with seed 5 differ")
	}
	if reflect.DeepEqual(run(5), run(6)) {
		t.Error("seeds 5 and 6 give the same run")
	}
}

func TestBadInput(t *testing.T) {
	for name, cfg := range map[string]catcma.Config{
		"empty":       {},
		"bounds":      {Space: catcma.Space{X: [][2]float64{{1, 1}}}},
		"one value":   {Space: catcma.Space{Z: [][]float64{{1}}}},
		"duplicate":   {Space: catcma.Space{Z: [][]float64{{1, 2, 1}}}},
		"one choice":  {Space: catcma.Space{C: []int{1}}},
		"lambda":      {Space: catcma.Space{C: []int{2}}, Lambda: 1},
		"sigma":       {Space: catcma.Space{X: [][2]float64{{0, 1}}}, Sigma: -1},
		"mean length": {Space: catcma.Space{X: [][2]float64{{0, 1}}}, Mean: []float64{0, 0}},
		"q sum":       {Space: catcma.Space{C: []int{2}}, Q: [][]float64{{0.2, 0.2}}},
	} {
		if _, err := catcma.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	o := newProblem(t, mixedfn.Problems(9)[0], 1)
	if err := o.Tell([]float64{1}); err == nil {
		t.Error("Tell accepted 1 value for λ values")
	}
	// NaN ranks worst and leaves the state finite.
	vals := make([]float64, o.Params.Lambda)
	vals[0] = math.NaN()
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
	for _, m := range o.State.Mean {
		if math.IsNaN(m) {
			t.Fatal("NaN fitness made the mean NaN")
		}
	}
}

// TestTrack: the bookkeeping counts the told points, keeps the best
// candidate, stops at the target, at the budget and at StopNow, and a
// stopped run refuses a Tell; should_stop stops a converged run.
func TestTrack(t *testing.T) {
	p := mixedfn.Problems(9)[0]
	x, z, c := p.Space()
	sp := catcma.Space{X: x, Z: z, C: c}
	run := func(term catcma.Termination) *catcma.CatCMA {
		o, err := catcma.New(catcma.Config{Space: sp, Seed: 2, Termination: term})
		if err != nil {
			t.Fatal(err)
		}
		for range 5000 {
			if len(o.Stopped()) > 0 {
				return o
			}
			best := math.Inf(1)
			batch := o.Ask()
			for _, c := range batch {
				best = min(best, p.F(c.X, c.Z, c.C))
			}
			step(t, o, p.F)
			if s := o.State; s.Best.F > best || p.F(s.Best.X, s.Best.Z, s.Best.C) != s.Best.F {
				t.Fatalf("best %v, the batch had %v", s.Best.F, best)
			}
		}
		t.Fatalf("%+v: no stop", term)
		return nil
	}
	if o := run(catcma.Termination{HasTarget: true, TargetFitness: 1e-3}); o.Stopped()[0].Name != "target_fitness" || o.State.Best.F > 1e-3 {
		t.Errorf("target: stopped by %v at best %v", o.Stopped(), o.State.Best.F)
	}
	o := run(catcma.Termination{MaxEvaluations: 100})
	if s := o.State; s.Stop[0].Name != "max_evaluations" || s.Evaluations != s.Generation*o.Params.Lambda || s.Evaluations < 100 {
		t.Errorf("budget: %v after %d evaluations", s.Stop, s.Evaluations)
	}
	if err := o.Tell(make([]float64, o.Params.Lambda)); err != catcma.ErrStopped {
		t.Errorf("Tell after the stop: %v", err)
	}
	if o := run(catcma.Termination{}); o.Stopped()[0].Name == "" {
		t.Error("should_stop: no name")
	}
	o, _ = catcma.New(catcma.Config{Space: sp})
	o.StopNow()
	o.StopNow()
	if r := o.Stopped(); len(r) != 1 || r[0].Name != "requested" {
		t.Errorf("StopNow: %v", r)
	}
}
