package main

import (
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

// The signal-to-noise rule of LRA-CMA-ES (Nomura, Akimoto, Ono, "CMA-ES
// with Learning Rate Adaptation", GECCO 2023, Algorithm 1 and its
// reference implementation, CyberAgentAILab/cmaes _cma.py
// _lr_adaptation), applied to a factor η of CMA-ES's c_1 and c_μ in the
// first run (docs/algorithm.md §2, table 9). It differs from LRA in three
// places: the update measured is C's alone (not σ²C's: CSA keeps σ), η
// may grow past 1 (to snrEtaMax, or -rate-snr-max; -rate-snr-min bounds it
// below), and the target SNR α is snrAlpha, 0.02 (LRA: 1.4), since C's
// update alone has a far smaller SNR. A measuring knob: the session
// setting is self-CMA-ES's (selfcma.Config.SNR, η in [1, 3]).
const (
	snrAlpha  = 0.02 // target of SNR/η (LRA's α)
	snrBeta   = 0.03 // LRA's β_Σ, the smoothing of E and V
	snrGamma  = 0.1  // LRA's γ
	snrEtaMax = 3.0  // largest η
)

// snrRule is the state of the rule in one run.
type snrRule struct {
	eta    float64
	etaMin float64
	etaMax float64
	e      []float64 // E: moving average of the local update, n² entries
	v      float64   // V: moving average of its squared norm
}

func newSNRRule(n int, etaMin, etaMax float64) *snrRule {
	return &snrRule{eta: 1, etaMin: etaMin, etaMax: etaMax, e: make([]float64, n*n)}
}

// observe updates η from C^t (with its eigendecomposition B, D) and
// C^{t+1}, the update having used η times the default c_1, c_μ.
func (r *snrRule) observe(c0, c1 *mat.SymDense, b *mat.Dense, d []float64) {
	n := len(d)
	// Δ = C^{−1/2} (C^{t+1} − C^t) C^{−1/2} / (η √2): the update at η = 1
	// (it is linear in c_1, c_μ) in the coordinates of C^t.
	isq := mat.NewDense(n, n, nil) // C^{−1/2} = B D^{−1} Bᵀ
	for i := range n {
		for j := range n {
			var s float64
			for k := range n {
				s += b.At(i, k) * b.At(j, k) / d[k]
			}
			isq.Set(i, j, s)
		}
	}
	dc := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			dc.Set(i, j, c1.At(i, j)-c0.At(i, j))
		}
	}
	var t, loc mat.Dense
	t.Mul(isq, dc)
	loc.Mul(&t, isq)
	k := 1 / (r.eta * math.Sqrt2)
	var sq, e2 float64
	for i := range n {
		for j := range n {
			x := loc.At(i, j) * k
			r.e[i*n+j] = (1-snrBeta)*r.e[i*n+j] + snrBeta*x
			sq += x * x
			e2 += r.e[i*n+j] * r.e[i*n+j]
		}
	}
	r.v = (1-snrBeta)*r.v + snrBeta*sq
	// LRA: SNR = (‖E‖² − β/(2 − β) V) / (V − ‖E‖²); η ← η exp(min(γη, β)
	// clip(SNR/(αη) − 1, −1, 1)).
	snr := (e2 - snrBeta/(2-snrBeta)*r.v) / (r.v - e2)
	rel := max(-1, min(1, snr/(snrAlpha*r.eta)-1))
	r.eta = max(r.etaMin, min(r.etaMax, r.eta*math.Exp(min(snrGamma*r.eta, snrBeta)*rel)))
}

// snrTell tells e with η times its run's default c_1 and c_μ (c_1 + c_μ
// capped at 0.9) in the first run, η adapted by snrRule; restarts use the
// defaults.
func snrTell(e *cmaes.ES, etaMin, etaMax float64) func([]float64) (cmaes.Record, error) {
	r := newSNRRule(e.Dim(), etaMin, etaMax)
	return func(f []float64) (cmaes.Record, error) {
		h := e.Params().Hyper()
		first := e.Run() == 0
		if first {
			h = scaleRates(h, r.eta)
		}
		if err := e.SetHyper(h); err != nil {
			return cmaes.Record{}, err
		}
		var (
			b  *mat.Dense
			d  []float64
			c0 *mat.SymDense
		)
		if first {
			b, d = e.Eigen()
			c0 = e.C()
		}
		rec, err := e.Tell(f)
		if err != nil || !first || rec.Restarted || e.LastStep() == nil {
			return rec, err
		}
		r.observe(c0, e.C(), b, d)
		return rec, nil
	}
}
