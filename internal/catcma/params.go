package catcma

import (
	"fmt"
	"math"
)

// Constants of the reference implementation.
const (
	eps           = 1e-8  // _EPS
	meanMax       = 1e32  // _MEAN_MAX
	sigmaMax      = 1e32  // _SIGMA_MAX
	minEigenvalue = 1e-30 // floor of σ through min D (post-processing)
	alphaCov      = 2.0
	alphaSNR      = 1.5 // ASNG's α (Akimoto et al. 2019)
	deltaInit     = 1.0 // ASNG's δ_init
)

// Params are the fixed quantities of a run, derived from the space and λ as
// the reference's __init__ computes them.
type Params struct {
	NCo, NIn, NCa, NMi int // N_co, N_in, N_ca, N_mi = N_co + N_in
	Lambda, Mu         int
	Weights            []float64 // w_i, negative ones for active CMA
	MuEff              float64
	C1, CMu, Cc        float64
	CSigma, DSigma     float64
	Cm                 float64
	ChiN               float64
	// Alpha is the integer margin α = 1 − 0.73^{1/(N_in + N_ca)}.
	Alpha float64
	// K holds the numbers of categories, QMin each variable's margin
	// q_min = α/(K − 1), ParamSum Σ(K − 1).
	K        []int
	QMin     []float64
	ParamSum int
	// IQHistTerm and FunHistTerm are the lengths of the penalty's
	// interquartile-range history and of the fitness history of ShouldStop.
	IQHistTerm, FunHistTerm int
}

// DefaultLambda is 4 + ⌊3 ln(N_mi + N_ca)⌋.
func DefaultLambda(s Space) int {
	nco, nin, nca := s.Dims()
	return 4 + int(math.Floor(3*math.Log(float64(nco+nin+nca))))
}

func newParams(s Space, lambda int) (Params, error) {
	p := Params{}
	p.NCo, p.NIn, p.NCa = s.Dims()
	p.NMi = p.NCo + p.NIn
	if lambda == 0 {
		lambda = DefaultLambda(s)
	}
	if lambda < 2 {
		return p, fmt.Errorf("catcma: lambda %d, want at least 2", lambda)
	}
	p.Lambda, p.Mu = lambda, lambda/2
	n, l := float64(p.NMi), float64(lambda)

	wp := make([]float64, lambda)
	for i := range wp {
		wp[i] = math.Log((l+1)/2) - math.Log(float64(i+1))
	}
	p.MuEff = sumSq(wp[:p.Mu])
	muEffMinus := sumSq(wp[p.Mu:])

	p.C1 = alphaCov / ((n+1.3)*(n+1.3) + p.MuEff)
	p.CMu = math.Min(1-p.C1-eps, alphaCov*(p.MuEff-2+1/p.MuEff)/((n+2)*(n+2)+alphaCov*p.MuEff/2))
	minAlpha := 0.0
	if p.NMi > 0 {
		minAlpha = math.Min(1+p.C1/p.CMu, math.Min(1+2*muEffMinus/(p.MuEff+2), (1-p.C1-p.CMu)/(n*p.CMu)))
	}
	pos, neg := 0.0, 0.0
	for _, w := range wp {
		if w > 0 {
			pos += w
		} else if w < 0 {
			neg += math.Abs(w)
		}
	}
	p.Weights = make([]float64, lambda)
	for i, w := range wp {
		if w >= 0 {
			p.Weights[i] = 1 / pos * w
		} else {
			p.Weights[i] = minAlpha / neg * w
		}
	}

	p.Cm = 1
	p.CSigma = (p.MuEff + 2) / (n + p.MuEff + 5)
	p.DSigma = 1 + 2*math.Max(0, math.Sqrt((p.MuEff-1)/(n+1))-1) + p.CSigma
	p.Cc = (4 + p.MuEff/n) / (n + 4 + 2*p.MuEff/n)
	p.ChiN = math.Sqrt(n) * (1 - 1/(4*n) + 1/(21*n*n))
	p.IQHistTerm = 20 + int(math.Ceil(3*n/l))
	p.FunHistTerm = 10 + int(math.Ceil(30*n/l))

	if p.NIn+p.NCa > 0 {
		p.Alpha = 1 - math.Pow(0.73, 1/float64(p.NIn+p.NCa))
	}
	for _, k := range s.C {
		p.K = append(p.K, k)
		p.QMin = append(p.QMin, (1-math.Pow(0.73, 1/float64(p.NIn+p.NCa)))/float64(k-1))
		p.ParamSum += k - 1
	}
	return p, nil
}

// sumSq is (Σ w)² / Σ w², μ_eff of the weights w.
func sumSq(w []float64) float64 {
	s, s2 := 0.0, 0.0
	for _, v := range w {
		s += v
		s2 += v * v
	}
	return s * s / s2
}
