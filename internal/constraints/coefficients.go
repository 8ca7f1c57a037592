package constraints

import (
	"math"
	"slices"
)

// setCoefficients is AugmentedLagrangian.set_coefficients (pycma's
// initialisation, "out of thin air" by its own account): from one
// population's f and g values, for each constraint not yet initialized
// whose values are not ≥ 90 % feasible,
//
//	λ_i = iqr(f) / (n iqr(g_i) + 1e-11 (iqr(f) + 1)),
//	μ_i = (2/5) iqr(f) / n / (iqr(g_i) + 1e-6 iqr(g_i²) + 1e-11 (iqr(f) + 1)),
//
// and a constraint counts as initialized once fewer than 90 % of either
// sign are seen or after 2 + n updates. (pycma's branch that would rescale
// λ when μ decreases writes to a copy and changes nothing; so here.)
func (a *AL) setCoefficients(f []float64, g [][]float64) {
	p, s := a.Params, &a.State
	if s.Set && a.allInitialized() {
		return
	}
	if !s.Set {
		s.Set = true
		s.Lam, s.Mu = make([]float64, p.M), make([]float64, p.M)
		s.Initialized = make([]bool, p.M)
	}
	df := iqr(f)
	n := float64(p.N)
	for i := range p.M {
		gi := make([]float64, len(g))
		gi2 := make([]float64, len(g))
		pos := 0
		for k, row := range g {
			gi[k], gi2[k] = row[i], row[i]*row[i]
			if row[i] > 0 {
				pos++
			}
		}
		signAverage := -1 + 2*(float64(pos)/float64(len(g)))
		if !((!s.Initialized[i] || s.Mu[i] == 0) && signAverage > -0.8) {
			continue
		}
		dG, dG2 := iqr(gi), iqr(gi2)
		s.Mu[i] = 2. / 5 * df / n / (dG + 1e-6*dG2 + 1e-11*(df+1))
		s.Lam[i] = df / (n*dG + 1e-11*(df+1))
		if s.Count > 2+p.N || math.Abs(signAverage) < 0.8 {
			s.Initialized[i] = true
		}
	}
}

// allInitialized is pycma's is_initialized once the coefficients exist
// (set_coefficients' early return also asks μ > 0).
func (a *AL) allInitialized() bool {
	for i, ok := range a.State.Initialized {
		if !ok || !(a.State.Mu[i] > 0) {
			return false
		}
	}
	return true
}

// initializedAll is pycma's is_initialized: every constraint initialized.
func (a *AL) initializedAll() bool {
	if !a.State.Set {
		return false
	}
	for _, ok := range a.State.Initialized {
		if !ok {
			return false
		}
	}
	return true
}

// iqr is pycma's Mh.iqr: numpy.percentile(v, 75) − numpy.percentile(v, 25)
// with numpy's linear interpolation.
func iqr(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return percentile(s, 75) - percentile(s, 25)
}

// percentile is numpy.percentile's "linear" method on sorted s, with
// numpy's two-sided interpolation (_lerp).
func percentile(s []float64, q float64) float64 {
	pos := q / 100 * float64(len(s)-1)
	lo := math.Floor(pos)
	t := pos - lo
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	a, b := s[i], s[i+1]
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}
