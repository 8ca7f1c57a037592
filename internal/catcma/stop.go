package catcma

import (
	"math"
	"slices"
)

// Termination thresholds of the reference (those of CMA-ES).
const (
	tolXFactor      = 1e-12 // tolx = 1e-12 σ⁽⁰⁾; the reference takes σ at the start
	tolXUp          = 1e4
	tolFun          = 1e-12
	tolConditionCov = 1e14
)

// ShouldStop reports the reference's should_stop: the standard CMA-ES
// criteria on the Gaussian (tolfun over the fitness history, tolx, tolxup,
// no effect of a coordinate or an axis, condition of C above 1e14); always
// false without continuous or integer coordinates.
func (o *CatCMA) ShouldStop() bool {
	p, s := o.Params, &o.State
	n := p.NMi
	if n == 0 {
		return false
	}
	if s.Generation > p.FunHistTerm && slices.Max(s.FunHist)-slices.Min(s.FunHist) < tolFun {
		return true
	}
	tolX := tolXFactor * s.Sigma0
	small := true
	for i := range n {
		if !(s.Sigma*s.C[i*n+i] < tolX && s.Sigma*s.PC[i] < tolX) {
			small = false
		}
	}
	if small {
		return true
	}
	dmax, dmin := slices.Max(s.D), slices.Min(s.D)
	if s.Sigma*dmax > tolXUp {
		return true
	}
	for i := range n {
		if s.Mean[i] == s.Mean[i]+0.2*s.Sigma*math.Sqrt(s.C[i*n+i]) {
			return true
		}
	}
	i := s.Generation % n
	same := true
	for j := range n {
		if s.Mean[j] != s.Mean[j]+0.1*s.Sigma*s.D[i]*s.B[j*n+i] {
			same = false
		}
	}
	if same {
		return true
	}
	return dmax/dmin > tolConditionCov
}
