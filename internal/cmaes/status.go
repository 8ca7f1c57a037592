package cmaes

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Accessors. Slices returned are copies.

// Dim returns n.
func (e *ES) Dim() int { return e.p.N }

// Params returns the strategy parameters of the current run.
func (e *ES) Params() Params {
	p := e.p
	p.Weights = append([]float64(nil), p.Weights...)
	if p.WeightsNeg != nil {
		p.WeightsNeg = append([]float64(nil), p.WeightsNeg...)
	}
	return p
}

// Hyper returns the learning rates the next update will use.
func (e *ES) Hyper() Hyper { return e.s.Hyper }

// Config returns the configuration the ES was created with.
func (e *ES) Config() Config { return e.s.Config }

// Generation returns the number of generations told, over all runs; it is
// also the number of the pending generation.
func (e *ES) Generation() int { return e.s.Generation }

// Evaluations returns the number of points told.
func (e *ES) Evaluations() int { return e.s.Evaluations }

// Run returns 0 for the first run and one more for each restart (IPOP or
// BIPOP, small or large).
func (e *ES) Run() int { return e.s.Run }

// Regime returns the current run's regime: RegimeDefault for the first
// run, RegimeLarge or RegimeSmall for a restart (restart.go).
func (e *ES) Regime() string { return e.s.Regime }

// RunEnds returns why each run before the current one ended.
func (e *ES) RunEnds() []RunEnd { return append([]RunEnd(nil), e.s.RunEnds...) }

// Mean returns m.
func (e *ES) Mean() []float64 { return append([]float64(nil), e.s.Mean...) }

// Sigma returns σ.
func (e *ES) Sigma() float64 { return e.s.Sigma }

// Stds returns the standard deviations of the coordinates, σ·√C_ii: what
// pycma reports as stds.
func (e *ES) Stds() []float64 {
	s := make([]float64, e.p.N)
	for i := range s {
		s[i] = e.s.Sigma * math.Sqrt(e.s.C.At(i, i))
	}
	return s
}

// C returns a copy of the covariance matrix.
func (e *ES) C() *mat.SymDense {
	c := mat.NewSymDense(e.p.N, nil)
	c.CopySym(e.s.C)
	return c
}

// Best returns the best point told so far and whether there is one.
func (e *ES) Best() (Best, bool) {
	b := e.s.Best
	b.X = append([]float64(nil), b.X...)
	return b, e.s.HasBest
}

// Stopped returns the criteria that stopped the ES, or nil while it runs.
func (e *ES) Stopped() []StopReason { return append([]StopReason(nil), e.s.Stop...) }

// AxisRatio returns √(max/min eigenvalue of C) = max(D)/min(D).
func (e *ES) AxisRatio() float64 { return e.s.D[len(e.s.D)-1] / e.s.D[0] }

// Eigen returns copies of B (eigenvectors as columns) and D (square roots
// of the eigenvalues, ascending).
func (e *ES) Eigen() (*mat.Dense, []float64) {
	return mat.DenseCopyOf(e.s.B), append([]float64(nil), e.s.D...)
}

// Status is what a caller reads of an ES between generations, as data (as
// gonum's optimize.Location): one call, no copies. Its slices and C are the
// ES's own: valid until the next Tell, Inject or StopNow; copy what is
// kept.
type Status struct {
	Config      Config
	Params      Params // of the current run
	Hyper       Hyper  // the rates of the next update
	Generation  int    // generations told over all runs; id of the pending batch
	Evaluations int
	Run         int    // restarts so far
	Regime      string // of the current run
	RunEnds     []RunEnd
	Mean        []float64
	Sigma       float64
	C           *mat.SymDense // nil for a diagonal model (Diag)
	Diag        []float64     // sep-CMA-ES (internal/sepcma): the diagonal of C, C being nil
	AxisRatio   float64       // √(max/min eigenvalue of C)
	Best        Best
	HasBest     bool
	Stop        []StopReason // nil while the ES runs
	Queued      int          // injected points waiting for the next batch
	Injected    int          // candidates 0 to Injected − 1 of the pending batch are injected points
}

// Status returns the ES's status (see Status).
func (e *ES) Status() Status {
	return Status{
		Config: e.s.Config, Params: e.p, Hyper: e.s.Hyper,
		Generation: e.s.Generation, Evaluations: e.s.Evaluations, Run: e.s.Run, Regime: e.s.Regime, RunEnds: e.s.RunEnds,
		Mean: e.s.Mean, Sigma: e.s.Sigma, C: e.s.C, AxisRatio: e.AxisRatio(),
		Best: e.s.Best, HasBest: e.s.HasBest, Stop: e.s.Stop,
		Queued: len(e.s.Queued), Injected: len(e.s.BatchInjected),
	}
}

// Stds returns the standard deviations of the coordinates, σ·√C_ii (a new
// slice).
func (s *Status) Stds() []float64 {
	if s.C == nil {
		d := make([]float64, len(s.Diag))
		for i, c := range s.Diag {
			d[i] = s.Sigma * math.Sqrt(c)
		}
		return d
	}
	n := s.C.SymmetricDim()
	d := make([]float64, n)
	for i := range d {
		d[i] = s.Sigma * math.Sqrt(s.C.At(i, i))
	}
	return d
}
