package sepcma

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// sigmaMax bounds σ, as SepCMA's _SIGMA_MAX.
const sigmaMax = 1e32

// ErrStopped is returned by Tell once a termination criterion has stopped
// the ES.
var ErrStopped = errors.New("sepcma: stopped")

// Record describes one told generation. D, Stds and Mean are left nil: at
// n = 10^5 they would triple the record (ES.Stds and ES.Mean give them).
type Record = cmaes.Record

// ES is a sep-CMA-ES with an ask/tell interface. It is not safe for
// concurrent use.
type ES struct {
	s    State
	p    Params
	term cmaes.Termination // resolved tolerances
	d    []float64         // √C_ii, the standard deviations of the sampling before σ

	src *rand.PCG // the stream after the pending batch
	rnd *rand.Rand
	x   []float64 // the pending batch, λ×n, row k is x_k (the genotypes, with bounds)
	ph  []float64 // with bounds, the points handed out: the images of x; else nil

	sc         scratch
	lastHSigma float64 // h_σ of the last update (tests read it)
}

// scratch holds buffers reused every generation (not part of the state).
type scratch struct {
	yw, rankMu, mean, pSigma, pc, c []float64
	order                           []int
	sorted                          []float64
}

// New returns an ES with its first batch sampled.
func New(cfg Config) (*ES, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &ES{}
	e.s.Config = cfg.resolved()
	e.src = rand.NewPCG(cfg.Seed, 0x5e9c3a)
	e.rnd = rand.New(e.src)
	lambda := cfg.Lambda
	if lambda == 0 {
		lambda = DefaultLambda(len(cfg.X0))
	}
	if err := e.startRun(lambda); err != nil {
		return nil, err
	}
	e.s.Regime, e.s.RunSigma0 = cmaes.RegimeDefault, cfg.Sigma0
	if cfg.Restarts.BIPOP {
		e.s.GenLimit = cmaes.MaxIter0(len(cfg.X0), e.popsize0())
	}
	e.term = e.s.Config.Termination.Resolved(cfg.Sigma0)
	for _, x := range cfg.Inject {
		e.s.Queued = append(e.s.Queued, cmaes.Injection{X: append([]float64(nil), x...), Clip: true})
	}
	e.sample()
	return e, nil
}

// startRun sets the distribution to its initial state, m = x0, σ = σ0,
// C = I, p_σ = p_c = 0, for population size λ.
func (e *ES) startRun(lambda int) error {
	n := len(e.s.Config.X0)
	p, err := NewParams(n, lambda, e.s.Config.Rates)
	if err != nil {
		return err
	}
	e.p = p
	s := &e.s
	s.Lambda = lambda
	s.Mean = append(s.Mean[:0], s.Config.X0...)
	s.Sigma = s.Config.Sigma0
	s.C = ones(n)
	e.d = ones(n)
	s.PSigma = make([]float64, n)
	s.PC = make([]float64, n)
	s.T = 0
	s.FunHist = make([]float64, 10+int(math.Ceil(30*float64(n)/float64(lambda))))
	s.FunPos, s.FunN = 0, 0
	s.StagBest, s.StagMed = s.StagBest[:0], s.StagMed[:0]
	s.FlatGens = make([]int, 10+n)
	s.FlatPos, s.FlatN = 0, 0
	e.alloc()
	return nil
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func (e *ES) alloc() {
	n, l := e.p.N, e.p.Lambda
	if cap(e.x) >= l*n {
		e.x = e.x[:l*n]
	} else {
		e.x = make([]float64, l*n)
	}
	if e.s.Config.Bounds != nil {
		e.ph = make([]float64, l*n)
	}
	e.sc = scratch{
		yw: make([]float64, n), rankMu: make([]float64, n), mean: make([]float64, n),
		pSigma: make([]float64, n), pc: make([]float64, n), c: make([]float64, n),
		order: make([]int, l), sorted: make([]float64, 0, l),
	}
}

// sample draws the batch (draw), keeping the stream it started from, puts
// the waiting injected points in it and with bounds maps it into the box.
// State hashes the batch (BatchSum) when asked, not here: it is a serial
// pass over λn values.
func (e *ES) sample() {
	e.s.Rand = *e.src
	e.draw()
	e.takeInjections()
	e.placeInjected()
	e.images()
}

// images sets the points handed out with bounds: the images of the
// genotypes, an injected point as given.
func (e *ES) images() {
	b := e.s.Config.Bounds
	if b == nil {
		return
	}
	n := e.p.N
	for k := range e.p.Lambda {
		b.ImageInto(e.ph[k*n:(k+1)*n], e.x[k*n:(k+1)*n])
	}
	for k, in := range e.s.BatchInjected {
		copy(e.ph[k*n:(k+1)*n], in.X)
	}
}

// points returns the batch as handed out: the images with bounds.
func (e *ES) points() []float64 {
	if e.ph != nil {
		return e.ph
	}
	return e.x
}

// draw draws the batch x_k = m + σ D z_k, z_k ~ N(0, I), D = diag(√C_ii),
// k = 1..λ, coordinate by coordinate (as SepCMA's _sample_solution).
func (e *ES) draw() {
	n, m, sigma := e.p.N, e.s.Mean, e.s.Sigma
	for k := range e.p.Lambda {
		xr := e.x[k*n : (k+1)*n]
		for i := range xr {
			// Explicit conversions: no fused multiply-add, so that every
			// platform samples the same bits (Restore checks BatchSum).
			y := float64(e.d[i] * e.rnd.NormFloat64())
			xr[i] = m[i] + float64(sigma*y)
		}
	}
}

// batchSum hashes the bits of the batch; every step is a bijection, so a
// batch that differs in one value hashes differently.
func batchSum(x []float64) uint64 {
	h := uint64(0x5e9c3a)
	for _, v := range x {
		h = (h ^ math.Float64bits(v)) * 0x9e3779b97f4a7c15
		h ^= h >> 32
	}
	return h
}

// Ask returns the points of the pending generation as fresh slices: the
// same points until the generation is told. It returns nil once stopped.
func (e *ES) Ask() [][]float64 {
	if len(e.s.Stop) > 0 {
		return nil
	}
	n, l := e.p.N, e.p.Lambda
	flat := append([]float64(nil), e.points()...)
	out := make([][]float64, l)
	for k := range out {
		out[k] = flat[k*n : (k+1)*n : (k+1)*n]
	}
	return out
}

// Candidate returns point k of the pending batch without copying; it is
// valid until the next Tell and must not be modified.
func (e *ES) Candidate(k int) []float64 {
	n := e.p.N
	return e.points()[k*n : (k+1)*n : (k+1)*n]
}

// Tell takes one value per point of the pending generation, in the order
// Ask returned them; NaN marks a failed evaluation, which ranks worst. It
// updates the distribution (update.go), checks termination, restarts if
// configured, and samples the next batch. A generation whose values are
// all NaN leaves the distribution unchanged and is sampled anew.
func (e *ES) Tell(fitness []float64) (Record, error) {
	s := &e.s
	if len(s.Stop) > 0 {
		return Record{}, ErrStopped
	}
	if len(fitness) != e.p.Lambda {
		return Record{}, fmt.Errorf("sepcma: %d fitness values, want λ = %d", len(fitness), e.p.Lambda)
	}
	rec := Record{Generation: s.Generation, Run: s.Run, Regime: s.Regime, Lambda: e.p.Lambda,
		Hyper: cmaes.Hyper{C1: e.p.C1, CMu: e.p.CMu, Cc: e.p.Cc}, Injected: len(s.BatchInjected)}
	order := e.rank(fitness)
	nFinite := 0
	for _, f := range fitness {
		if !math.IsNaN(f) {
			nFinite++
		}
	}
	if nFinite > 0 {
		e.recordBest(fitness, order)
		if !e.update(order) {
			e.addStop(cmaes.StopNumerical, float64(s.Generation))
		}
	}
	s.Generation++
	s.Evaluations += e.p.Lambda
	rec.Evaluations = s.Evaluations
	rec.Best, rec.Median = genStats(fitness, order, nFinite, &e.sc.sorted)
	rec.BestSoFar = math.NaN()
	if s.HasBest {
		rec.BestSoFar = s.Best.F
	}
	if nFinite > 0 {
		s.FailedGens = 0
		if len(s.Stop) == 0 {
			e.checkStop(fitness, order, rec.Best, rec.Median)
		}
	} else {
		e.checkFailedStop()
	}
	rec.Sigma, rec.AxisRatio = s.Sigma, e.AxisRatio()
	rec.OverallStep = s.Sigma * maxOf(e.d)
	if len(s.Stop) > 0 && e.mayRestart() {
		if err := e.restart(rec.Generation); err != nil {
			return Record{}, err
		}
		rec.Restarted = true
	}
	rec.Stop = append([]cmaes.StopReason(nil), s.Stop...)
	if len(s.Stop) == 0 {
		e.sample()
	}
	return rec, nil
}

func (e *ES) addStop(name string, v float64) {
	e.s.Stop = append(e.s.Stop, cmaes.StopReason{Name: name, Value: v})
}

// rank returns the indices of the points sorted by fitness, NaN last, ties
// by index.
func (e *ES) rank(fitness []float64) []int {
	order := e.sc.order
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		fa, fb := fitness[order[a]], fitness[order[b]]
		if math.IsNaN(fb) {
			return !math.IsNaN(fa)
		}
		return fa < fb
	})
	return order
}

func (e *ES) recordBest(fitness []float64, order []int) {
	k := order[0]
	if f := fitness[k]; !e.s.HasBest || f < e.s.Best.F {
		e.s.Best = cmaes.Best{X: append(e.s.Best.X[:0:0], e.Candidate(k)...), F: f, Generation: e.s.Generation}
		e.s.HasBest = true
	}
}

// genStats returns the best value and the median of the finite values.
func genStats(fitness []float64, order []int, nFinite int, buf *[]float64) (best, median float64) {
	if nFinite == 0 {
		return math.NaN(), math.NaN()
	}
	v := (*buf)[:0]
	for _, k := range order[:nFinite] {
		v = append(v, fitness[k])
	}
	*buf = v
	if nFinite%2 == 1 {
		return v[0], v[nFinite/2]
	}
	return v[0], (v[nFinite/2-1] + v[nFinite/2]) / 2
}

// StopNow ends the run at the caller's request (cmaes.StopRequested, with
// the generations told as its value); no restart follows.
func (e *ES) StopNow() {
	if len(e.s.Stop) == 0 {
		e.addStop(cmaes.StopRequested, float64(e.s.Generation))
	}
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = math.Max(m, x)
	}
	return m
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = math.Min(m, x)
	}
	return m
}
