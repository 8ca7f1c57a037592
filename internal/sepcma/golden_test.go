package sepcma

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// golden is testdata/golden.json, written by scripts/sepcma_golden.py from
// CyberAgentAILab/cmaes 0.13.1's SepCMA.
type golden struct {
	Peer  string `json:"peer"`
	Cases []struct {
		Name   string    `json:"name"`
		N      int       `json:"n"`
		Lambda int       `json:"lambda"`
		X0     []float64 `json:"x0"`
		Sigma0 float64   `json:"sigma0"`
		Params struct {
			MuEff   float64   `json:"mu_eff"`
			C1      float64   `json:"c1"`
			CMu     float64   `json:"cmu"`
			Cc      float64   `json:"cc"`
			CSigma  float64   `json:"c_sigma"`
			DSigma  float64   `json:"d_sigma"`
			ChiN    float64   `json:"chi_n"`
			Weights []float64 `json:"weights"`
		} `json:"params"`
		Generations []struct {
			X      [][]float64 `json:"x"`
			F      []float64   `json:"f"`
			Mean   []float64   `json:"mean"`
			Sigma  float64     `json:"sigma"`
			C      []float64   `json:"C"`
			PSigma []float64   `json:"p_sigma"`
			PC     []float64   `json:"pc"`
		} `json:"generations"`
	} `json:"cases"`
}

// noStop disables every tolerance criterion, so that a test drives the
// update alone.
var noStop = cmaes.Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
	NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}

// TestGolden tells SepCMA's points and values and compares the parameters
// and, after every tell, m, σ, diag(C), p_σ and p_c with SepCMA's. The
// summation orders differ from numpy's, so within a relative 1e-12.
func TestGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			e, err := New(Config{X0: c.X0, Sigma0: c.Sigma0, Lambda: c.Lambda, Termination: noStop})
			if err != nil {
				t.Fatal(err)
			}
			p, gp := e.Params(), c.Params
			if p.Lambda != c.Lambda {
				t.Fatalf("λ = %d, want %d", p.Lambda, c.Lambda)
			}
			for _, q := range []struct {
				name      string
				got, want float64
			}{{"μ_w", p.MuW, gp.MuEff}, {"c_1", p.C1, gp.C1}, {"c_μ", p.CMu, gp.CMu}, {"c_c", p.Cc, gp.Cc},
				{"c_σ", p.CSigma, gp.CSigma}, {"d_σ", p.DSigma, gp.DSigma}, {"χ_n", p.ChiN, gp.ChiN}} {
				closeTo(t, q.name, q.got, q.want, 1e-14)
			}
			vecClose(t, "weights", p.Weights, gp.Weights, 1e-14)
			hZero := false
			for gi, gen := range c.Generations {
				for k, x := range gen.X {
					copy(e.x[k*c.N:(k+1)*c.N], x)
				}
				if _, err := e.Tell(gen.F); err != nil {
					t.Fatalf("generation %d: %v", gi, err)
				}
				s := e.State()
				tol := 1e-12
				vecClose(t, "m", s.Mean, gen.Mean, tol)
				closeTo(t, "σ", s.Sigma, gen.Sigma, tol)
				vecClose(t, "C", s.C, gen.C, tol)
				vecClose(t, "p_σ", s.PSigma, gen.PSigma, tol)
				vecClose(t, "p_c", s.PC, gen.PC, tol)
				if t.Failed() {
					t.Fatalf("generation %d differs", gi)
				}
				hZero = hZero || e.lastHSigma == 0
			}
			if c.Name == "linear-n8" && !hZero {
				t.Errorf("h_σ never 0: the case does not cover δ(h_σ)")
			}
		})
	}
}

func closeTo(t *testing.T, name string, got, want, rel float64) {
	t.Helper()
	if d := math.Abs(got - want); !(d <= rel*math.Max(math.Abs(got), math.Abs(want))) && d != 0 {
		t.Errorf("%s = %.17g, want %.17g (relative difference %.3g)", name, got, want, d/math.Abs(want))
	}
}

func vecClose(t *testing.T, name string, got, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", name, len(got), len(want))
		return
	}
	for i := range got {
		closeTo(t, name+"["+itoa(i)+"]", got[i], want[i], rel)
	}
}

func itoa(i int) string { return string(rune('0'+i/10%10)) + string(rune('0'+i%10)) }
