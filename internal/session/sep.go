package session

import (
	"errors"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/enginecodec"
	"github.com/selfcma/selfcma/internal/sepcma"
)

// AlgorithmSepCMAES is sep-CMA-ES (internal/sepcma): C kept diagonal, O(n)
// memory and time per sample, for dimensions up to Limits.MaxSepDimension.
const AlgorithmSepCMAES = defaults.SepCMAES

// sepES is a sep-CMA-ES as a session's optimizer. Its status is cmaes's
// with C nil and its diagonal in Diag.
type sepES struct{ *sepcma.ES }

func newSep(cfg cmaes.Config) (optimizer, error) {
	e, err := sepcma.New(sepcma.Config{
		X0: cfg.X0, Sigma0: cfg.Sigma0, Lambda: cfg.Lambda, Seed: cfg.Seed, Bounds: cfg.Bounds,
		Inject: cfg.Inject, Termination: cfg.Termination, Restarts: cfg.Restarts,
	})
	if err != nil {
		return nil, err
	}
	return sepES{e}, nil
}

func decodeSep(state []byte) (optimizer, error) {
	e, err := enginecodec.DecodeSepCMA(state)
	if err != nil {
		return nil, err
	}
	return sepES{e}, nil
}

func (e sepES) Tell(f []float64) (HistoryRecord, error) {
	r, err := e.ES.Tell(f)
	if err != nil {
		return HistoryRecord{}, err
	}
	h := historyOf(r)
	if n := e.Dim(); n <= HistoryMaxCoordinates {
		// What the history keeps per coordinate (sepcma leaves it out of
		// its record): C's eigenvalues are its diagonal.
		c := e.C()
		h.Mean, h.Stds = e.Mean(), e.Stds()
		h.AxisLengths = make([]float64, n)
		for i, v := range c {
			h.AxisLengths[i] = math.Sqrt(v)
		}
		slices.Sort(h.AxisLengths)
	}
	return h, nil
}

func (e sepES) Inject(points [][]float64, clip bool) error {
	err := e.ES.Inject(points, clip)
	if errors.Is(err, sepcma.ErrStopped) {
		return cmaes.ErrStopped
	}
	return err
}

func (e sepES) Status() cmaes.Status {
	st := e.ES.Status()
	c, p := st.Config, st.Params
	return cmaes.Status{
		Config: cmaes.Config{X0: c.X0, Sigma0: c.Sigma0, Lambda: c.Lambda, Seed: c.Seed, Bounds: c.Bounds,
			Termination: c.Termination, Restarts: c.Restarts},
		Params: cmaes.Params{N: p.N, Lambda: p.Lambda, Mu: p.Mu, Weights: p.Weights, MuW: p.MuW,
			CSigma: p.CSigma, DSigma: p.DSigma, Cc: p.Cc, C1: p.C1, CMu: p.CMu, ChiN: p.ChiN},
		Hyper:      cmaes.Hyper{C1: p.C1, CMu: p.CMu, Cc: p.Cc},
		Generation: st.Generation, Evaluations: st.Evaluations, Run: st.Run, Regime: st.Regime, RunEnds: st.RunEnds,
		Mean: st.Mean, Sigma: st.Sigma, Diag: st.C, AxisRatio: st.AxisRatio,
		Best: st.Best, HasBest: st.HasBest, Stop: st.Stop, Queued: st.Queued, Injected: st.Injected,
	}
}

func (e sepES) AppendBinary(dst []byte) ([]byte, error) {
	s := e.State()
	return enginecodec.AppendSepCMA(dst, &s)
}

// sepCreateBytes is what the create of a sep-CMA-ES session of dimension
// n and population size λ (0: the default) takes while it runs: what the
// engine will hold with bounds, and the encoding of its state (about 6n
// values and the termination histories).
func sepCreateBytes(n, lambda int) int64 {
	if lambda == 0 {
		lambda = sepcma.DefaultLambda(n)
	}
	return sepcma.HeldBytes(n, lambda, true) + 8*(7*int64(n)+int64(30*n/lambda)) + 64<<10
}

// CreateBytesFor is what the create of a session of algorithm alg ("" the
// default), dimension n and population size λ (0: the default) takes in
// memory while it runs, as its engine reports it.
func CreateBytesFor(alg string, n, lambda int) int64 {
	if alg == AlgorithmSepCMAES {
		return sepCreateBytes(n, lambda)
	}
	return CreateBytes(n)
}

// The limits of sep-CMA-ES sessions: dimension and λ·n, above the other
// algorithms' (its memory is O(λn), not O(n²)).
const (
	DefaultMaxSepDimension = 100000
	DefaultMaxSepBatch     = 10000000
)

// forAlgorithm returns the limits that apply to sessions of algorithm alg:
// l, with sep-CMA-ES's dimension and batch limits for it.
func (l Limits) forAlgorithm(alg string) Limits {
	if alg == AlgorithmSepCMAES {
		l.MaxDimension, l.MaxBatch = l.sepDimension(), l.sepBatch()
	}
	return l
}

func (l Limits) sepDimension() int {
	if l.MaxSepDimension == 0 {
		return DefaultMaxSepDimension
	}
	return l.MaxSepDimension
}

func (l Limits) sepBatch() int {
	if l.MaxSepBatch == 0 {
		return DefaultMaxSepBatch
	}
	return l.MaxSepBatch
}

// DimensionLimit is the largest dimension of a session of algorithm alg
// ("" the default).
func (l Limits) DimensionLimit(alg string) int { return l.forAlgorithm(alg).MaxDimension }

// diagonalCovariance is Covariance of a sep-CMA-ES: its diagonal at any
// dimension, and the n×n matrix too up to MaxCovarianceDimension.
func diagonalCovariance(st cmaes.Status) Covariance {
	out := Covariance{Generation: st.Generation, Sigma: st.Sigma, Diagonal: slices.Clone(st.Diag)}
	if n := len(st.Diag); n <= MaxCovarianceDimension {
		out.C = make([][]float64, n)
		for i, v := range st.Diag {
			out.C[i] = make([]float64, n)
			out.C[i][i] = v
		}
	}
	return out
}

// CreateBytesOf is CreateBytesFor of create p of dimension n; a mixed
// create (mixed.go) is charged what its engine reports for its space.
func CreateBytesOf(p CreateParams, n int) int64 {
	if isMixed(p) {
		return mixedCreateBytes(p)
	}
	return CreateBytesFor(p.Algorithm, n, p.PopulationSize)
}
