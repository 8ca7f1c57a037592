package constraints

import "math"

// update is AugmentedLagrangian.update(f, g) with algorithm 0: f and g are
// those of the iteration's best candidate by AL value. After the first
// update: λ_i ← λ_i + μ_i g_i / d_γ (FOGA 2017, Algorithm 1, line 9), unless
// the constraint was never in the penalized domain since the last update;
// λ_i clamped at 0, then μ_i unchanged; μ_i unchanged while g_i is outside
// the penalized domain; otherwise μ_i grows by χ^{(1 + e)/4} when g_i > 0
// or when more than 95 % of the recent g_i (5 + n of them) are feasible
// while g_i is penalized (muplus3), and shrinks by χ^{−(1 − e)/4} when g_i <
// 0 and fewer than 90 % are feasible (muminus3); e ramps up with
// consecutive changes of the same sign (CountLastSameChanges).
func (a *AL) update(f float64, g []float64) {
	p, s := a.Params, &a.State
	s.GHistory = append(s.GHistory, append([]float64(nil), g...))
	if len(s.GHistory) > p.HistoryLen {
		s.GHistory = s.GHistory[1:]
	}
	if !s.Set {
		return
	}
	if s.HavePrev && anyPositive(s.Mu) {
		// pycma computes dh = f + Σ AL(g) − f_prev − Σ AL(g_prev) here; only
		// algorithms 1 and 2 use it, but the two calls count g and g_prev
		// in the penalized domain, which the λ update below reads.
		a.penalties(g)
		a.penalties(s.PrevG)
		if s.SameChanges == nil {
			s.SameChanges = make([]int, p.M)
		}
		for i := range p.M {
			if s.Mu[i] == 0 {
				continue
			}
			if g[i]*s.Mu[i] > -s.Lam[i] || !s.PenCounted || s.PenCount[i] > 0 {
				s.Lam[i] += s.Mu[i] * g[i] / dGamma
			}
			if s.Lam[i] < 0 {
				s.Lam[i] = 0
				continue
			}
			if g[i]*s.Mu[i] < -s.Lam[i] {
				continue
			}
			if a.muPlus(g, i) {
				s.Mu[i] *= math.Pow(p.ChiDomega, 0.25*(1+a.sameChange(i, 1)))
			} else if a.muMinus(g, i) {
				s.Mu[i] *= math.Pow(p.ChiDomega, -0.25*(1-a.sameChange(i, -1)))
			}
		}
		s.Count++
	}
	s.HavePrev, s.PrevF, s.PrevG = true, f, append([]float64(nil), g...)
	for i := range s.PenCount {
		s.PenCount[i] = 0
	}
}

func anyPositive(v []float64) bool {
	for _, x := range v {
		if x > 0 {
			return true
		}
	}
	return false
}

// muPlus is pycma's muplus3.
func (a *AL) muPlus(g []float64, i int) bool {
	if g[i] > 0 {
		return true
	}
	if g[i]*a.State.Mu[i] > -a.State.Lam[i] {
		return a.feasibleRatio(i) > muPlusThres
	}
	return false
}

// muMinus is pycma's muminus3.
func (a *AL) muMinus(g []float64, i int) bool {
	return a.feasibleRatio(i) < muMinusThres && 0 > g[i]
}

// feasibleRatio is DequeCDF.cdf(i, 0, horizon): the share of the last
// (up to) 5 + n g_i values below 0, an exact 0 counting one half.
func (a *AL) feasibleRatio(i int) float64 {
	h := a.State.GHistory
	k := min(a.Params.Horizon, len(h))
	sum := 0.0
	for _, row := range h[len(h)-k:] {
		switch {
		case row[i] < 0:
			sum++
		case row[i] == 0:
			sum += 0.5
		}
	}
	return sum / float64(k)
}

// sameChange is CountLastSameChanges.update(i, change).shape_exponent(i):
// the count of consecutive changes of one sign, reset when the sign flips,
// mapped to 0 for the first 2 + m changes, then rising linearly to
// 4/(2 + m) × (2 + m) = 4 and staying there.
func (a *AL) sameChange(i, change int) float64 {
	s, p := &a.State, a.Params
	if change*s.SameChanges[i] < 0 {
		s.SameChanges[i] = 0
	}
	s.SameChanges[i] += change
	d := s.SameChanges[i]
	sg := 0
	switch {
	case d > 0:
		sg = 1
	case d < 0:
		sg = -1
	}
	d -= sg * p.SameThreshold
	if !(d*sg > 0) {
		d = 0
	}
	return p.SameFactor * float64(sg) * float64(min(p.SameThreshold, sg*d))
}
