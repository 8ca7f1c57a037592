package constraints

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// golden is testdata/golden.json, written by scripts/al_golden.py from
// pycma 4.4.0's ConstrainedFitnessAL driven by pycma's CMA-ES.
type golden struct {
	Cases []struct {
		Name  string
		N, M  int
		Iters []struct {
			F, AL   []float64
			G       [][]float64
			Lam, Mu []float64
		}
	}
}

const goldenTol = 1e-12

// TestGolden feeds pycma's f and g values to Tell and compares the AL
// values and the coefficients after every iteration.
func TestGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	for _, tc := range g.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			a, err := New(tc.N, tc.M)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			check := func(it int, name string, got, want []float64) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("iteration %d: %s has %d values, want %d", it, name, len(got), len(want))
				}
				for i := range got {
					d := math.Abs(got[i]-want[i]) / math.Max(1, math.Abs(want[i]))
					worst = math.Max(worst, d)
					if !(d <= goldenTol) {
						t.Fatalf("iteration %d: %s[%d] = %.17g, want %.17g", it, name, i, got[i], want[i])
					}
				}
			}
			for it, want := range tc.Iters {
				al, err := a.Tell(want.F, want.G)
				if err != nil {
					t.Fatal(err)
				}
				check(it, "al", al, want.AL)
				check(it, "lam", a.State.Lam, want.Lam)
				check(it, "mu", a.State.Mu, want.Mu)
			}
			t.Logf("%d iterations, largest relative difference %.3g; λ %v μ %v", len(tc.Iters), worst, a.State.Lam, a.State.Mu)
		})
	}
}
