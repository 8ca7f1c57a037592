package constraints_test

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/constraints"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

// run drives CMA-ES (active, no termination but the budget) with the AL on
// p and returns the evaluations until the best feasible f is within
// mixedfn.ConstrainedTarget of the optimum (0 if never) and the AL, after
// each iteration calling each.
func run(t *testing.T, p mixedfn.Constrained, seed uint64, budget int, each func(*constraints.AL)) (int, []float64) {
	t.Helper()
	es, err := cmaes.New(cmaes.Config{X0: p.X0, Sigma0: 1, Seed: seed, Active: true,
		Termination: cmaes.Termination{MaxEvaluations: budget, TolFun: -1, TolX: -1, ConditionCov: -1,
			TolUpSigma: -1, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
	if err != nil {
		t.Fatal(err)
	}
	al, err := constraints.New(p.N, p.M)
	if err != nil {
		t.Fatal(err)
	}
	evals := 0
	var best []float64
	bestF := math.Inf(1)
	for evals < budget {
		X := es.Ask()
		f, g := make([]float64, len(X)), make([][]float64, len(X))
		for k, x := range X {
			f[k], g[k] = p.F(x), p.G(x)
			evals++
			if constraints.Feasible(g[k]) && f[k] < bestF {
				bestF, best = f[k], slices.Clone(x)
			}
			if bestF-p.FOpt <= mixedfn.ConstrainedTarget {
				return evals, best
			}
		}
		ranked, err := al.Tell(f, g)
		if err != nil {
			t.Fatal(err)
		}
		if each != nil {
			each(al)
		}
		if _, err := es.Tell(ranked); err != nil {
			t.Fatal(err)
		}
	}
	return 0, best
}

// TestConvergence: on every problem at n = 6 the best feasible point gets
// within 1e-8 of the optimum in f, and it is feasible; the multipliers stay
// non-negative and the penalty factors positive after every iteration.
func TestConvergence(t *testing.T) {
	for _, p := range mixedfn.ConstrainedProblems(6) {
		t.Run(p.Name, func(t *testing.T) {
			for seed := range uint64(3) {
				evals, x := run(t, p, seed, 60000, func(al *constraints.AL) {
					for i, l := range al.State.Lam {
						if l < 0 || al.State.Mu[i] < 0 || math.IsNaN(l) || math.IsNaN(al.State.Mu[i]) {
							t.Fatalf("λ %v μ %v", al.State.Lam, al.State.Mu)
						}
					}
				})
				if evals == 0 {
					t.Fatalf("seed %d: not within %g of f* = %v (best feasible %v)", seed, mixedfn.ConstrainedTarget, p.FOpt, x)
				}
				if !constraints.Feasible(p.G(x)) {
					t.Fatalf("seed %d: final point %v infeasible: g = %v", seed, x, p.G(x))
				}
			}
		})
	}
}

// TestRoundTrip: after every iteration, encode, decode and encode gives
// the same bytes, and the decoded AL continues as the original does.
func TestRoundTrip(t *testing.T) {
	p := mixedfn.ConstrainedProblems(6)[1]
	var blobs [][]byte
	run(t, p, 1, 3000, func(al *constraints.AL) {
		b, err := al.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, b)
	})
	g := [][]float64{{0.1, -0.2, 0.3}, {-1, -1, -1}, {0, 0.5, -0.5}}
	f := []float64{3, 1, 2}
	for i, b := range blobs {
		a, err := constraints.Unmarshal(b)
		if err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		again, _ := a.MarshalBinary()
		if !bytes.Equal(b, again) {
			t.Fatalf("iteration %d: re-encoding differs", i)
		}
		if a.MemoryBytes() < len(b)/2 {
			t.Fatalf("iteration %d: MemoryBytes %d for %d bytes", i, a.MemoryBytes(), len(b))
		}
		c, _ := constraints.Unmarshal(b)
		r1, _ := a.Tell(f, g)
		r2, _ := c.Tell(f, g)
		e1, _ := a.MarshalBinary()
		e2, _ := c.MarshalBinary()
		if !slices.Equal(r1, r2) || !bytes.Equal(e1, e2) {
			t.Fatalf("iteration %d: two decoded copies diverge", i)
		}
	}
	if _, err := constraints.Unmarshal(blobs[len(blobs)-1][:10]); err == nil {
		t.Error("a truncated blob decoded")
	}
}

func TestBadInput(t *testing.T) {
	if _, err := constraints.New(0, 1); err == nil {
		t.Error("dimension 0 accepted")
	}
	if _, err := constraints.New(3, 0); err == nil {
		t.Error("0 constraints accepted")
	}
	al, _ := constraints.New(3, 2)
	for name, c := range map[string]struct {
		f []float64
		g [][]float64
	}{
		"empty":     {nil, nil},
		"rows":      {[]float64{1, 2}, [][]float64{{1, 2}}},
		"row width": {[]float64{1}, [][]float64{{1}}},
	} {
		if _, err := al.Tell(c.f, c.g); err == nil {
			t.Errorf("%s: Tell accepted %v, %v", name, c.f, c.g)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	al, _ := constraints.New(4, 2)
	for k := range 12 {
		v := float64(k%5) - 2
		al.Tell([]float64{v, 2 * v, -v}, [][]float64{{v, -1}, {0.5, v}, {-v, 0}})
	}
	seed, _ := al.MarshalBinary()
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := constraints.Unmarshal(binenc.Reseal(b))
		if err != nil {
			return
		}
		once, _ := a.MarshalBinary()
		a2, err := constraints.Unmarshal(once)
		if err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
		twice, _ := a2.MarshalBinary()
		if !bytes.Equal(once, twice) {
			t.Fatal("encoding is not stable")
		}
		g := make([][]float64, 3)
		for i := range g {
			g[i] = make([]float64, a.Params.M)
		}
		a.Tell([]float64{1, 2, 3}, g)
	})
}
