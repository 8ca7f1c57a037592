package cmaes

import (
	"fmt"
	"math"
)

// Params are the strategy parameters of Algorithm 1, line 1.
type Params struct {
	N       int       // dimension n
	Lambda  int       // population size λ
	Mu      int       // number of parents μ = ⌊λ/2⌋
	Weights []float64 // recombination weights w_1..w_μ, summing to 1
	MuW     float64   // variance effective selection mass μ_w = 1/Σw_i²
	CSigma  float64   // c_σ = (μ_w + 2)/(n + μ_w + 3)
	DSigma  float64   // d_σ = 1 + c_σ + 2 max(0, √((μ_w − 1)/(n + 1)) − 1)
	Cc      float64   // c_c = 4/(n + 4)
	C1      float64   // c_1 = 2/((n + 1.3)² + μ_w)
	CMu     float64   // c_μ = min(1 − c_1, 2(μ_w − 2 + 1/μ_w)/((n + 2)² + μ_w))
	ChiN    float64   // E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²))
}

// DefaultLambda is the default population size 4 + ⌊3 ln n⌋.
func DefaultLambda(n int) int { return 4 + int(math.Floor(3*math.Log(float64(n)))) }

// NewParams returns the parameters of Algorithm 1, line 1, for dimension
// n ≥ 1 and population size λ ≥ 2; λ = 0 selects DefaultLambda(n).
func NewParams(n, lambda int) (Params, error) {
	if n < 1 {
		return Params{}, fmt.Errorf("cmaes: dimension %d, want at least 1", n)
	}
	if lambda == 0 {
		lambda = DefaultLambda(n)
	}
	if lambda < 2 {
		return Params{}, fmt.Errorf("cmaes: population size %d, want at least 2", lambda)
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
