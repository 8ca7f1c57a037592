package cmaes

import (
	"fmt"
	"math"
)

// Params are the strategy parameters of Algorithm 1, line 1, or with Active
// those of active CMA-ES (docs/algorithm.md §1, "Active CMA-ES").
type Params struct {
	N       int       // dimension n
	Lambda  int       // population size λ
	Mu      int       // number of parents μ = ⌊λ/2⌋
	Weights []float64 // recombination weights w_1..w_μ, summing to 1
	MuW     float64   // variance effective selection mass μ_w = 1/Σw_i²
	CSigma  float64   // c_σ = (μ_w + 2)/(n + μ_w + 3)
	DSigma  float64   // d_σ = 1 + c_σ + 2 max(0, √((μ_w − 1)/(n + 1)) − 1)
	Cc      float64   // c_c = 4/(n + 4); active: (4 + μ_w/n)/(n + 4 + 2μ_w/n)
	C1      float64   // c_1 = 2/((n + 1.3)² + μ_w); active: times min(1, λ/6)
	CMu     float64   // c_μ = min(1 − c_1, 2(μ_w − 2 + 1/μ_w)/((n + 2)² + μ_w)); active: μ_w − 1.75 in place of μ_w − 2
	ChiN    float64   // E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²))

	// Active CMA-ES (NewParamsActive with active true; zero otherwise).
	// Its positive weights are w_i ∝ ln((λ + 1)/2) − ln i, i ≤ μ (the
	// paper's for an even λ); the negative ones are WeightsNeg scaled by
	// AlphaNeg of the rates of the update.
	Active bool
	// WeightsNeg are w°_{μ+1}..w°_λ ∝ ln((λ + 1)/2) − ln i, i > μ,
	// normalized to Σ = −1 (the last λ − μ of pycma's raw weights; with an
	// odd λ the first is 0).
	WeightsNeg []float64
	// MuWNeg is μ_w^- = (Σ w°_i)²/Σ w°_i² over the negative weights.
	MuWNeg float64
	// AlphaMuWNeg is α_μeff^- = 1 + 2 μ_w^-/(μ_w + 2), the bound on Σ|w^-|
	// that respects μ_w^- (Hansen's tutorial, eq. 51).
	AlphaMuWNeg float64
}

// DefaultLambda is the default population size 4 + ⌊3 ln n⌋.
func DefaultLambda(n int) int { return 4 + int(math.Floor(3*math.Log(float64(n)))) }

// NewParams returns the parameters of Algorithm 1, line 1, for dimension
// n ≥ 1 and population size λ ≥ 2; λ = 0 selects DefaultLambda(n).
func NewParams(n, lambda int) (Params, error) { return NewParamsActive(n, lambda, false) }

// NewParamsActive returns NewParams(n, λ) for active false, and for active
// true the parameters of active CMA-ES: the default table of Hansen's
// tutorial (arXiv:1604.00772v2, Table 1) where pycma 4.4.0 follows it, and
// pycma's values where they differ (docs/algorithm.md §1).
func NewParamsActive(n, lambda int, active bool) (Params, error) {
	if n < 1 {
		return Params{}, fmt.Errorf("cmaes: dimension %d, want at least 1", n)
	}
	if lambda == 0 {
		lambda = DefaultLambda(n)
	}
	if lambda < 2 {
		return Params{}, fmt.Errorf("cmaes: population size %d, want at least 2", lambda)
	}
	if active {
		return activeParams(n, lambda), nil
	}
	p := Params{N: n, Lambda: lambda, Mu: lambda / 2}
	nf := float64(n)
	p.Weights = make([]float64, p.Mu)
	lnMu := math.Log(float64(p.Mu) + 0.5)
	var sum float64
	for i := range p.Weights {
		p.Weights[i] = lnMu - math.Log(float64(i+1))
		sum += p.Weights[i]
	}
	var sq float64
	for i := range p.Weights {
		p.Weights[i] /= sum
		sq += p.Weights[i] * p.Weights[i]
	}
	p.MuW = 1 / sq
	p.CSigma = (p.MuW + 2) / (nf + p.MuW + 3)
	p.DSigma = 1 + p.CSigma + 2*math.Max(0, math.Sqrt((p.MuW-1)/(nf+1))-1)
	p.Cc = 4 / (nf + 4)
	p.C1 = 2 / ((nf+1.3)*(nf+1.3) + p.MuW)
	// The paper requires c_1 + c_μ ≤ 1 (section 2) but its formula exceeds it
	// for small n and large λ (n = 2, λ = 100 gives c_μ ≈ 1.16); there c_μ is
	// capped at 1 − c_1, as in Hansen's tutorial (arXiv:1604.00772v2, eq. 57).
	p.CMu = min(1-p.C1, 2*(p.MuW-2+1/p.MuW)/((nf+2)*(nf+2)+p.MuW))
	p.ChiN = math.Sqrt(nf) * (1 - 1/(4*nf) + 1/(21*nf*nf))
	return p, nil
}

// activeParams is the tutorial's Table 1 as pycma 4.4.0 computes it
// (options_parameters.CMAParameters.set, interfaces.parameters,
// sigma_adaptation.CMAAdaptSigmaCSA, recombination_weights). Where they
// differ we follow pycma, the implementation we are compared with:
//   - c_1 is multiplied by min(1, λ/6) (it matters only for λ < 6);
//   - c_μ has pycma's rankmu_offset 0.25: 2(0.25 + μ_w − 2 + 1/μ_w)/…;
//   - c_σ = (μ_w + 2)/(n + μ_w + 3), as the paper's (the tutorial has n +
//     μ_w + 5), and d_σ is the paper's, pycma's without mirrored sampling
//     (pycma mirrors for λ < 6, which we do not).
func activeParams(n, lambda int) Params {
	p := Params{N: n, Lambda: lambda, Mu: lambda / 2, Active: true}
	nf, lf := float64(n), float64(lambda)
	raw := make([]float64, lambda)
	lnHalf := math.Log((lf + 1) / 2)
	for i := range raw {
		raw[i] = lnHalf - math.Log(float64(i+1))
	}
	p.Weights = raw[:p.Mu:p.Mu]
	p.WeightsNeg = raw[p.Mu:]
	var sum, sq float64
	for _, w := range p.Weights {
		sum += w
	}
	for i := range p.Weights {
		p.Weights[i] /= sum
		sq += p.Weights[i] * p.Weights[i]
	}
	p.MuW = 1 / sq
	var sumNeg, sqNeg float64
	for _, w := range p.WeightsNeg {
		sumNeg += w
	}
	for i := range p.WeightsNeg {
		p.WeightsNeg[i] /= -sumNeg
		sqNeg += p.WeightsNeg[i] * p.WeightsNeg[i]
	}
	p.MuWNeg = 1 / sqNeg // (Σ w°)² = 1
	p.AlphaMuWNeg = 1 + 2*p.MuWNeg/(p.MuW+2)
	p.CSigma = (p.MuW + 2) / (nf + p.MuW + 3)
	p.DSigma = 1 + p.CSigma + 2*math.Max(0, math.Sqrt((p.MuW-1)/(nf+1))-1)
	p.Cc = (4 + p.MuW/nf) / (nf + 4 + 2*p.MuW/nf)
	p.C1 = min(1, lf/6) * 2 / ((nf+1.3)*(nf+1.3) + p.MuW)
	p.CMu = min(1-p.C1, 2*(0.25+p.MuW-2+1/p.MuW)/((nf+2)*(nf+2)+p.MuW))
	p.ChiN = math.Sqrt(nf) * (1 - 1/(4*nf) + 1/(21*nf*nf))
	return p
}

// AlphaNeg returns the scale of the negative weights for an update with the
// rates h: the update uses w_i = AlphaNeg(h)·WeightsNeg[i], so Σ|w^-| =
// AlphaNeg(h). It is 0 unless p.Active.
func (p Params) AlphaNeg(h Hyper) float64 {
	if !p.Active {
		return 0
	}
	return alphaNeg(h, p.N, p.AlphaMuWNeg)
}

// alphaNeg is min(α_μ^-, α_μeff^-, α_posdef^-) of Hansen's tutorial
// (arXiv:1604.00772v2, eqs. 50–53) for the rates h, in pycma's order
// (RecombinationWeights.finalize_negative_weights): α_μ^- = 1 + c_1/c_μ
// (no decay of C: c_1 + c_μ Σw = 0), α_posdef^- = (1 − c_1 − c_μ)/(n c_μ)
// (C stays positive definite), α_μeff^- = alphaMuW. Self-CMA-ES replays the
// update with other (c_1, c_μ), and the negative part follows them by the
// same formula (docs/algorithm.md §2), so every replayed C' is positive
// definite too. With c_μ = 0 there is no rank-μ update and it is 0.
func alphaNeg(h Hyper, n int, alphaMuW float64) float64 {
	if !(h.CMu > 0) {
		return 0
	}
	a := 1 + h.C1/h.CMu
	a = min(a, (1-h.C1-h.CMu)/(float64(n)*h.CMu))
	return max(0, min(a, alphaMuW))
}

// Hyper are the learning rates that self-CMA-ES adapts: θ = (c_1, c_μ, c_c).
type Hyper struct {
	C1, CMu, Cc float64
}

// Hyper returns the default learning rates of p.
func (p Params) Hyper() Hyper { return Hyper{C1: p.C1, CMu: p.CMu, Cc: p.Cc} }

// Valid reports whether h can be used in an update: each rate in [0, 1] and
// c_1 + c_μ ≤ 1 (the paper, section 2).
func (h Hyper) Valid() bool {
	ok := func(v float64) bool { return v >= 0 && v <= 1 }
	return ok(h.C1) && ok(h.CMu) && ok(h.Cc) && h.C1+h.CMu <= 1
}
