package sepcma

import (
	"fmt"

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
	if c.Rates >= ratesCount {
		return fmt.Errorf("sepcma: unknown rates %d", c.Rates)
	}
	// Its restarts know IPOP and BIPOP only (restart.go), not NIPOP's and
	// NBIPOP's rules nor SpareBestSmall: refused rather than ignored.
	if rs := c.Restarts; rs.SigmaDec > 1 || rs.Budget > 1 {
		return fmt.Errorf("sepcma: restarts: NIPOP and NBIPOP (sigma decrease %v, budget ratio %v) are not sep-CMA-ES's", rs.SigmaDec, rs.Budget)
	}
	if c.Restarts.SpareBestSmall {
		return fmt.Errorf("sepcma: restarts: sparing the best small run is not sep-CMA-ES's")
	}
	// x0, σ0, λ, the bounds, the termination criteria, the restarts and the
	// injected points mean what they mean to cmaes: its checks.
	cc := cmaes.Config{X0: c.X0, Sigma0: c.Sigma0, Lambda: c.Lambda, Bounds: c.Bounds,
		Termination: c.Termination, Restarts: c.Restarts, Inject: c.Inject}
	if err := cc.Validate(); err != nil {
		return fmt.Errorf("sepcma: %w", err)
	}
	return nil
}

// firstLambda is λ of the first run.
func (c *Config) firstLambda() int {
	if c.Lambda != 0 {
		return c.Lambda
	}
	return DefaultLambda(len(c.X0))
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

func cloneBounds(b *cmaes.Bounds) *cmaes.Bounds {
	if b == nil {
		return nil
	}
	return &cmaes.Bounds{Lower: append([]float64(nil), b.Lower...), Upper: append([]float64(nil), b.Upper...)}
}
