package selfcma

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

func rastrigin(x []float64) float64 {
	s := 10 * float64(len(x))
	for _, v := range x {
		s += v*v - 10*math.Cos(2*math.Pi*v)
	}
	return s
}

// TestRestartsContinue runs self-CMA-ES with IPOP (IncPopSize 1.5), BIPOP
// and uniform restart points, with and without bounds, and after every
// generation (the ones that restart included) checks that the decoded
// state encodes to the same bytes and, told what the original is told for
// 3 generations, asks the same points and stays the same state; and that
// every restart, small or large, starts a fresh auxiliary CMA-ES.
func TestRestartsContinue(t *testing.T) {
	n := 3
	bounds := &cmaes.Bounds{Lower: []float64{-1, -1, -1}, Upper: []float64{4, 4, 4}}
	region := &cmaes.Bounds{Lower: []float64{0, 0, 0}, Upper: []float64{3, 3, 3}}
	cases := map[string]cmaes.Restarts{
		"ipop 1.5, bounds":       {IPOP: true, Max: 3, IncPopSize: 1.5},
		"bipop":                  {BIPOP: true, Max: 2},
		"bipop, uniform, bounds": {BIPOP: true, Max: 2, Point: cmaes.RestartPoint{Uniform: true}},
		"bipop, uniform region":  {BIPOP: true, Max: 2, Point: cmaes.RestartPoint{Uniform: true, Region: region}},
		"active, bipop":          {BIPOP: true, Max: 2},
		"active, nbipop":         {BIPOP: true, Max: 3, SigmaDec: 1.6, Budget: 2},
	}
	for name, rs := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Init: InitUniform, CMA: cmaes.Config{X0: make([]float64, n), Sigma0: 1, Lambda: 8, Seed: 43,
				Restarts: rs, Termination: cmaes.Termination{TolX: 0.02}}}
			if name != "bipop, uniform region" && name != "bipop" {
				cfg.CMA.Bounds = bounds
			}
			cfg.CMA.Active = strings.HasPrefix(name, "active")
			s := mustNew(t, cfg)
			var twins []twin
			restarts, regimes := 0, map[string]bool{}
			for g := 0; s.Primary().Stopped() == nil; g++ {
				if g > 2000 {
					t.Fatal("not stopped after 2000 generations")
				}
				X := s.Ask()
				v := make([]float64, len(X))
				for k, x := range X {
					v[k] = rastrigin(x)
				}
				rec, err := s.Tell(v)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Restarted {
					restarts++
					regimes[s.Primary().Regime()] = true
					u, sig := s.AuxMean()
					if sig != AuxSigma0 || s.hasPrev || s.auxRuns != restarts+1 {
						t.Fatalf("generation %d: after the restart the auxiliary has σ %v, mean %v, %d runs, a kept step %v",
							g, sig, u, s.auxRuns, s.hasPrev)
					}
				}
				blob := stateBits(t, s)
				kept := twins[:0]
				for _, tw := range twins {
					if !sameRows(tw.es.Ask(), X) {
						t.Fatalf("generation %d: a state decoded %d generations ago asks other points", g, 3-tw.left)
					}
					if _, err := tw.es.Tell(v); err != nil {
						t.Fatal(err)
					}
					if again := stateBits(t, tw.es); !bytes.Equal(again, blob) {
						t.Fatalf("generation %d: a state decoded %d generations ago is another state", g, 3-tw.left)
					}
					if tw.left--; tw.left > 0 {
						kept = append(kept, tw)
					}
				}
				twins = kept
				d, err := restoreCopy(t, s)
				if err != nil {
					t.Fatalf("generation %d: %v", g, err)
				}
				if again := stateBits(t, d); !bytes.Equal(again, blob) {
					t.Fatalf("generation %d: the restored state is another state", g)
				}
				twins = append(twins, twin{d, 3})
			}
			if restarts < 3 || rs.BIPOP && !regimes[cmaes.RegimeSmall] {
				t.Fatalf("%d restarts, regimes %v: restarts not tested", restarts, regimes)
			}
			t.Logf("%d restarts, %d generations", restarts, s.Primary().Generation())
		})
	}
}
