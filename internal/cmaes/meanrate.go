package cmaes

import (
	"fmt"
	"math"
)

// The mean's learning rate in restarts (Config.MeanRateSmallRuns,
// MeanRateLargeRuns; docs/algorithm.md §2, table 19).
//
// LRA-CMA-ES (Nomura, Akimoto, Ono, "CMA-ES with Learning Rate
// Adaptation", GECCO 2023, Algorithm 1; CyberAgentAILab/cmaes _cma.py
// _lr_adaptation) moves the mean by a factor η_m of its update, η_m ≤ 1,
// adapted by the signal-to-noise ratio of that update: on a rugged
// landscape successive steps point in no common direction, the SNR is
// low, η_m falls and the mean moves as a larger population's would,
// averaging the ruggedness out. We run LRA's rule on the mean alone (Σ's
// rate stays 1: self-CMA-ES adapts c_μ by its own rule), with η_m ≥
// MeanRateEtaMin (ours), in the runs the config names, each from η_m = 1.
// In a first run it costs the unimodal functions 2–8 times (η_m falls
// where CSA alone would converge), in BIPOP's small runs it slows those
// that win Gallagher's functions; in the large restarts it pays.
const (
	// DefaultMeanRateAlpha is the target of SNR/η_m: half LRA's 1.4 (with
	// 1.4 and 2.8, η_m fell further and cost f8, f13 and f16 more for no
	// more gain; 0.35, 0.5 and 0.7 measured alike: docs/algorithm.md §2,
	// table 19).
	DefaultMeanRateAlpha = 0.7
	// DefaultMeanRateEtaMin is the smallest η_m: the mean moves by at
	// least half its update (LRA has no bound; without it Weierstrass, f16,
	// was solved in 15 of 30 runs at n = 20 against CMA-ES's 24, with it in
	// 25: docs/algorithm.md §2, table 19).
	DefaultMeanRateEtaMin = 0.5
	meanRateBeta          = 0.1 // β_m, the smoothing of E and V (LRA's)
	meanRateGamma         = 0.1 // γ, the bound on the step of ln η_m (LRA's)
)

// MeanRate is the rule's state in a run that uses it: Eta, the factor of
// the mean's update (η_m in (0, 1]); E, the moving average of the update
// at η_m = 1 in the coordinates of the distribution, C^{−1/2}(m' − m)/σ;
// V, the moving average of its squared norm.
type MeanRate struct {
	Eta float64
	E   []float64
	V   float64
}

func newMeanRate(n int) *MeanRate { return &MeanRate{Eta: 1, E: make([]float64, n)} }

// check reports a state no run of dimension n and smallest η etaMin
// could have.
func (r *MeanRate) check(n int, etaMin float64) error {
	switch {
	case len(r.E) != n:
		return fmt.Errorf("cmaes: mean rate: %d values of E, want %d", len(r.E), n)
	case !(r.Eta >= etaMin && r.Eta <= 1):
		return fmt.Errorf("cmaes: mean rate: η %v outside [%v, 1]", r.Eta, etaMin)
	case !(r.V >= 0) || math.IsInf(r.V, 0):
		return fmt.Errorf("cmaes: mean rate: V %v", r.V)
	}
	for _, v := range r.E {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cmaes: mean rate: E not finite")
		}
	}
	return nil
}

func (r *MeanRate) clone() *MeanRate {
	if r == nil {
		return nil
	}
	return &MeanRate{Eta: r.Eta, E: append([]float64(nil), r.E...), V: r.V}
}

// meanRateUsed reports whether the current run adapts the mean's rate.
func (e *ES) meanRateUsed() bool {
	c := &e.s.Config
	return c.MeanRateSmallRuns && e.s.Regime == RegimeSmall || c.MeanRateLargeRuns && e.s.Regime == RegimeLarge
}

// meanRateNext computes the rule's next state into next (E into next.E)
// from the update's step in the coordinates of the distribution, loc =
// C^{−1/2} y_w, with alpha its α and etaMin the smallest η_m (LRA-CMA-ES,
// Algorithm 1, its update of η_m, and our bound): E ← (1 − β)E +
// β loc, V ← (1 − β)V + β‖loc‖², SNR = (‖E‖² − β/(2 − β) V)/(V − ‖E‖²),
// η_m ← max(etaMin, min(1, η_m exp(min(γη_m, β) clip(SNR/(αη_m) − 1, −1,
// 1)))). The state r is not changed (an update that fails keeps it).
func (r *MeanRate) meanRateNext(next *MeanRate, loc []float64, alpha, etaMin float64) {
	const beta = meanRateBeta
	var sq, e2 float64
	for i, x := range loc {
		v := (1-beta)*r.E[i] + beta*x
		next.E[i] = v
		sq += x * x
		e2 += v * v
	}
	next.V = (1-beta)*r.V + beta*sq
	next.Eta = r.Eta
	snr := (e2 - beta/(2-beta)*next.V) / (next.V - e2)
	if math.IsNaN(snr) {
		return // no step (V = ‖E‖² = 0): no evidence
	}
	rel := max(-1, min(1, snr/(alpha*r.Eta)-1))
	next.Eta = max(etaMin, min(1, r.Eta*math.Exp(min(meanRateGamma*r.Eta, beta)*rel)))
}

// meanRateLoc returns the scratch that update fills with C^{−1/2}y_w
// (the step p_σ accumulates, B D^{−1} Bᵀ y_w) in a run that adapts the
// mean's rate, nil in any other.
func (e *ES) meanRateLoc() []float64 {
	if e.s.MeanRate == nil {
		return nil
	}
	sc := &e.scratch
	if n := e.p.N; len(sc.loc) != n {
		sc.loc, sc.rate.E = make([]float64, n), make([]float64, n)
	}
	return sc.loc
}

// meanRateStep runs the rule in an update from loc = C^{−1/2}y_w
// (meanRateLoc): it computes the rule's next state into the scratch
// (update commits it once the update succeeds), moves mNew to m +
// η_m'(mNew − m) and returns σ's factor η_m/η_m' (LRA's step-size
// correction: the smaller step keeps the distribution's spread).
func (e *ES) meanRateStep(r *MeanRate, mNew, loc []float64) float64 {
	sc := &e.scratch
	c := &e.s.Config
	r.meanRateNext(&sc.rate, loc, c.MeanRateAlpha, c.MeanRateEtaMin)
	eta := sc.rate.Eta
	for j := range mNew {
		mNew[j] = e.s.Mean[j] + eta*(mNew[j]-e.s.Mean[j])
	}
	return r.Eta / eta
}
