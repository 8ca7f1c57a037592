package catcma

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Restore returns the optimizer of space sp, population size λ and state s
// (internal/enginecodec decodes them): it continues exactly as the one s
// was taken from. s.C may be nil: it is then rebuilt as B diag(D²) Bᵀ, as
// every update leaves it (CRebuilt). Inconsistent data gives an error.
func Restore(sp Space, lambda int, s State) (*CatCMA, error) {
	if err := sp.validate(); err != nil {
		return nil, err
	}
	for i, row := range sp.Z {
		if !slices.IsSorted(row) {
			return nil, fmt.Errorf("catcma: space.z[%d] is not sorted", i)
		}
	}
	p, err := newParams(sp, lambda)
	if err != nil {
		return nil, err
	}
	o := &CatCMA{Space: sp, Params: p, grid: newGrid(sp.Z), State: s}
	if err := o.checkShapes(); err != nil {
		return nil, fmt.Errorf("catcma: restore: %w", err)
	}
	if n := p.NMi; n > 0 && s.C == nil {
		o.State.C = make([]float64, n*n)
		o.rebuildC(o.State.C)
	}
	o.rnd = rand.New(&o.State.RNG)
	return o, nil
}

// CRebuilt reports whether C is, bit for bit, B diag(D²) Bᵀ (an encoding
// may then leave it out).
func (o *CatCMA) CRebuilt() bool {
	c := make([]float64, len(o.State.C))
	o.rebuildC(c)
	for i := range c {
		if math.Float64bits(c[i]) != math.Float64bits(o.State.C[i]) {
			return false
		}
	}
	return true
}

// checkShapes checks the state's lengths against the space.
func (o *CatCMA) checkShapes() error {
	p, s := o.Params, &o.State
	n := p.NMi
	want := func(name string, got, w int) error {
		if got != w {
			return fmt.Errorf("%s has %d values, want %d", name, got, w)
		}
		return nil
	}
	ft := 2 * p.FunHistTerm
	if n == 0 {
		ft = 0
	}
	cLen := n * n
	if s.C == nil {
		cLen = 0
	}
	checks := []error{
		want("mean", len(s.Mean), n), want("B", len(s.B), n*n), want("D", len(s.D), n),
		want("C", len(s.C), cLen), want("p_sigma", len(s.PSigma), n), want("p_c", len(s.PC), n),
		want("A", len(s.A), n), want("p_mut", len(s.PMut), p.NIn), want("int_succ", len(s.IntSucc), p.NIn),
		want("fun_hist", len(s.FunHist), ft), want("q", len(s.Q), p.NCa), want("s", len(s.S), p.ParamSum),
		want("batch", len(s.V), p.Lambda), want("batch categories", len(s.Cat), p.Lambda),
	}
	if n == 0 && s.C != nil {
		checks = append(checks, errors.New("a C without a Gaussian"))
	}
	if len(s.IQHist) > p.IQHistTerm {
		checks = append(checks, fmt.Errorf("iq_hist has %d values, at most %d", len(s.IQHist), p.IQHistTerm))
	}
	if s.Generation < 0 || s.Evaluations < 0 {
		checks = append(checks, fmt.Errorf("generation %d, evaluations %d", s.Generation, s.Evaluations))
	}
	for i, q := range s.Q {
		checks = append(checks, want(fmt.Sprintf("q[%d]", i), len(q), p.K[i]))
	}
	for k := range min(len(s.V), len(s.Cat)) {
		if n > 0 {
			checks = append(checks, want(fmt.Sprintf("batch row %d", k), len(s.V[k]), n))
		}
		if p.NCa > 0 && !validCats(s.Cat[k], p.K) {
			checks = append(checks, fmt.Errorf("batch row %d: categories %v out of %v", k, s.Cat[k], p.K))
		}
	}
	if s.HasBest {
		b := s.Best
		if len(b.X) != p.NCo || len(b.Z) != p.NIn || (p.NCa > 0 && !validCats(b.C, p.K)) || (p.NCa == 0 && len(b.C) != 0) {
			checks = append(checks, errors.New("best candidate out of the space"))
		}
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

func validCats(c []int, k []int) bool {
	if len(c) != len(k) {
		return false
	}
	for i, v := range c {
		if v < 0 || v >= k[i] {
			return false
		}
	}
	return true
}
