package catcma

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// golden is testdata/golden.json, written by scripts/catcma_golden.py from
// the reference implementation (CyberAgentAILab/cmaes 0.13.1 CatCMAwM).
type golden struct {
	Cases []struct {
		Name   string
		XSpace [][2]float64 `json:"x_space"`
		ZSpace [][]float64  `json:"z_space"`
		CSpace []int        `json:"c_space"`
		Lambda int
		Gens   []struct {
			V       [][]float64
			Cats    [][]int
			F       []float64
			Mean    []float64
			Sigma   float64
			Cov     []float64
			A       []float64
			PSigma  []float64
			PC      []float64
			PMut    []float64
			IntSucc []bool `json:"int_succ"`
			Q       [][]float64
			Delta   float64 `json:"Delta"`
			Delta2  float64 `json:"delta"`
			S       []float64
			Gamma   float64
		}
	}
}

// goldenTol is the largest difference allowed, relative to max(1, |want|).
const goldenTol = 1e-12

// TestGolden feeds the reference's batches and fitness to Tell and compares
// the distribution after every generation with the reference's.
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
			o, err := New(Config{Space: Space{X: tc.XSpace, Z: tc.ZSpace, C: tc.CSpace}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if o.Params.Lambda != tc.Lambda {
				t.Fatalf("lambda %d, want %d", o.Params.Lambda, tc.Lambda)
			}
			worst := 0.0
			for gen, want := range tc.Gens {
				s := &o.State
				for k := range want.V {
					if o.Params.NMi > 0 {
						s.V[k] = want.V[k]
					}
					if o.Params.NCa > 0 {
						s.Cat[k] = want.Cats[k]
					}
				}
				if err := o.Tell(want.F); err != nil {
					t.Fatal(err)
				}
				check := func(name string, got, w []float64) {
					t.Helper()
					if len(got) != len(w) {
						t.Fatalf("gen %d: %s has %d values, want %d", gen, name, len(got), len(w))
					}
					for i := range got {
						d := math.Abs(got[i]-w[i]) / math.Max(1, math.Abs(w[i]))
						worst = math.Max(worst, d)
						if !(d <= goldenTol) {
							t.Fatalf("gen %d: %s[%d] = %.17g, want %.17g (relative difference %.3g)", gen+1, name, i, got[i], w[i], d)
						}
					}
				}
				if o.Params.NMi > 0 {
					check("mean", s.Mean, want.Mean)
					check("sigma", []float64{s.Sigma}, []float64{want.Sigma})
					check("C", s.C, want.Cov)
					check("A", s.A, want.A)
					check("p_sigma", s.PSigma, want.PSigma)
					check("p_c", s.PC, want.PC)
				}
				if o.Params.NIn > 0 {
					check("pmut", s.PMut, want.PMut)
					for i, b := range want.IntSucc {
						if s.IntSucc[i] != b {
							t.Fatalf("gen %d: int_succ[%d] = %v, want %v", gen+1, i, s.IntSucc[i], b)
						}
					}
				}
				if o.Params.NCa > 0 {
					for i := range want.Q {
						check("q", s.Q[i], want.Q[i])
					}
					check("Delta", []float64{s.Delta}, []float64{want.Delta})
					check("delta", []float64{s.TrustDelta}, []float64{want.Delta2})
					check("s", s.S, want.S)
					check("gamma", []float64{s.Gamma}, []float64{want.Gamma})
				}
			}
			t.Logf("%d generations, largest relative difference %.3g", len(tc.Gens), worst)
		})
	}
}
