package constraints_test

import (
	"math"
	"slices"
	"testing"

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

// TestRestoreRefuses: a state whose shapes an AL of its size cannot have
// is refused (internal/enginecodec's tests restore every state a run
// makes).
func TestRestoreRefuses(t *testing.T) {
	al, _ := constraints.New(3, 2)
	al.Tell([]float64{1, 2, 3}, [][]float64{{1, -1}, {0.5, 2}, {-1, 0}})
	if _, err := constraints.Restore(3, 2, al.State); err != nil || !al.State.Set {
		t.Fatalf("the state of a told AL (set %v): %v", al.State.Set, err)
	}
	for name, spoil := range map[string]func(*constraints.State){
		"lam":          func(s *constraints.State) { s.Lam = s.Lam[:1] },
		"initialized":  func(s *constraints.State) { s.Initialized = nil },
		"g history":    func(s *constraints.State) { s.GHistory = append(s.GHistory, []float64{1}) },
		"long history": func(s *constraints.State) { s.GHistory = make([][]float64, 30) },
		"same changes": func(s *constraints.State) { s.SameChanges = []int{1} },
	} {
		st := al.State
		st.GHistory = slices.Clone(st.GHistory)
		spoil(&st)
		if _, err := constraints.Restore(3, 2, st); err == nil {
			t.Errorf("%s: restored", name)
		}
	}
	if _, err := constraints.Restore(3, 0, constraints.State{}); err == nil {
		t.Error("0 constraints restored")
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
