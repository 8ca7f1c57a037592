package catcma

import (
	"math"
	"slices"
	"sort"
)

// rank returns the batch's indices best first and the fitness sorted by
// itself: the reference's tell sorts by f, adds the box penalty of the
// continuous coordinates (Hansen et al., "A Method for Handling Uncertainty
// in Evolutionary Optimization...", IEEE TEC 2009, its boundary handling)
// and sorts again, both sorts stable.
func (o *CatCMA) rank(f []float64) (order []int, sortedF []float64) {
	p := o.Params
	order = make([]int, p.Lambda)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return f[order[a]] < f[order[b]] })
	sortedF = make([]float64, p.Lambda)
	for r, k := range order {
		sortedF[r] = f[k]
	}
	if p.NCo == 0 {
		return order, sortedF
	}
	pen, ok := o.penalty(order, sortedF)
	if !ok {
		return order, sortedF
	}
	pf := make([]float64, p.Lambda)
	for r := range pf {
		pf[r] = sortedF[r] + pen[r]
	}
	idx := make([]int, p.Lambda)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return pf[idx[a]] < pf[idx[b]] })
	out := make([]int, p.Lambda)
	for r, i := range idx {
		out[r] = order[i]
	}
	return out, sortedF
}

// penalty is _calc_continuous_penalty: the penalties of the batch in the
// order given, false when the history of interquartile ranges is empty
// (the reference's penalties are then NaN and leave the order as it is).
func (o *CatCMA) penalty(order []int, sortedF []float64) ([]float64, bool) {
	p, s := o.Params, &o.State
	n, lam := p.NMi, p.Lambda
	iq := sortedF[3*lam/4] - sortedF[lam/4]
	switch {
	case !math.IsInf(iq, 0) && !math.IsNaN(iq) && iq > 0:
		s.IQHist = slices.Insert(s.IQHist, 0, iq)
	case math.IsInf(iq, 1) && len(s.IQHist) > 1:
		s.IQHist = slices.Insert(s.IQHist, 0, slices.Max(s.IQHist))
	}
	if len(s.IQHist) > p.IQHistTerm {
		s.IQHist = s.IQHist[:len(s.IQHist)-1]
	}
	if len(s.IQHist) == 0 {
		return nil, false
	}
	lo, hi := make([]float64, n), make([]float64, n)
	for i := range n {
		lo[i], hi[i] = math.Inf(-1), math.Inf(1)
		if i < p.NCo {
			lo[i], hi[i] = o.Space.X[i][0], o.Space.X[i][1]
		}
	}
	diagCA := make([]float64, n)
	sumCA, sumLog := 0.0, 0.0
	for i := range n {
		diagCA[i] = s.C[i*n+i] * s.A[i]
		sumCA += diagCA[i]
		sumLog += math.Log(diagCA[i])
	}
	deltaFit := median(s.IQHist)
	g0 := 2 * deltaFit / (s.Sigma * s.Sigma * sumCA)
	inc := math.Pow(1.1, math.Max(1, p.MuEff/(10*float64(n))))
	gamma, xi := make([]float64, n), make([]float64, n)
	for i := range n {
		gamma[i] = g0
		far := 3 * s.Sigma * math.Sqrt(diagCA[i]) * math.Max(1, math.Sqrt(float64(n))/p.MuEff)
		m := s.Mean[i]
		if (m < lo[i] && math.Abs(m-lo[i]) > far) || (hi[i] < m && math.Abs(hi[i]-m) > far) {
			gamma[i] *= inc
		}
		xi[i] = math.Exp(0.9 * (math.Log(diagCA[i]) - sumLog/float64(n)))
	}
	pen := make([]float64, lam)
	for r, k := range order {
		v := s.V[k]
		sum := 0.0
		for i := range n {
			d := min(max(v[i], lo[i]), hi[i]) - v[i]
			sum += gamma[i] * (d * d) / xi[i]
		}
		pen[r] = sum
	}
	return pen, true
}

// median is numpy's median.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
