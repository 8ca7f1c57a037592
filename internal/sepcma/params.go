package sepcma

import (
	"fmt"
	"math"
)

// Rates selects the learning rates c_1, c_μ of the diagonal C.
type Rates uint8

const (
	// RatesSepCMA are CyberAgentAILab/cmaes's SepCMA rates (the default):
	// c_1 = 2/((n + 1.3)² + μ_w), the rank-one rate of full CMA-ES left
	// unscaled, and c_μ = (n + 2)/3 · c_cov, the paper's whole c_cov^sep
	// given to the rank-μ update.
	RatesSepCMA Rates = iota
	// RatesPaper are Ros and Hansen's (Sect. 2, with μ_cov = μ_w):
	// c_cov^sep = min(1, (n + 2)/3 · c_cov), c_1 = c_cov^sep/μ_cov and
	// c_μ = c_cov^sep·(1 − 1/μ_cov).
	RatesPaper
	ratesCount
)

func (r Rates) String() string {
	switch r {
	case RatesSepCMA:
		return "sepcma"
	case RatesPaper:
		return "paper"
	}
	return fmt.Sprintf("Rates(%d)", uint8(r))
}

// Params are the strategy parameters for (n, λ).
type Params struct {
	N       int       // dimension n
	Lambda  int       // population size λ
	Mu      int       // parents μ = ⌊λ/2⌋
	Weights []float64 // w_i ∝ ln(μ + 1) − ln i, i = 1..μ, Σ w_i = 1 (tutorial eq. 49, as SepCMA)
	MuW     float64   // μ_w = 1/Σ w_i²
	CSigma  float64   // c_σ = (μ_w + 2)/(n + μ_w + 3)
	DSigma  float64   // d_σ = 1 + 2 max(0, √((μ_w − 1)/(n + 1)) − 1) + c_σ
	Cc      float64   // c_c = 4/(n + 4)
	C1      float64   // rank-one rate (Rates)
	CMu     float64   // rank-μ rate (Rates), at most 1 − c_1
	ChiN    float64   // E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²))
	Rates   Rates
}

// DefaultLambda is the default population size 4 + ⌊3 ln n⌋ (tutorial
// eq. 48), as cmaes's.
func DefaultLambda(n int) int { return 4 + int(math.Floor(3*math.Log(float64(n)))) }

// cCov is the paper's c_cov for μ_cov = μ_w: the total learning rate of full
// CMA-ES, (1/μ_cov)·2/(n + √2)² + (1 − 1/μ_cov)·min(1, (2μ_w − 1)/((n + 2)² + μ_w)).
func cCov(nf, muW float64) float64 {
	return 1/muW*2/((nf+math.Sqrt2)*(nf+math.Sqrt2)) +
		(1-1/muW)*math.Min(1, (2*muW-1)/((nf+2)*(nf+2)+muW))
}

// NewParams returns the parameters for dimension n ≥ 1 and population size
// λ ≥ 2 (0 selects DefaultLambda) with the given rates.
func NewParams(n, lambda int, rates Rates) (Params, error) {
	if n < 1 {
		return Params{}, fmt.Errorf("sepcma: dimension %d, want at least 1", n)
	}
	if lambda == 0 {
		lambda = DefaultLambda(n)
	}
	if lambda < 2 {
		return Params{}, fmt.Errorf("sepcma: population size %d, want at least 2", lambda)
	}
	if rates >= ratesCount {
		return Params{}, fmt.Errorf("sepcma: unknown rates %d", rates)
	}
	p := Params{N: n, Lambda: lambda, Mu: lambda / 2, Rates: rates}
	nf := float64(n)
	p.Weights = make([]float64, p.Mu)
	var sum float64
	for i := range p.Weights {
		p.Weights[i] = math.Log(float64(p.Mu)+1) - math.Log(float64(i+1))
		sum += p.Weights[i]
	}
	var sq float64
	for i := range p.Weights {
		p.Weights[i] /= sum
		sq += p.Weights[i] * p.Weights[i]
	}
	p.MuW = 1 / sq
	p.CSigma = (p.MuW + 2) / (nf + p.MuW + 3)
	p.DSigma = 1 + 2*math.Max(0, math.Sqrt((p.MuW-1)/(nf+1))-1) + p.CSigma
	p.Cc = 4 / (nf + 4)
	sep := (nf + 2) / 3 * cCov(nf, p.MuW) // the paper's c_cov^sep
	switch rates {
	case RatesSepCMA:
		p.C1 = 2 / ((nf+1.3)*(nf+1.3) + p.MuW)
		p.CMu = sep
	case RatesPaper:
		sep = math.Min(1, sep)
		p.C1 = sep / p.MuW
		p.CMu = sep * (1 - 1/p.MuW)
	}
	// C stays positive (its decay factor 1 − c_1 − c_μ ≥ 0): SepCMA does
	// not cap c_μ, and exceeds 1 − c_1 for small n with a large λ.
	p.CMu = math.Min(p.CMu, 1-p.C1)
	p.ChiN = math.Sqrt(nf) * (1 - 1/(4*nf) + 1/(21*nf*nf))
	return p, nil
}
