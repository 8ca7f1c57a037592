package catcma

import "math"

// integerCentering is _integer_centering (paper §4.2): among the μ best
// samples, an integer coordinate that rounds to another value than the
// mean's (a successful mutation) moves to that value; the others move toward
// their value's centre as far as it removes the bias of the moved ones. It
// also records which integer variables had a successful mutation.
func (o *CatCMA) integerCentering(sv [][]float64) {
	p, s := o.Params, &o.State
	nin, off := p.NIn, p.NCo
	old := make([][]float64, p.Mu)
	for k := range p.Mu {
		old[k] = append([]float64(nil), sv[k]...)
	}
	intM := make([]float64, nin)
	for i := range nin {
		intM[i] = o.grid.discretize(i, s.Mean[off+i])
	}
	mpos, mneg := make([]float64, nin), make([]float64, nin)
	for i := range s.IntSucc {
		s.IntSucc[i] = false
	}
	for k := range p.Mu {
		for i := range nin {
			v := sv[k][off+i]
			iv := o.grid.discretize(i, v)
			if iv != intM[i] {
				s.IntSucc[i] = true
				sv[k][off+i] = iv
				continue
			}
			if d := iv - v; d > 0 {
				mpos[i] += d
			} else if d < 0 {
				mneg[i] += d
			}
		}
	}
	bias := make([]float64, nin)
	for k := range p.Mu {
		for i := range nin {
			bias[i] += sv[k][off+i] - old[k][off+i]
		}
	}
	alphas := make([]float64, nin)
	for _, moves := range [][]float64{mpos, mneg} {
		for i := range nin {
			if bias[i]*moves[i] < 0 {
				alphas[i] = math.Min(1, -bias[i]/moves[i])
			}
		}
	}
	for k := range p.Mu {
		for i := range nin {
			intOld := o.grid.discretize(i, old[k][off+i])
			intNew := o.grid.discretize(i, sv[k][off+i])
			delta := intOld - old[k][off+i]
			if bias[i]*delta < 0 && intNew == intM[i] {
				sv[k][off+i] += alphas[i] * delta
			}
		}
	}
}

// marginCorrection is _margin_correction (paper §4.3): it moves the mean and
// scales A on each integer coordinate so that the marginal probability of
// each neighbouring value stays at least α/2 and the probability of
// mutation follows the last success.
func (o *CatCMA) marginCorrection() {
	p, s := o.Params, &o.State
	n, nin, off := p.NMi, p.NIn, p.NCo
	alpha := p.Alpha
	last := len(o.grid.lim[0]) - 1
	m := make([]float64, nin) // the updated mean, before the correction
	low, up := make([]float64, nin), make([]float64, nin)
	lo, hi := make([]float64, nin), make([]float64, nin)
	mid := make([]float64, nin)
	cd := make([]float64, nin)
	var edge, side []bool
	anyEdge, anySide := false, false
	for i := range nin {
		m[i] = s.Mean[off+i]
		pos := searchsorted(o.grid.lim[i], m[i])
		lo[i] = o.grid.lim[i][min(max(pos-1, 0), last)]
		hi[i] = o.grid.lim[i][min(max(pos, 0), last)]
		cd[i] = s.C[(off+i)*n+off+i]
		scale := s.Sigma * s.A[off+i] * math.Sqrt(cd[i])
		low[i] = normCDF(lo[i], m[i], scale)    // Pr(X ≤ lim_low)
		up[i] = 1 - normCDF(hi[i], m[i], scale) // Pr(lim_up < X)
		mid[i] = 1 - (low[i] + up[i])
		mx := math.Max(low[i], up[i])
		edge, side = append(edge, mx > 0.5), append(side, mx <= 0.5)
		anyEdge, anySide = anyEdge || mx > 0.5, anySide || mx <= 0.5
	}

	if anyEdge {
		qAlpha := chi2PPF(1 - 2*alpha)
		pmut := make([]float64, nin)
		for i := range nin {
			pm := math.Max(math.Min(low[i], up[i]), alpha)
			if !s.IntSucc[i] {
				pm = math.Min(pm, s.PMut[i])
			}
			pmut[i] = min(max(pm, eps), 0.5-eps)
		}
		for i := range nin {
			if !edge[i] {
				continue
			}
			sign := sign(s.Mean[off+i] - hi[i])
			mInt := o.grid.discretize(i, m[i])
			aLower := math.Abs(mInt-hi[i]) / (s.Sigma * math.Sqrt(qAlpha*cd[i]))
			s.A[off+i] = math.Max(s.A[off+i], aLower)
			dist := s.Sigma * s.A[off+i] * math.Sqrt(chi2PPF(1-2*pmut[i])*cd[i])
			s.Mean[off+i] += hi[i] + sign*dist - s.Mean[off+i]
			s.PMut[i] = pmut[i]
		}
	}

	if anySide {
		for i := range nin {
			if !side[i] {
				continue
			}
			l, u, md := math.Max(low[i], alpha/2), math.Max(up[i], alpha/2), mid[i]
			var d float64
			if s.IntSucc[i] {
				d = (1 - l - u - md) / (l + u + md - 3*alpha/2)
			} else {
				md = math.Max(md, 1-s.PMut[i])
				d = (1 - l - u - md) / (l + u + md - alpha - (1 - s.PMut[i]))
			}
			l += d * (l - alpha/2)
			u += d * (u - alpha/2)
			l, u = min(max(l, eps), 0.5-eps), min(max(u, eps), 0.5-eps)
			chiLow, chiUp := math.Sqrt(chi2PPF(1-2*l)), math.Sqrt(chi2PPF(1-2*u))
			cSqrt := math.Sqrt(cd[i])
			s.A[off+i] += (hi[i]-lo[i])/((chiLow+chiUp)*s.Sigma*cSqrt) - s.A[off+i]
			s.Mean[off+i] += (lo[i]*chiUp+hi[i]*chiLow)/(chiLow+chiUp) - s.Mean[off+i]
			s.PMut[i] = l + u
		}
	}
}

// sign is numpy's sign.
func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	case v == 0:
		return 0
	}
	return math.NaN()
}
