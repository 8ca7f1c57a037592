package sepcma

import (
	"fmt"
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Config says how an ES starts and when it stops. The zero value of every
// optional field selects its documented default. Termination and Restarts
// are cmaes's, with the same meaning (restart.go, stop.go); a uniform
// restart point draws in Restarts.Point.Region, else in Bounds.
type Config struct {
	X0     []float64 // initial mean m^0 (required); inside Bounds when set
	Sigma0 float64   // initial step size σ^0 > 0 (required)
	Lambda int       // population size λ ≥ 2; 0 = DefaultLambda(n)
	Seed   uint64    // seed of the random stream
	Rates  Rates     // learning rates of C; 0 = RatesSepCMA

	// Bounds, when not nil, keeps every candidate handed out inside
	// [Lower, Upper] by cmaes's transformation (pycma's
	// BoxConstraintsLinQuadTransformation, bounds.go); the update uses the
	// untransformed points.
	Bounds *cmaes.Bounds

	// Inject, when not empty, holds at most λ points (inside Bounds) that
	// replace candidates 0, 1, ... of the first batch, as if passed to
	// ES.Inject(Inject, true) before it was sampled. New consumes it.
	Inject [][]float64

	Termination cmaes.Termination
	Restarts    cmaes.Restarts
}

func (c *Config) validate() error {
	n := len(c.X0)
	if n < 1 {
		return fmt.Errorf("sepcma: x0 is empty")
	}
	for i, v := range c.X0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sepcma: x0[%d] is not finite", i)
		}
	}
	if !(c.Sigma0 > 0) || math.IsInf(c.Sigma0, 0) {
		return fmt.Errorf("sepcma: sigma0 %v, want a finite value > 0", c.Sigma0)
	}
	if c.Lambda != 0 && c.Lambda < 2 {
		return fmt.Errorf("sepcma: population size %d, want at least 2", c.Lambda)
	}
	if c.Rates >= ratesCount {
		return fmt.Errorf("sepcma: unknown rates %d", c.Rates)
	}
	if err := validateBounds(c.Bounds, c.X0); err != nil {
		return err
	}
	if err := validateTermination(c.Termination); err != nil {
		return err
	}
	if err := cmaes.CheckInjection(c.Inject, 0, c.firstLambda(), n, c.Bounds); err != nil {
		return fmt.Errorf("sepcma: inject: %w", err)
	}
	return validateRestarts(c.Restarts, n, c.Bounds)
}

// firstLambda is λ of the first run.
func (c *Config) firstLambda() int {
	if c.Lambda != 0 {
		return c.Lambda
	}
	return DefaultLambda(len(c.X0))
}

// validateBounds checks the bounds (nil: none) against x0.
func validateBounds(b *cmaes.Bounds, x0 []float64) error {
	if b == nil {
		return nil
	}
	n := len(x0)
	if len(b.Lower) != n || len(b.Upper) != n {
		return fmt.Errorf("sepcma: bounds have %d and %d values, want %d", len(b.Lower), len(b.Upper), n)
	}
	for i := range n {
		lo, up := b.Lower[i], b.Upper[i]
		if math.IsNaN(lo) || math.IsNaN(up) || math.IsInf(lo, 0) || math.IsInf(up, 0) || !(lo < up) {
			return fmt.Errorf("sepcma: bounds[%d] = [%v, %v], want finite lower < upper", i, lo, up)
		}
		if !(x0[i] >= lo && x0[i] <= up) {
			return fmt.Errorf("sepcma: x0[%d] = %v is outside the bounds", i, x0[i])
		}
	}
	return nil
}

// validateTermination checks the termination criteria's values.
func validateTermination(t cmaes.Termination) error {
	if t.MaxEvaluations < 0 {
		return fmt.Errorf("sepcma: max evaluations %d, want at least 0", t.MaxEvaluations)
	}
	for _, v := range []float64{t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma, t.TargetFitness} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sepcma: termination values must be finite")
		}
	}
	return nil
}

// validateRestarts checks the restart strategy of an n-dimensional run
// with bounds b (checked; nil: none).
func validateRestarts(rs cmaes.Restarts, n int, b *cmaes.Bounds) error {
	if rs.Max < 0 {
		return fmt.Errorf("sepcma: restarts max %d, want at least 0", rs.Max)
	}
	if rs.IPOP && rs.BIPOP {
		return fmt.Errorf("sepcma: restarts: IPOP and BIPOP both set, want one")
	}
	if v := rs.IncPopSize; math.IsNaN(v) || math.IsInf(v, 0) || v != 0 && v < 1 {
		return fmt.Errorf("sepcma: restarts: incpopsize %v, want 0 or a finite value ≥ 1", v)
	}
	if r := rs.Point.Region; r != nil {
		if len(r.Lower) != n || len(r.Upper) != n {
			return fmt.Errorf("sepcma: restart region has %d and %d values, want %d", len(r.Lower), len(r.Upper), n)
		}
		for i := range n {
			lo, up := r.Lower[i], r.Upper[i]
			if math.IsNaN(lo) || math.IsNaN(up) || math.IsInf(lo, 0) || math.IsInf(up, 0) || !(lo < up) {
				return fmt.Errorf("sepcma: restart region[%d] = [%v, %v], want finite lower < upper", i, lo, up)
			}
		}
	}
	if rs.Point.Uniform && rs.Point.Region == nil && b == nil {
		return fmt.Errorf("sepcma: restarts: uniform restart points need a region or bounds")
	}
	return nil
}

// resolved returns c with its defaults filled in, sharing no slice with c.
func (c Config) resolved() Config {
	c.X0 = append([]float64(nil), c.X0...)
	c.Restarts.Point.Region = cloneBounds(c.Restarts.Point.Region)
	c.Bounds = cloneBounds(c.Bounds)
	c.Inject = nil
	if rs := &c.Restarts; rs.IPOP || rs.BIPOP {
		if rs.Max == 0 {
			rs.Max = cmaes.DefaultMaxRestarts
		}
		if rs.IncPopSize == 0 {
			rs.IncPopSize = cmaes.DefaultIncPopSize
		}
	}
	return c
}

// tolerances returns the termination tolerances with defaults filled in; a
// disabled one is 0 (never fires). As cmaes's.
func tolerances(t cmaes.Termination, sigma0 float64) cmaes.Termination {
	pick := func(v, def float64) float64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	t.TolFun = pick(t.TolFun, cmaes.DefaultTolFun)
	t.TolX = pick(t.TolX, cmaes.DefaultTolXFactor*sigma0)
	t.ConditionCov = pick(t.ConditionCov, cmaes.DefaultConditionCov)
	t.TolUpSigma = pick(t.TolUpSigma, cmaes.DefaultTolUpSigma)
	switch {
	case t.MaxFailedGenerations == 0:
		t.MaxFailedGenerations = cmaes.DefaultMaxFailedGenerations
	case t.MaxFailedGenerations < 0:
		t.MaxFailedGenerations = 0
	}
	return t
}

func cloneBounds(b *cmaes.Bounds) *cmaes.Bounds {
	if b == nil {
		return nil
	}
	return &cmaes.Bounds{Lower: append([]float64(nil), b.Lower...), Upper: append([]float64(nil), b.Upper...)}
}
