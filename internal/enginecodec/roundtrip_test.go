package enginecodec

// The engines' round trips through their encodings at every generation of
// runs that restart (IPOP, BIPOP, uniform restart points, bounds, active)
// and, for self-CMA-ES, whose gate opens or closes at a restart. The
// engines' own tests do the same through a copy of their State
// (restoreCopy); these check the encoding.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// TestCMAESRestartsRoundTrip encodes and decodes the ES after every generation
// (the ones that restart included) of IPOP with IncPopSize, BIPOP and
// uniform restart points, with and without bounds, and checks that the
// decoded ES encodes to the same bytes and, told the same values, asks the
// same points and stays the same state for 3 generations.
func TestCMAESRestartsRoundTrip(t *testing.T) {
	n := 3
	bounds := &cmaes.Bounds{Lower: constVec(n, -1), Upper: constVec(n, 4)}
	region := &cmaes.Bounds{Lower: constVec(n, 0), Upper: constVec(n, 3)}
	cases := map[string]cmaes.Config{
		"ipop 1.5, bounds":        {Bounds: bounds, Restarts: cmaes.Restarts{IPOP: true, Max: 3, IncPopSize: 1.5}},
		"bipop":                   {Restarts: cmaes.Restarts{BIPOP: true, Max: 3}},
		"bipop, uniform, bounds":  {Bounds: bounds, Restarts: cmaes.Restarts{BIPOP: true, Max: 3, Point: cmaes.RestartPoint{Uniform: true}}},
		"bipop, uniform region":   {Restarts: cmaes.Restarts{BIPOP: true, Max: 3, Point: cmaes.RestartPoint{Uniform: true, Region: region}}},
		"ipop, uniform in bounds": {Bounds: bounds, Restarts: cmaes.Restarts{IPOP: true, Max: 3, Point: cmaes.RestartPoint{Uniform: true, Region: region}}},
		"active, bipop, bounds":   {Active: true, Bounds: bounds, Restarts: cmaes.Restarts{BIPOP: true, Max: 3}},
		"nbipop, uniform, bounds": {Bounds: bounds, Restarts: cmaes.Restarts{BIPOP: true, Max: 3, SigmaDec: 1.6, Budget: 2, Point: cmaes.RestartPoint{Uniform: true}}},
		"nipop":                   {Restarts: cmaes.Restarts{IPOP: true, Max: 3, SigmaDec: 1.6}},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			cfg.X0, cfg.Sigma0, cfg.Seed = constVec(n, 1), 1, 31
			cfg.Termination = cmaes.Termination{TolX: 1e-2}
			e := mustNew(t, cfg)
			f := func(x []float64) float64 { return rastrigin(x) }
			restarts, regimes := 0, map[string]bool{}
			for g := 0; e.Stopped() == nil; g++ {
				if g > 3000 {
					t.Fatal("not stopped after 3000 generations")
				}
				rec := step(t, e, f)
				if rec.Restarted {
					restarts++
					regimes[e.Regime()] = true
					if e.Params().Active != cfg.Active {
						t.Fatalf("generation %d: the restarted run's parameters are not those of Active %v", g, cfg.Active)
					}
				}
				checkDecodedContinues(t, fmt.Sprintf("generation %d", g), e, f, 3)
			}
			if restarts < 3 || cfg.Restarts.BIPOP && !regimes[cmaes.RegimeSmall] {
				t.Fatalf("%d restarts, regimes %v: restarts not tested", restarts, regimes)
			}
		})
	}
}

// checkDecodedContinues encodes e, decodes it and fails unless the decoded cmaes.ES
// encodes to the same bytes and continues as a copy of e does for gens
// generations of f, asking the same points and ending in the same state.
func checkDecodedContinues(t *testing.T, where string, e *cmaes.ES, f func([]float64) float64, gens int) {
	t.Helper()
	blob, _ := marshal(e)
	a, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	b, _ := DecodeCMAES(blob)
	if again, _ := marshal(a); !bytes.Equal(again, blob) {
		t.Fatalf("%s: the decoded cmaes.ES encodes to other bytes", where)
	}
	if !samePoints(a.Ask(), e.Ask()) || a.Regime() != e.Regime() || a.State().GenLimit != e.State().GenLimit {
		t.Fatalf("%s: the decoded cmaes.ES differs", where)
	}
	if largeRuns(a) != largeRuns(e) {
		t.Fatalf("%s: decoded large runs %d, want %d", where, largeRuns(a), largeRuns(e))
	}
	// a continues for b, the original's stand-in: b decoded too, but
	// compared with e at the end of the run below.
	for g := range gens {
		if a.Stopped() != nil {
			break
		}
		X := a.Ask()
		if !samePoints(X, b.Ask()) {
			t.Fatalf("%s, +%d: the decoded cmaes.ES asks other points", where, g)
		}
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = f(x)
		}
		ra, err := a.Tell(v)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Tell(v)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Restarted != rb.Restarted || ra.Regime != rb.Regime {
			t.Fatalf("%s, +%d: records differ", where, g)
		}
	}
	ba, _ := marshal(a)
	bb, _ := marshal(b)
	if !bytes.Equal(ba, bb) {
		t.Fatalf("%s: after %d generations the states differ", where, gens)
	}
}

// TestSelfCMAGateRoundTrip encodes and decodes the state after every
// generation of a run whose gate opens at a restart (and of one whose
// gate closes there): the decoded state has the same gate, encodes to the
// same bytes and, told the same values for 3 generations, asks the same
// points and stays the same state.
func TestSelfCMAGateRoundTrip(t *testing.T) {
	base := cmaes.Config{X0: uniformX0(13, 4), Sigma0: 1, Seed: 13,
		Restarts: cmaes.Restarts{IPOP: true, Max: 2}, Termination: cmaes.Termination{TolX: 1e-2}}
	cases := map[string]selfcma.Config{
		"opens":  {MinLambda: 16, AdaptRestarts: true},
		"closes": {MinLambda: 8},
		// The signal-to-noise rule in the first run, h_t after the restart.
		"snr, then opens": {MinLambda: 16, AdaptRestarts: true, SNR: true},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			cfg.CMA = base
			cfg.CMA.Lambda = 8
			s, err := selfcma.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var twins []selfTwin
			switches := 0
			for g := 0; s.Primary().Stopped() == nil; g++ {
				if g > 5000 {
					t.Fatal("not stopped in 5000 generations")
				}
				was := s.Adapting()
				X := s.Ask()
				v := make([]float64, len(X))
				for k, x := range X {
					v[k] = rosenbrock(x)
				}
				if _, err := s.Tell(v); err != nil {
					t.Fatal(err)
				}
				if s.Adapting() != was {
					switches++
				}
				blob, _ := marshalSelf(s)
				kept := twins[:0]
				for _, tw := range twins {
					if !samePoints(tw.es.Ask(), X) {
						t.Fatalf("generation %d: a state decoded %d generations ago asks other points", g, 3-tw.left)
					}
					if _, err := tw.es.Tell(v); err != nil {
						t.Fatal(err)
					}
					if again, _ := marshalSelf(tw.es); !bytes.Equal(again, blob) {
						t.Fatalf("generation %d: a state decoded %d generations ago is another state", g, 3-tw.left)
					}
					if tw.left--; tw.left > 0 {
						kept = append(kept, tw)
					}
				}
				twins = kept
				d, err := DecodeSelfCMA(blob)
				if err != nil {
					t.Fatalf("generation %d: %v", g, err)
				}
				if on, eta := d.SNR(); on != cfg.SNR || eta != snrEta(s) {
					t.Fatalf("generation %d: decoded rule (%v, η %v), want (%v, η %v)", g, on, eta, cfg.SNR, snrEta(s))
				}
				if d.MinLambda() != s.MinLambda() || d.AdaptRestarts() != s.AdaptRestarts() || d.Adapting() != s.Adapting() {
					t.Fatalf("generation %d: decoded gate (%d, %v, adapting %v), want (%d, %v, adapting %v)", g,
						d.MinLambda(), d.AdaptRestarts(), d.Adapting(), s.MinLambda(), s.AdaptRestarts(), s.Adapting())
				}
				if again, _ := marshalSelf(d); !bytes.Equal(again, blob) {
					t.Fatalf("generation %d: the decoded state encodes to other bytes", g)
				}
				twins = append(twins, selfTwin{d, 3})
			}
			if switches != 1 {
				t.Fatalf("the gate switched %d times, want once", switches)
			}
		})
	}
}

// TestSelfCMARestartsRoundTrip runs self-CMA-ES with IPOP (IncPopSize 1.5), BIPOP
// and uniform restart points, with and without bounds, and after every
// generation (the ones that restart included) checks that the decoded
// state encodes to the same bytes and, told what the original is told for
// 3 generations, asks the same points and stays the same state; and that
// every restart, small or large, starts a fresh auxiliary CMA-ES.
func TestSelfCMARestartsRoundTrip(t *testing.T) {
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
			cfg := selfcma.Config{Init: selfcma.InitUniform, CMA: cmaes.Config{X0: make([]float64, n), Sigma0: 1, Lambda: 8, Seed: 43,
				Restarts: rs, Termination: cmaes.Termination{TolX: 0.02}}}
			if name != "bipop, uniform region" && name != "bipop" {
				cfg.CMA.Bounds = bounds
			}
			cfg.CMA.Active = strings.HasPrefix(name, "active")
			s := selfMustNew(t, cfg)
			var twins []selfTwin
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
					if sig != selfcma.AuxSigma0 || (s.State().Prev != nil) || s.State().AuxRuns != restarts+1 {
						t.Fatalf("generation %d: after the restart the auxiliary has σ %v, mean %v, %d runs, a kept step %v",
							g, sig, u, s.State().AuxRuns, (s.State().Prev != nil))
					}
				}
				blob, _ := marshalSelf(s)
				kept := twins[:0]
				for _, tw := range twins {
					if !samePoints(tw.es.Ask(), X) {
						t.Fatalf("generation %d: a state decoded %d generations ago asks other points", g, 3-tw.left)
					}
					if _, err := tw.es.Tell(v); err != nil {
						t.Fatal(err)
					}
					if again, _ := marshalSelf(tw.es); !bytes.Equal(again, blob) {
						t.Fatalf("generation %d: a state decoded %d generations ago is another state", g, 3-tw.left)
					}
					if tw.left--; tw.left > 0 {
						kept = append(kept, tw)
					}
				}
				twins = kept
				d, err := DecodeSelfCMA(blob)
				if err != nil {
					t.Fatalf("generation %d: %v", g, err)
				}
				if again, _ := marshalSelf(d); !bytes.Equal(again, blob) {
					t.Fatalf("generation %d: the decoded state encodes to other bytes", g)
				}
				twins = append(twins, selfTwin{d, 3})
			}
			if restarts < 3 || rs.BIPOP && !regimes[cmaes.RegimeSmall] {
				t.Fatalf("%d restarts, regimes %v: restarts not tested", restarts, regimes)
			}
			t.Logf("%d restarts, %d generations", restarts, s.Primary().Generation())
		})
	}
}

// snrEta is η of s's signal-to-noise rule (1 when it runs none).
func snrEta(s *selfcma.ES) float64 {
	_, eta := s.SNR()
	return eta
}
