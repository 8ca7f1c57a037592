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
	name, _ := o.criterion()
	return name != ""
}

// criterion returns the first criterion of ShouldStop that holds, by
// cmaes's name, and its value; "" when none does.
func (o *CatCMA) criterion() (string, float64) {
	p, s := o.Params, &o.State
	n := p.NMi
	if n == 0 {
		return "", 0
	}
	if s.Generation > p.FunHistTerm {
		if r := slices.Max(s.FunHist) - slices.Min(s.FunHist); r < tolFun {
			return "tol_fun", r
		}
	}
	tolX := tolXFactor * s.Sigma0
	small := true
	for i := range n {
		if !(s.Sigma*s.C[i*n+i] < tolX && s.Sigma*s.PC[i] < tolX) {
			small = false
		}
	}
	if small {
		return "tol_x", s.Sigma
	}
	dmax, dmin := slices.Max(s.D), slices.Min(s.D)
	if s.Sigma*dmax > tolXUp {
		return "tol_up_sigma", s.Sigma * dmax
	}
	for i := range n {
		if s.Mean[i] == s.Mean[i]+0.2*s.Sigma*math.Sqrt(s.C[i*n+i]) {
			return "no_effect_coord", float64(i)
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
		return "no_effect_axis", float64(i)
	}
	if r := dmax / dmin; r > tolConditionCov {
		return "condition_cov", r * r
	}
	return "", 0
}
