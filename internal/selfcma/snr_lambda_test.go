package selfcma

import (
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/bbob"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// TestSNREtaMaxByLambda: the rule on c_μ alone bounds η by SNRCMuMax/c_μ
// within [1, SNREtaMax] up to the default λ, [1, SNREtaMaxAbove] above it,
// so at the default λ it reaches SNREtaMax and at a larger λ at most
// SNREtaMaxAbove, less where the default c_μ is large; η starts at
// min(SNREta0CMu, that bound) and the first c_μ is at most
// max(SNRCMuMax, the default's); a bound given is kept; the rule on both
// rates keeps SNREtaMax.
func TestSNREtaMaxByLambda(t *testing.T) {
	for _, c := range []struct {
		n, lambda, minLambda int
		want                 func(cmu float64) float64
	}{
		{10, 0, 0, func(float64) float64 { return SNREtaMax }},
		{2, 0, 0, func(float64) float64 { return SNREtaMax }},   // the largest default c_μ, 0.086
		{10, 10, 0, func(float64) float64 { return SNREtaMax }}, // the default λ, named
		{10, 11, 0, func(float64) float64 { return SNREtaMaxAbove }},
		{10, 80, 0, func(float64) float64 { return SNREtaMaxAbove }},     // c_μ 0.24: 0.5/c_μ = 2.06
		{5, 40, 0, func(float64) float64 { return SNREtaMaxAbove }},      // c_μ 0.32: 0.5/c_μ = 1.56
		{5, 60, 0, func(cmu float64) float64 { return SNRCMuMax / cmu }}, // c_μ 0.45: η ≤ 1.12
		{2, 40, 100, func(float64) float64 { return SNREtaMin }},         // c_μ 0.71: the default
	} {
		cfg := cmaes.Config{X0: uniformX0(3, c.n), Sigma0: 1, Lambda: c.lambda, Seed: 3, Active: true}
		s, err := New(Config{CMA: cfg, MinLambda: c.minLambda, SNR: true})
		if err != nil {
			t.Fatal(err)
		}
		cmu := s.Primary().Params().CMu
		p := s.State().SNRParams
		if want := c.want(cmu); p.EtaMax != want || p.Eta0 != min(SNREta0CMu, want) || want*cmu > max(SNRCMuMax, cmu)*(1+1e-15) {
			t.Errorf("n = %d, λ = %d (c_μ %.3f): η max %v, η0 %v, want %v, %v", c.n, c.lambda, cmu, p.EtaMax, p.Eta0, want, min(SNREta0CMu, want))
		}
		if got := s.Primary().Hyper().CMu; got > max(cmu, SNRCMuMax)*(1+1e-15) {
			t.Errorf("n = %d, λ = %d: first c_μ %v, above max(%v, %v)", c.n, c.lambda, got, cmu, SNRCMuMax)
		}
		for _, p := range []SNRParams{{EtaMax: 3}, {Rates: SNRRatesBoth}} {
			s, err := New(Config{CMA: cfg, MinLambda: c.minLambda, SNR: true, SNRParams: p})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.State().SNRParams.EtaMax; got != SNREtaMax {
				t.Errorf("n = %d, λ = %d, %+v: η max %v, want %v", c.n, c.lambda, p, got, SNREtaMax)
			}
		}
	}
}

// TestSNRCMuMaxConfig: Config.SNRCMuMax replaces the bound SNRCMuMax on
// η·c_μ, and bounds an SNRParams.EtaMax given with it (n = 5, λ = 40,
// c_μ 0.32: 0.4/c_μ = 1.25; 0.5/c_μ = 1.56 under η max 3); 0 keeps the
// default, η ≤ SNREtaMaxAbove.
func TestSNRCMuMaxConfig(t *testing.T) {
	cfg := cmaes.Config{X0: uniformX0(3, 5), Sigma0: 1, Lambda: 40, Seed: 3, Active: true}
	for _, c := range []struct {
		cmuMax, etaMax float64
		want           func(cmu float64) float64
	}{
		{0, 0, func(float64) float64 { return SNREtaMaxAbove }},
		{0.4, 0, func(cmu float64) float64 { return 0.4 / cmu }},
		{0.5, 3, func(cmu float64) float64 { return 0.5 / cmu }},
		{0.5, 1.2, func(float64) float64 { return 1.2 }},
	} {
		s, err := New(Config{CMA: cfg, SNR: true, SNRParams: SNRParams{EtaMax: c.etaMax}, SNRCMuMax: c.cmuMax})
		if err != nil {
			t.Fatal(err)
		}
		cmu := s.Primary().Params().CMu
		if got, want := s.State().SNRParams.EtaMax, c.want(cmu); got != want || want == SNREtaMaxAbove && c.cmuMax > 0 {
			t.Errorf("c_μ max %v, η max %v (c_μ %.3f): η max %v, want %v", c.cmuMax, c.etaMax, cmu, got, want)
		}
	}
}

// TestSNRBentCigarLambda40: a pycma user's popsize 40 at n = 5 on the bent
// cigar (BBOB f12), as a new session's first run (active, mirrored,
// tol_up_sigma as pycma's). With η up to 3 the rule drove c_μ to the cap
// 0.9 − c_1, C's scale drifted down and σ's up until tol_up_sigma stopped
// runs short of the optimum (table 15; 2 of these 12); with η·c_μ ≤
// SNRCMuMax (1.56 here) and η ≤ SNREtaMaxAbove every run reaches the
// target.
func TestSNRBentCigarLambda40(t *testing.T) {
	const n, lambda = 5, 40
	stopped := map[float64]int{}
	for _, etaMax := range []float64{0, SNREtaMax} {
		for inst := 1; inst <= 12; inst++ {
			f12, s := bbobFirstRun(t, 12, n, lambda, inst, false, SNRParams{EtaMax: etaMax})
			b, _ := s.Primary().Best()
			if slices.ContainsFunc(s.Primary().Stopped(), func(r cmaes.StopReason) bool { return r.Name == cmaes.StopTolUpSigma }) {
				stopped[etaMax]++
			} else if etaMax == 0 && b.F-f12.FOpt() > 1e-8 {
				t.Errorf("instance %d: stopped by %v at f − f_opt = %g", inst, s.Primary().Stopped(), b.F-f12.FOpt())
			}
		}
	}
	t.Logf("runs stopped on tol_up_sigma: %d of 12 with η·c_μ ≤ %v, %d with η ≤ %v", stopped[0], SNRCMuMax, stopped[SNREtaMax], SNREtaMax)
	if stopped[0] > 0 || stopped[SNREtaMax] == 0 {
		t.Errorf("runs stopped on tol_up_sigma: %d with η·c_μ ≤ %v, %d with η ≤ %v (want none, and some)", stopped[0], SNRCMuMax, stopped[SNREtaMax], SNREtaMax)
	}
}

// TestSNRSchaffersLambda60: at n = 10, λ = 60 (six times the default) a
// CMA-ES's first run finds the global optimum of Schaffers' F7 (BBOB f17)
// on most instances; η up to 0.5/c_μ = 2.6, the rule before table 17,
// raised c_μ enough to end most first runs on tol_x in a ripple near it.
// With η ≤ SNREtaMaxAbove most reach the target, and at least three more
// of these 12 than with the rule before.
func TestSNRSchaffersLambda60(t *testing.T) {
	const n, lambda = 10, 60
	reached := map[float64]int{}
	for _, etaMax := range []float64{0, 3} {
		for inst := 1; inst <= 12; inst++ {
			p := SNRParams{}
			if etaMax != 0 {
				pp, err := cmaes.NewParamsActive(n, lambda, true)
				if err != nil {
					t.Fatal(err)
				}
				p.EtaMax = SNREtaMaxOf(pp.CMu, SNRCMuMax, etaMax)
			}
			f17, s := bbobFirstRun(t, 17, n, lambda, inst, true, p)
			if b, _ := s.Primary().Best(); b.F-f17.FOpt() <= 1e-8 {
				reached[etaMax]++
			}
		}
	}
	t.Logf("first runs reaching 1e-8: %d of 12 with η ≤ %v, %d with η ≤ min(3, %v/c_μ)", reached[0], SNREtaMaxAbove, reached[3], SNRCMuMax)
	if reached[0] < 8 || reached[0] < reached[3]+3 {
		t.Errorf("first runs reaching 1e-8: %d of 12 with η ≤ %v, %d before (want at least 8, and 3 more)", reached[0], SNREtaMaxAbove, reached[3])
	}
}

// bbobFirstRun runs a new session's first run of self-CMA-ES (active,
// mirrored, tol_up_sigma as pycma's; tolflatfitness if flat) with the
// rule's parameters p on BBOB function f, instance inst, until it stops:
// x0 uniform in [−4, 4]^n and σ0 = 2, the protocol of cmd/bench.
func bbobFirstRun(t *testing.T, f, n, lambda, inst int, flat bool, p SNRParams) (*bbob.Problem, *ES) {
	t.Helper()
	prob, err := bbob.New(f, n, inst)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cmaes.Config{X0: uniformX0(uint64(inst), n), Sigma0: 2, Lambda: lambda, Seed: uint64(inst),
		Active: true, MirroredFirstRun: true,
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: prob.FOpt() + 1e-8,
			MaxEvaluations: 10000 * n, UpSigmaMoved: true, FlatFitness: flat}}
	s, err := New(Config{CMA: cfg, SNR: true, SNRParams: p})
	if err != nil {
		t.Fatal(err)
	}
	for s.Primary().Stopped() == nil {
		step(t, s, prob.Eval)
	}
	return prob, s
}
