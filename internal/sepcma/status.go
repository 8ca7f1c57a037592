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

// Status is what a caller reads of an ES between generations, as data (as
// cmaes.Status): one call, no copies. Its slices are the ES's own, valid
// until the next Tell, Inject or StopNow; copy what is kept.
type Status struct {
	Config      Config // as New resolved it
	Params      Params // of the current run
	Generation  int    // generations told over all runs; id of the pending batch
	Evaluations int
	Run         int    // restarts so far
	Regime      string // of the current run
	RunEnds     []cmaes.RunEnd
	Mean        []float64
	Sigma       float64
	C           []float64 // the diagonal of C
	AxisRatio   float64   // √(max C_ii / min C_ii)
	Best        cmaes.Best
	HasBest     bool
	Stop        []cmaes.StopReason // nil while the ES runs
	Queued      int                // injected points waiting for the next batch
	Injected    int                // candidates 0 to Injected − 1 of the pending batch are injected points
}

// Status returns the ES's status (see Status).
func (e *ES) Status() Status {
	s := &e.s
	return Status{
		Config: s.Config, Params: e.p, Generation: s.Generation, Evaluations: s.Evaluations,
		Run: s.Run, Regime: s.Regime, RunEnds: s.RunEnds, Mean: s.Mean, Sigma: s.Sigma, C: s.C,
		AxisRatio: e.AxisRatio(), Best: s.Best, HasBest: s.HasBest, Stop: s.Stop,
		Queued: len(s.Queued), Injected: len(s.BatchInjected),
	}
}
