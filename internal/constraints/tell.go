package constraints

import (
	"fmt"
	"math"
)

// Tell takes one iteration's objective values f and constraint values g
// (g[k] holds the m values of candidate k), returns the values to rank the
// candidates by, f_k + Σ_i AL penalty of g_k (with the coefficients before
// this iteration), and then updates the coefficients: ConstrainedFitnessAL's
// __call__ for each candidate in order, then its update. A NaN f ranks
// worst for the optimizer that sorts NaN last; it keeps the coefficients
// from being set that iteration, as in pycma.
func (a *AL) Tell(f []float64, g [][]float64) ([]float64, error) {
	p := a.Params
	if len(f) == 0 || len(g) != len(f) {
		return nil, fmt.Errorf("constraints: %d f values and %d rows of g, want the same number ≥ 1", len(f), len(g))
	}
	for k, row := range g {
		if len(row) != p.M {
			return nil, fmt.Errorf("constraints: g[%d]: %d values, want %d", k, len(row), p.M)
		}
	}
	out := make([]float64, len(f))
	for k := range f {
		sum := 0.0
		for _, v := range a.penalties(g[k]) {
			sum += v
		}
		out[k] = f[k] + sum
	}
	finite := true
	for _, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			finite = false
		}
	}
	if !a.initializedAll() && finite {
		a.setCoefficients(f, g)
	}
	best := -1 // nanargmin of the AL values
	for k, v := range out {
		if !math.IsNaN(v) && (best < 0 || v < out[best]) {
			best = k
		}
	}
	if best >= 0 && !math.IsNaN(f[best]) && !math.IsInf(f[best], 0) {
		a.update(f[best], g[best])
	}
	return out, nil
}
