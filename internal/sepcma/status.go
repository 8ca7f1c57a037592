package sepcma

import (
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Dim returns n.
func (e *ES) Dim() int { return e.p.N }

// Params returns the strategy parameters of the current run.
func (e *ES) Params() Params {
	p := e.p
	p.Weights = slices.Clone(p.Weights)
	return p
}

// Config returns the configuration as New resolved it.
func (e *ES) Config() Config { return e.s.Config.resolved() }

// Generation returns the id of the pending generation (generations told).
func (e *ES) Generation() int { return e.s.Generation }

// Evaluations returns the number of points told.
func (e *ES) Evaluations() int { return e.s.Evaluations }

// Run returns the current run, 0 before any restart.
func (e *ES) Run() int { return e.s.Run }

// Regime returns the current run's regime (cmaes.RegimeDefault, …).
func (e *ES) Regime() string { return e.s.Regime }

// RunEnds returns the runs that ended in a restart.
func (e *ES) RunEnds() []cmaes.RunEnd { return e.State().RunEnds }

// Mean returns a copy of m.
func (e *ES) Mean() []float64 { return slices.Clone(e.s.Mean) }

// Sigma returns σ.
func (e *ES) Sigma() float64 { return e.s.Sigma }

// C returns a copy of the diagonal of C.
func (e *ES) C() []float64 { return slices.Clone(e.s.C) }

// Stds returns σ√C_ii, the standard deviation of each coordinate.
func (e *ES) Stds() []float64 {
	out := make([]float64, len(e.d))
	for i, d := range e.d {
		out[i] = e.s.Sigma * d
	}
	return out
}

// Best returns the best point told so far; false before any finite value.
func (e *ES) Best() (cmaes.Best, bool) {
	b := e.s.Best
	b.X = slices.Clone(b.X)
	return b, e.s.HasBest
}

// Stopped returns the reasons the ES stopped; empty while it runs.
func (e *ES) Stopped() []cmaes.StopReason { return slices.Clone(e.s.Stop) }

// AxisRatio returns √(max C_ii / min C_ii).
func (e *ES) AxisRatio() float64 { return math.Sqrt(e.condition()) }

// State returns a deep copy of the state, BatchSum set to the hash of the
// pending batch (0 once stopped).
func (e *ES) State() State {
	s := e.s.clone()
	s.BatchSum = 0
	if len(s.Stop) == 0 {
		s.BatchSum = batchSum(e.x)
	}
	return s
}
