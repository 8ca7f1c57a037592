package constraints

import (
	"fmt"
	"math"
)

// Parameters of pycma's AugmentedLagrangian with algorithm 0.
const (
	k1Atamna     = 3 // k1 (Atamna et al. 2017); used by algorithms 1, 2 only
	dGamma       = 5 // damping of the λ update
	muPlusThres  = 0.95
	muMinusThres = 0.9
)

// Limits of New, so that a decoded state cannot ask for more memory than
// a service would hold.
const (
	MaxDimension   = 1 << 20
	MaxConstraints = 1 << 16
)

// Params are fixed by the dimension n and the number of constraints m.
type Params struct {
	N, M int
	// ChiDomega is the factor of a change of μ, 2^{1/(5n)}.
	ChiDomega float64
	// Horizon is the number of past g values in the feasibility ratio of
	// the μ update (mucdf3_horizon = 5 + n); HistoryLen the length of the
	// g history (n + 20).
	Horizon, HistoryLen int
	// SameThreshold and SameFactor shape the ramp of consecutive same-sign
	// μ changes (CountLastSameChanges: 2 + m and 4/(2 + m)).
	SameThreshold int
	SameFactor    float64
}

// NewParams returns the parameters for dimension n and m constraints.
func NewParams(n, m int) (Params, error) {
	if n < 1 || n > MaxDimension {
		return Params{}, fmt.Errorf("constraints: dimension %d, want 1 to %d", n, MaxDimension)
	}
	if m < 1 || m > MaxConstraints {
		return Params{}, fmt.Errorf("constraints: count %d, want 1 to %d", m, MaxConstraints)
	}
	thr := 2 + m
	return Params{N: n, M: m, ChiDomega: math.Pow(2, 1./5/float64(n)),
		Horizon: 5 + n, HistoryLen: n + 20, SameThreshold: thr, SameFactor: 4 / float64(thr)}, nil
}

// State is everything the next iteration depends on, as plain data.
type State struct {
	// Set is false until the first update with finite f values set the
	// coefficients (pycma's lam is None until then).
	Set bool
	// Lam and Mu are the multipliers λ_i and the penalty factors μ_i;
	// Initialized says which constraints set_coefficients has finished.
	Lam, Mu     []float64
	Initialized []bool
	// Count is the number of coefficient updates (AugmentedLagrangian.count).
	Count int
	// PenCounted is false while the count of g values in the penalized
	// domain is pycma's scalar 0 (no penalty computed since the
	// coefficients were set); PenCount the counts since the last update.
	PenCounted bool
	PenCount   []int
	// HavePrev says whether PrevF, PrevG (the f and g of the last update)
	// are set.
	HavePrev bool
	PrevF    float64
	PrevG    []float64
	// GHistory holds the g values of the last updates, oldest first.
	GHistory [][]float64
	// SameChanges counts consecutive same-sign μ changes per constraint;
	// nil until the first μ update.
	SameChanges []int
}

// AL is the augmented Lagrangian of one run.
type AL struct {
	Params Params
	State  State
}

// New returns the augmented Lagrangian for dimension n and m constraints.
func New(n, m int) (*AL, error) {
	p, err := NewParams(n, m)
	if err != nil {
		return nil, err
	}
	return &AL{Params: p}, nil
}

// Feasible reports whether every g_i ≤ 0.
func Feasible(g []float64) bool {
	for _, v := range g {
		if !(v <= 0) {
			return false
		}
	}
	return true
}

// penalties is AugmentedLagrangian.__call__: λ_i g_i + μ_i g_i²/2 with g_i
// raised to −λ_i/μ_i where μ_i g_i < −λ_i; it also counts the g_i in the
// penalized domain (μ_i g_i > −λ_i). Zero before the coefficients are set.
func (a *AL) penalties(g []float64) []float64 {
	s := &a.State
	out := make([]float64, len(g))
	if !s.Set {
		return out
	}
	if !s.PenCounted {
		s.PenCounted = true
		s.PenCount = make([]int, a.Params.M)
	}
	for i, gi := range g {
		if s.Mu[i]*gi > -1*s.Lam[i] {
			s.PenCount[i]++
		}
		if s.Mu[i]*gi < -1*s.Lam[i] {
			gi = -s.Lam[i] / s.Mu[i]
		}
		out[i] = s.Lam[i]*gi + 0.5*s.Mu[i]*(gi*gi)
	}
	return out
}
