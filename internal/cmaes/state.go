package cmaes

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// State is everything the next generation of an ES depends on, as plain
// data (internal/enginecodec writes and reads it): Restore makes an ES of
// it that continues bit for bit. The parts marked derived may be left nil
// (zero) and are recomputed by Restore.
//
// State shares its slices and matrices with the ES it came from: they are
// valid until the ES's next Tell, Inject or StopNow; copy what is kept.
type State struct {
	Config Config // as New resolved it (Inject moved to Queued)
	Lambda int    // λ of the current run
	Hyper  Hyper  // the rates of the next update

	// The random stream, after the pending batch was drawn.
	Rand rand.PCG

	// The distribution, Algorithm 1 line 2.
	Mean   []float64
	Sigma  float64
	C      *mat.SymDense
	B      *mat.Dense // eigenvectors of C, as columns; derived when DecomposedC
	D      []float64  // square roots of the eigenvalues of C; derived when DecomposedC
	PSigma []float64
	PC     []float64
	T      int // generations of the current run (t of Algorithm 1)
	// DecomposedC: B and D are what decomposing C by Config.Numerics
	// gives, bit for bit (no safeguard changed them after the update's
	// decomposition). Restore decomposes C when B is nil.
	DecomposedC bool
	// EigenT: the update of the run (its T) whose C was last decomposed, 0
	// for none (NumericsLazy decides by it: lazy.go; other versions
	// decompose at every update, so it equals T).
	EigenT int

	Generation  int // generations told over all runs; id of the pending batch
	Evaluations int
	Run         int
	RunEnds     []RunEnd
	// The current run (restart.go): its regime (RegimeDefault,
	// RegimeLarge, RegimeSmall), the σ it started with, its generation
	// limit (0: none; BIPOP's maxiter).
	Regime    string
	RunSigma0 float64
	GenLimit  int
	// RunMovedScale: ln s² summed over the σ safeguard's moves of the run
	// (σ /= s, C *= s²: es.go's boundSigma), 0 at its start; TolUpSigma
	// reads it with Termination.UpSigmaMoved.
	RunMovedScale float64
	// RunStartF: the best value of the run's first generation (the first
	// that updated it), TolWorse's reference (stop.go).
	RunStartF float64
	// MeanRate: the rule of the mean's learning rate (meanrate.go) in a
	// run that adapts it (Config.MeanRateSmallRuns, MeanRateLargeRuns),
	// else nil.
	MeanRate *MeanRate

	// Batch is the pending batch: λ×n genotypes, row k is x_k of line 4.
	// BatchDrawn: it is what drawing from BatchRand with the current m, σ,
	// B and D gives, then the injected points of BatchInjected put in (not
	// after a Tell that stopped without sampling). Restore draws the batch
	// from Rand when Batch is nil (Rand is then the stream before it).
	Batch      *mat.Dense
	BatchDrawn bool
	BatchRand  rand.PCG

	Best    Best
	HasBest bool

	// Histories of the termination criteria (stop.go).
	FunHist  []float64 // best of each recent generation (ring, newest at FunPos−1)
	FunPos   int
	FunN     int
	StagBest []float64 // best and median of each generation of the run, ≤ stagMax
	StagMed  []float64
	FlatGens []int // generations whose best and ⌈λ/4⌉-th values were equal (ring)
	FlatPos  int
	FlatN    int
	Stop     []StopReason

	// Injected points (inject.go): those waiting for the next batch, and
	// those that replaced candidates 0, 1, ... of the pending batch.
	Queued, BatchInjected []Injection
	FailedGenerations     int // consecutive generations whose every value was NaN
}

// State returns the ES's state, sharing its data (see State).
func (e *ES) State() *State {
	s := e.s
	s.Lambda = e.p.Lambda
	return &s
}

// ErrInvalidState is returned by Restore for a State no ES could have
// had: a Config New refuses, a length that does not match n and λ, a
// counter out of its range.
var ErrInvalidState = errors.New("cmaes: invalid state")

// Restore returns an ES that continues s bit for bit, taking its data (s
// is not to be used after). It recomputes what s leaves to it: B and D
// when B is nil (decomposing C by Config.Numerics, as the update did), the
// pending batch when Batch is nil (drawn from Rand, the stream before it,
// then the injected points put in), and what follows from the rest.
func Restore(s *State) (*ES, error) {
	c := s.Config
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: config: %w", ErrInvalidState, err)
	}
	if c.Numerics == 0 {
		return nil, fmt.Errorf("%w: config: numerics version 0 (New resolves it)", ErrInvalidState)
	}
	if (c.MeanRateSmallRuns || c.MeanRateLargeRuns) && (c.MeanRateAlpha == 0 || c.MeanRateEtaMin == 0) {
		return nil, fmt.Errorf("%w: config: mean rate α %v, smallest η %v (New resolves 0)", ErrInvalidState, c.MeanRateAlpha, c.MeanRateEtaMin)
	}
	n := len(c.X0)
	p, err := NewParamsActive(n, s.Lambda, c.Active)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	e := &ES{s: *s, p: p, term: c.Termination.resolved(c.Sigma0)}
	e.rnd = rand.New(&e.s.Rand)
	switch {
	case !e.s.Hyper.Valid():
		return nil, fmt.Errorf("%w: hyper-parameters out of range", ErrInvalidState)
	case !e.consistent():
		return nil, fmt.Errorf("%w: inconsistent lengths or counters", ErrInvalidState)
	}
	if r := e.s.MeanRate; (r != nil) != e.meanRateUsed() {
		return nil, fmt.Errorf("%w: mean rate state %t in a run that uses the rule %t", ErrInvalidState, r != nil, e.meanRateUsed())
	} else if r != nil {
		if err := r.check(n, c.MeanRateEtaMin); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
		}
	}
	e.tallyRuns()
	batch, b := e.s.Batch, e.s.B
	e.allocScratch()
	if b == nil {
		// The update's decomposition of the same C bits, by the same code
		// and numerics version: the same B and D.
		e.s.B, e.s.D = mat.NewDense(n, n, nil), make([]float64, n)
		if !finiteSym(e.s.C) || !e.decompose(e.s.C) {
			return nil, fmt.Errorf("%w: C does not decompose", ErrInvalidState)
		}
		e.s.DecomposedC = true
	}
	if batch == nil {
		e.s.BatchRand = e.s.Rand
		e.drawBatch()
		for k, in := range e.s.BatchInjected {
			e.genotypeInto(e.s.Batch.RawRowView(k), in.X)
		}
		e.s.BatchDrawn = true
	} else {
		e.placeBatch(batch)
	}
	if err := e.checkInjected(); err != nil {
		return nil, err
	}
	return e, nil
}

// consistent reports whether every length matches the dimension and λ,
// and every counter and name is in its range.
func (e *ES) consistent() bool {
	s, n, lambda := &e.s, e.p.N, e.p.Lambda
	switch {
	case len(s.Mean) != n || len(s.PSigma) != n || len(s.PC) != n || s.C == nil || s.C.SymmetricDim() != n:
		return false
	case s.B != nil && (len(s.D) != n || !dims(s.B, n, n)):
		return false
	case s.Batch != nil && !dims(s.Batch, lambda, n):
		return false
	case s.HasBest && len(s.Best.X) != n:
		return false
	case len(s.BatchInjected) > lambda || len(s.Queued) > lambda || !pointsIn(s.Queued, n, s.Config.Bounds):
		return false
	case !validRegime(s.Regime) || (s.Regime == RegimeDefault) != (s.Run == 0) || s.GenLimit < 0:
		return false
	}
	for _, r := range s.RunEnds {
		if !validRegime(r.Regime) {
			return false
		}
	}
	return e.historiesConsistent() && e.countersConsistent()
}

func dims(m *mat.Dense, r, c int) bool {
	mr, mc := m.Dims()
	return mr == r && mc == c
}

func validRegime(name string) bool {
	return name == RegimeDefault || name == RegimeLarge || name == RegimeSmall
}

func (e *ES) historiesConsistent() bool {
	s, n, lambda := &e.s, e.p.N, e.p.Lambda
	fun, flat := 10+int(math.Ceil(30*float64(n)/float64(lambda))), 10+n // startRun's
	switch {
	case len(s.FunHist) != fun || len(s.FlatGens) != flat:
		return false
	case len(s.StagBest) != len(s.StagMed) || len(s.StagBest) > stagMax:
		return false
	case s.FunPos < 0 || s.FunPos >= fun || s.FunN < 0 || s.FunN > fun:
		return false
	case s.FlatPos < 0 || s.FlatPos >= flat || s.FlatN < 0 || s.FlatN > flat:
		return false
	}
	return true
}

func (e *ES) countersConsistent() bool {
	s := &e.s
	return s.Sigma > 0 && s.RunMovedScale >= 0 && !math.IsInf(s.RunMovedScale, 0) && s.T >= 0 && s.EigenT >= 0 && s.EigenT <= s.T && s.Generation >= 0 && s.Evaluations >= 0 && s.Run >= 0 && s.FailedGenerations >= 0
}

// placeBatch sets the batch given, and with bounds its images.
func (e *ES) placeBatch(batch *mat.Dense) {
	n, lambda := e.p.N, e.p.Lambda
	e.s.Batch = batch
	if e.pheno != nil {
		x, ph := batch.RawMatrix(), e.pheno.RawMatrix()
		for k := range lambda {
			transformInto(ph.Data[k*ph.Stride:k*ph.Stride+n], x.Data[k*x.Stride:k*x.Stride+n], e.s.Config.Bounds)
		}
	}
}

// checkInjected checks that each injected candidate is the genotype of its
// point, and hands the point out as given.
func (e *ES) checkInjected() error {
	n := e.p.N
	g := make([]float64, n)
	for k, in := range e.s.BatchInjected {
		if err := checkPoint(in.X, n, e.s.Config.Bounds); err != nil {
			return fmt.Errorf("%w: injected point: %w", ErrInvalidState, err)
		}
		e.genotypeInto(g, in.X)
		row := e.s.Batch.RawRowView(k)
		for i := range n {
			if !sameBits(g[i], row[i]) {
				return fmt.Errorf("%w: injected candidate %d differs from its point", ErrInvalidState, k)
			}
		}
		if e.pheno != nil {
			copy(e.pheno.RawRowView(k), in.X)
		}
	}
	return nil
}

// pointsIn reports whether every injected point has n values inside b.
func pointsIn(q []Injection, n int, b *Bounds) bool {
	for _, in := range q {
		if checkPoint(in.X, n, b) != nil {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of s: a State to keep, or to restore beside the
// ES it came from.
func (s *State) Clone() *State {
	c := *s
	c.Config.X0 = slices.Clone(s.Config.X0)
	c.Config.Bounds = s.Config.Bounds.clone()
	c.Config.Restarts.Point.Region = s.Config.Restarts.Point.Region.clone()
	c.Config.Inject = nil
	c.Mean, c.D, c.PSigma, c.PC = slices.Clone(s.Mean), slices.Clone(s.D), slices.Clone(s.PSigma), slices.Clone(s.PC)
	if s.C != nil {
		c.C = mat.NewSymDense(s.C.SymmetricDim(), nil)
		c.C.CopySym(s.C)
	}
	if s.B != nil {
		c.B = mat.DenseCopyOf(s.B)
	}
	if s.Batch != nil {
		c.Batch = mat.DenseCopyOf(s.Batch)
	}
	c.RunEnds = make([]RunEnd, len(s.RunEnds))
	for i, r := range s.RunEnds {
		r.Reasons = slices.Clone(r.Reasons)
		c.RunEnds[i] = r
	}
	c.Best.X = slices.Clone(s.Best.X)
	c.FunHist, c.StagBest, c.StagMed = slices.Clone(s.FunHist), slices.Clone(s.StagBest), slices.Clone(s.StagMed)
	c.FlatGens, c.Stop = slices.Clone(s.FlatGens), slices.Clone(s.Stop)
	c.Queued, c.BatchInjected = cloneInjections(s.Queued), cloneInjections(s.BatchInjected)
	c.MeanRate = s.MeanRate.clone()
	return &c
}

func cloneInjections(q []Injection) []Injection {
	if q == nil {
		return nil
	}
	out := make([]Injection, len(q))
	for i, in := range q {
		out[i] = Injection{X: slices.Clone(in.X), Clip: in.Clip}
	}
	return out
}

// sameBits compares bit patterns, so −0 and +0 (equal as numbers) differ.
func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
