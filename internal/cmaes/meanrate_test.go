package cmaes

import (
	"math"
	"testing"
)

// TestMeanRateFormula: one step of the rule from a fresh state, against
// LRA-CMA-ES's formulas written out (Algorithm 1, its update of η_m, for the
// mean): a step loc = (1, 0) gives E = (β, 0), V = β, SNR = (β² −
// β/(2 − β)·β)/(β − β²), and η_m = exp(min(γ, β)·clip(SNR/α − 1, −1, 1)).
// A state told the same step over and over has a rising SNR and comes back
// to η_m = 1, never above.
func TestMeanRateFormula(t *testing.T) {
	const alpha, beta, gamma = 0.7, meanRateBeta, meanRateGamma
	r := newMeanRate(2)
	next := &MeanRate{E: make([]float64, 2)}
	r.meanRateNext(next, []float64{1, 0}, alpha, 0)
	snr := (beta*beta - beta/(2-beta)*beta) / (beta - beta*beta)
	want := math.Exp(min(gamma, beta) * max(-1, min(1, snr/alpha-1)))
	if math.Abs(next.Eta-want) > 1e-15 || next.E[0] != beta || next.E[1] != 0 || math.Abs(next.V-beta) > 1e-17 {
		t.Fatalf("one step: η %v E %v V %v; want η %v, E (%v, 0), V %v", next.Eta, next.E, next.V, want, beta, beta)
	}
	if r.Eta != 1 || r.V != 0 || r.E[0] != 0 {
		t.Fatalf("meanRateNext changed its state: %+v", r)
	}
	// A random-walk-like sign flip lowers η further; a constant direction
	// then brings it back to 1.
	for k := range 30 {
		*r, next = *next, &MeanRate{E: make([]float64, 2)}
		r.meanRateNext(next, []float64{float64(1 - 2*(k%2)), 0}, alpha, 0)
		if !(next.Eta > 0 && next.Eta < r.Eta+1e-15) && k > 0 {
			t.Fatalf("alternating steps, step %d: η %v after %v", k, next.Eta, r.Eta)
		}
	}
	low := next.Eta
	for range 500 {
		*r, next = *next, &MeanRate{E: make([]float64, 2)}
		r.meanRateNext(next, []float64{1, 0}, alpha, 0)
		if next.Eta > 1 {
			t.Fatalf("η %v above 1", next.Eta)
		}
	}
	if !(low < 0.8) || next.Eta != 1 {
		t.Fatalf("η after alternating steps %v (want < 0.8), after 500 steps in one direction %v (want 1)", low, next.Eta)
	}
	// The smallest η_m bounds the fall.
	r, next = newMeanRate(2), &MeanRate{E: make([]float64, 2)}
	for k := range 200 {
		r.meanRateNext(next, []float64{float64(1 - 2*(k%2)), 0}, alpha, 0.9)
		if next.Eta < 0.9 {
			t.Fatalf("step %d: η %v below the bound 0.9", k, next.Eta)
		}
		*r, next = *next, &MeanRate{E: make([]float64, 2)}
	}
	if r.Eta != 0.9 {
		t.Fatalf("alternating steps with the bound 0.9: η %v, want 0.9", r.Eta)
	}
}

// TestMeanRateUpdate: with MeanRateLargeRuns the first run and the small
// runs are those of an ES without it, bit for bit; in the first generation
// of the first large run the mean moves by η_m of the update the other ES
// makes from the same batch, and σ is that ES's σ times 1/η_m (LRA's
// step-size correction), C the same. Later large runs each start the rule
// afresh.
func TestMeanRateUpdate(t *testing.T) {
	cfg := Config{X0: []float64{3, 3, 3, 3, 3}, Sigma0: 2, Seed: 41, Active: true,
		Restarts: Restarts{BIPOP: true, Max: 4, SigmaDec: 1.6, Budget: 2}}
	plain := mustNew(t, cfg)
	cfg.MeanRateLargeRuns, cfg.MeanRateAlpha = true, 0.7
	lra := mustNew(t, cfg)
	for g := 0; lra.Regime() != RegimeLarge; g++ {
		if g > 3000 {
			t.Fatal("no large run within 3000 generations")
		}
		if lra.State().MeanRate != nil {
			t.Fatalf("generation %d, regime %s: the rule runs", g, lra.Regime())
		}
		step(t, plain, rastrigin)
		step(t, lra, rastrigin)
	}
	a, b := lra.State(), plain.State()
	if a.MeanRate == nil || a.MeanRate.Eta != 1 || a.T != 0 {
		t.Fatalf("a large run starts with rule %+v at t = %d, want η_m = 1 at t = 0", a.MeanRate, a.T)
	}
	if !sameFloats(a.Mean, b.Mean) || a.Sigma != b.Sigma {
		t.Fatal("the two ES differ before the large run")
	}
	m := append([]float64(nil), a.Mean...)
	step(t, plain, rastrigin)
	step(t, lra, rastrigin)
	a, b = lra.State(), plain.State()
	eta := a.MeanRate.Eta
	if !(eta > 0 && eta < 1) {
		t.Fatalf("η_m after the first step %v, want in (0, 1)", eta)
	}
	for j := range m {
		if want := m[j] + eta*(b.Mean[j]-m[j]); a.Mean[j] != want {
			t.Fatalf("mean[%d] %v, want m + η_m(m' − m) = %v", j, a.Mean[j], want)
		}
	}
	if want := b.Sigma * (1 / eta); a.Sigma != want {
		t.Fatalf("σ %v, want σ'/η_m = %v", a.Sigma, want)
	}
	if !sameFloats(a.C.RawSymmetric().Data, b.C.RawSymmetric().Data) {
		t.Fatal("C differs")
	}
	// Every later large run starts afresh, every small run has no rule.
	runs, fresh := lra.State().Run, 0
	for g := 0; lra.Stopped() == nil && g < 20000; g++ {
		step(t, lra, rastrigin)
		st := lra.State()
		if (st.MeanRate != nil) != (st.Regime == RegimeLarge) {
			t.Fatalf("regime %s with rule %+v", st.Regime, st.MeanRate)
		}
		if st.Run != runs && st.Regime == RegimeLarge {
			if st.T != 0 || st.MeanRate.Eta != 1 || st.MeanRate.V != 0 {
				t.Fatalf("large run %d starts at t = %d with rule %+v", st.Run, st.T, st.MeanRate)
			}
			fresh++
		}
		runs = st.Run
	}
	if fresh == 0 {
		t.Fatal("no later large run")
	}
}

// TestMeanRateAlphaResolved: New records the default α and smallest η_m
// where a run may use the rule, Restore refuses unresolved ones, and
// values out of range are refused.
func TestMeanRateAlphaResolved(t *testing.T) {
	cfg := Config{X0: []float64{1, 2}, Sigma0: 1, Restarts: Restarts{IPOP: true}, MeanRateLargeRuns: true}
	e := mustNew(t, cfg)
	if c := e.Config(); c.MeanRateAlpha != DefaultMeanRateAlpha || c.MeanRateEtaMin != DefaultMeanRateEtaMin {
		t.Fatalf("α %v, smallest η %v; want the defaults", c.MeanRateAlpha, c.MeanRateEtaMin)
	}
	for _, zero := range []func(*Config){func(c *Config) { c.MeanRateAlpha = 0 }, func(c *Config) { c.MeanRateEtaMin = 0 }} {
		st := e.State().Clone()
		zero(&st.Config)
		if _, err := Restore(st); err == nil {
			t.Error("a state with an unresolved α or smallest η restored")
		}
	}
	for _, bad := range []func(*Config){func(c *Config) { c.MeanRateAlpha = -1 }, func(c *Config) { c.MeanRateEtaMin = 1.5 }, func(c *Config) { c.MeanRateEtaMin = -0.1 }} {
		c := cfg
		bad(&c)
		if _, err := New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
