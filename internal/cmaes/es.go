package cmaes

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/selfcma/selfcma/internal/symeig"
)

// Numerical safeguards (docs/algorithm.md §1, after Hansen's cmaes.m).
const (
	// maxCondition bounds the condition number of C: beyond it, or with an
	// eigenvalue ≤ 0, (max eigenvalue/maxCondition − max(min eigenvalue, 0))·I
	// is added to C.
	maxCondition = 1e14
	// maxSigmaOverD bounds σ/max(D): beyond it the scale moves from σ into C
	// and p_c exactly.
	maxSigmaOverD = 1e10
)

// ErrStopped is returned by Tell once a termination criterion has stopped
// the ES.
var ErrStopped = errors.New("cmaes: stopped")

// Best is the best point told so far (as handed out, inside the bounds).
type Best struct {
	X          []float64
	F          float64
	Generation int
}

// Record describes one told generation (the service's history and the
// paper's plots read it).
type Record struct {
	Generation  int     // the generation told, counted over all restarts from 0
	Run         int     // 0 for the first run, then one more per restart (IPOP or BIPOP, small or large)
	Regime      string  // the run's regime: RegimeDefault, RegimeLarge or RegimeSmall (restart.go)
	Lambda      int     // λ of the generation
	Evaluations int     // points told so far, this generation included
	Best        float64 // best value of the generation; NaN if every evaluation failed
	Median      float64 // median of the generation's finite values; NaN if none
	BestSoFar   float64 // best value told so far (NaN before any finite one)
	Sigma       float64 // σ after the update
	Hyper       Hyper   // learning rates the update used
	AxisRatio   float64 // √(max/min eigenvalue of C) after the update
	Restarted   bool    // this generation ended a run and the next one started
	Injected    int     // candidates 0 to Injected − 1 of the generation were injected points
	Stop        []StopReason

	// The distribution after the update, as pycma's plots show it (see
	// record.go): σ·√λ_max(C), the principal axis lengths √λ_i(C)
	// ascending (D), the standard deviations σ·√C_ii and the mean m.
	OverallStep float64
	D           []float64
	Stds        []float64
	Mean        []float64
}

// RunEnd records a run that ended in a restart: why, and how it had
// started.
type RunEnd struct {
	Generation int // last generation of the run
	Lambda     int
	Reasons    []StopReason
	Regime     string  // RegimeDefault (the first run), RegimeLarge or RegimeSmall
	Sigma0     float64 // σ the run started with (Config.Sigma0 but for a small run)
}

// ES is a CMA-ES with an ask/tell interface: its State (state.go), plain
// data, and what follows from it and the workspaces of a generation. It is
// not safe for concurrent use.
type ES struct {
	s State

	// Derived from s (Restore recomputes them).
	term Termination // resolved tolerances
	p    Params      // of n, the current λ and Active
	rnd  *rand.Rand  // over s.Rand
	// Restarts (restart.go): the evaluations of the ended runs counted as
	// small (the first run included) and as large, and the large runs so
	// far, current included (tallyRuns).
	smallEvals int
	largeEvals int
	largeRuns  int
	pheno      *mat.Dense // with bounds, the images of s.Batch handed out

	// Not part of the state: what the last update used (a kept Step for
	// selfcma), the injected batch with clipped steps that the update uses,
	// and the buffers of a generation.
	lastStep  Step
	stepValid bool
	injX      *mat.Dense
	scratch   scratch
}

// scratch holds buffers reused every generation (not part of the state).
type scratch struct {
	z       *mat.Dense
	y       *mat.Dense
	order   []int
	ymu     *mat.Dense
	yneg    *mat.Dense // n×(λ−μ), active CMA-ES only (allocated by negativeUpdate)
	cNew    *mat.SymDense
	eigVecs *mat.Dense // n×n: the eigendecomposition's input and output
	eigVals []float64  // eigenvalues of the last decomposition, ascending
	eig     symeig.Workspace
	prod    symeig.Product // the sampling product from NumericsDC on
	vec     []float64
	vec2    []float64
	loc     []float64 // meanrate.go: C^{−1/2} y_w
	rate    MeanRate  // meanrate.go: the rule's next state
	sorted  []float64
}

// New returns an ES with its first batch sampled.
func New(cfg Config) (*ES, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.X0 = append([]float64(nil), cfg.X0...)
	cfg.Bounds = cfg.Bounds.clone()
	cfg.Restarts.Point.Region = cfg.Restarts.Point.Region.clone()
	if rs := &cfg.Restarts; rs.IPOP || rs.BIPOP {
		if rs.Max == 0 {
			rs.Max = DefaultMaxRestarts
		}
		if rs.IncPopSize == 0 {
			rs.IncPopSize = DefaultIncPopSize
		}
	}
	if cfg.Numerics == 0 {
		cfg.Numerics = NumericsLatest
	}
	if cfg.MeanRateSmallRuns || cfg.MeanRateLargeRuns {
		// The state keeps the α and the bound it ran with.
		cfg.MeanRateAlpha = cmp.Or(cfg.MeanRateAlpha, DefaultMeanRateAlpha)
		cfg.MeanRateEtaMin = cmp.Or(cfg.MeanRateEtaMin, DefaultMeanRateEtaMin)
	}
	e := &ES{s: State{Config: cfg}, term: cfg.Termination.resolved(cfg.Sigma0)}
	e.s.Queued = appendInjections(nil, cfg.Inject, true) // the first batch takes them
	e.s.Config.Inject = nil
	e.s.Rand = *rand.NewPCG(cfg.Seed, 0x5e1fc3a)
	e.rnd = rand.New(&e.s.Rand)
	if err := e.startRun(cfg.Lambda); err != nil {
		return nil, err
	}
	e.s.Regime, e.s.RunSigma0 = RegimeDefault, cfg.Sigma0
	if cfg.Restarts.BIPOP {
		// pycma's first run has its default maxiter too.
		e.s.GenLimit = maxIter0(len(cfg.X0), e.popsize0())
	}
	e.sample()
	return e, nil
}

// startRun sets the distribution to its initial state (Algorithm 1, line 2)
// for population size lambda.
func (e *ES) startRun(lambda int) error {
	n := len(e.s.Config.X0)
	p, err := NewParamsActive(n, lambda, e.s.Config.Active)
	if err != nil {
		return err
	}
	e.p = p
	e.s.Hyper = p.Hyper()
	e.s.Mean = append(e.s.Mean[:0], e.s.Config.X0...)
	e.s.Sigma = e.s.Config.Sigma0
	e.s.C = mat.NewSymDense(n, nil)
	e.s.B = mat.NewDense(n, n, nil)
	e.s.D = make([]float64, n)
	for i := range n {
		e.s.C.SetSym(i, i, 1)
		e.s.B.Set(i, i, 1)
		e.s.D[i] = 1
	}
	e.s.DecomposedC = false // B = I, D = 1 set directly, not decomposed
	e.s.PSigma = make([]float64, n)
	e.s.PC = make([]float64, n)
	e.s.T, e.s.EigenT = 0, 0
	e.s.RunMovedScale, e.s.RunStartF = 0, 0
	e.s.MeanRate = nil // restart sets it for a run that uses it
	e.s.FunHist = make([]float64, 10+int(math.Ceil(30*float64(n)/float64(p.Lambda))))
	e.s.FunPos, e.s.FunN = 0, 0
	e.s.StagBest, e.s.StagMed = e.s.StagBest[:0], e.s.StagMed[:0]
	e.s.FlatGens = make([]int, 10+n)
	e.s.FlatPos, e.s.FlatN = 0, 0
	e.stepValid = false
	e.allocScratch()
	return nil
}

func (e *ES) allocScratch() {
	n, l := e.p.N, e.p.Lambda
	e.s.Batch = mat.NewDense(l, n, nil)
	if e.s.Config.Bounds != nil {
		e.pheno = mat.NewDense(l, n, nil)
	} else {
		e.pheno = nil
	}
	e.scratch = scratch{
		z:       mat.NewDense(l, n, nil),
		y:       mat.NewDense(l, n, nil),
		order:   make([]int, l),
		ymu:     mat.NewDense(n, e.p.Mu, nil),
		cNew:    mat.NewSymDense(n, nil),
		vec:     make([]float64, n),
		vec2:    make([]float64, n),
		sorted:  make([]float64, 0, l),
		eigVecs: mat.NewDense(n, n, nil),
		eigVals: make([]float64, n),
	}
	e.lastStep = newStep(n, l)
}

// sample draws the batch of the current generation (drawBatch) and puts
// the waiting injected points in it.
func (e *ES) sample() {
	e.s.BatchRand = e.s.Rand
	e.drawBatch()
	e.takeInjections()
	e.s.BatchDrawn = true
}

// drawBatch draws x_k = m + σ B D z_k, z_k ~ N(0, I) (Algorithm 1, line 4),
// point by point, coordinate by coordinate from the ES's own stream, and
// with bounds their images; in a mirrored run (mirrored) the last ⌊λ/2⌋
// are the mirrors of the first, z_{h+j} = −z_j. It depends on nothing but
// the stream, m, σ, B, D, the bounds and the run: a decoder that restores
// those samples the same batch.
func (e *ES) drawBatch() {
	n, l := e.p.N, e.p.Lambda
	h := l // the points drawn; the rest mirror them
	if e.mirrored() {
		h = l - l/2
	}
	z := e.scratch.z.RawMatrix()
	for k := range l {
		row := z.Data[k*z.Stride : k*z.Stride+n]
		if k >= h {
			for i, v := range z.Data[(k-h)*z.Stride : (k-h)*z.Stride+n] {
				row[i] = -v // D(−z) = −(D z)
			}
			continue
		}
		for i := range row {
			row[i] = e.rnd.NormFloat64() * e.s.D[i]
		}
	}
	// Row k of Y is (B D z_k)ᵀ = (D z_k)ᵀ Bᵀ. From NumericsDC on, by the
	// numerics version's own product (its summation order is part of the
	// version).
	y, x := e.scratch.y.RawMatrix(), e.s.Batch.RawMatrix()
	if e.s.Config.Numerics >= NumericsDC {
		b := e.s.B.RawMatrix()
		e.scratch.prod.MulTransB(l, n, n, z.Data, z.Stride, b.Data, b.Stride, y.Data, y.Stride)
	} else {
		e.scratch.y.Mul(e.scratch.z, e.s.B.T())
	}
	for k := range l {
		yr, xr := y.Data[k*y.Stride:k*y.Stride+n], x.Data[k*x.Stride:k*x.Stride+n]
		for i := range xr {
			xr[i] = e.s.Mean[i] + e.s.Sigma*yr[i]
		}
	}
	if e.pheno != nil {
		ph := e.pheno.RawMatrix()
		for k := range l {
			transformInto(ph.Data[k*ph.Stride:k*ph.Stride+n], x.Data[k*x.Stride:k*x.Stride+n], e.s.Config.Bounds)
		}
	}
}

// mirrored reports whether the current run samples mirrored pairs
// (Config.MirroredFirstRun: the first run; MirroredSmallRuns: BIPOP's
// small runs).
func (e *ES) mirrored() bool {
	c := &e.s.Config
	return c.MirroredFirstRun && e.s.Run == 0 || c.MirroredSmallRuns && e.s.Regime == RegimeSmall
}

// Ask returns the points of the pending generation, as fresh slices: the
// same points until the generation is told.
func (e *ES) Ask() [][]float64 {
	src := e.s.Batch
	if e.pheno != nil {
		src = e.pheno
	}
	return rows(src)
}

// Genotypes returns the untransformed points of the pending generation (the
// points the update uses; equal to Ask without bounds).
func (e *ES) Genotypes() [][]float64 { return rows(e.s.Batch) }

func rows(m *mat.Dense) [][]float64 {
	r, c := m.Dims()
	out := make([][]float64, r)
	flat := make([]float64, r*c)
	for k := range r {
		out[k] = flat[k*c : (k+1)*c : (k+1)*c]
		copy(out[k], m.RawRowView(k))
	}
	return out
}

// SetHyper sets the learning rates c_1, c_μ, c_c of the next update
// (self-CMA-ES changes them every generation). It returns an error, and
// changes nothing, unless each is in [0, 1] and c_1 + c_μ ≤ 1.
func (e *ES) SetHyper(h Hyper) error {
	if !h.Valid() {
		return fmt.Errorf("cmaes: hyper-parameters %+v out of range", h)
	}
	e.s.Hyper = h
	return nil
}

// Tell takes one value per point of the pending generation, in the order
// Ask returned them; NaN marks a failed evaluation, which ranks worst. It
// updates the distribution (Algorithm 1, lines 8–14), checks termination,
// restarts if configured, and samples the next batch. A generation whose
// values are all NaN leaves the distribution unchanged and is sampled anew.
func (e *ES) Tell(fitness []float64) (Record, error) {
	if len(e.s.Stop) > 0 {
		return Record{}, ErrStopped
	}
	if len(fitness) != e.p.Lambda {
		return Record{}, fmt.Errorf("cmaes: %d fitness values, want λ = %d", len(fitness), e.p.Lambda)
	}
	rec := Record{Generation: e.s.Generation, Run: e.s.Run, Regime: e.s.Regime, Lambda: e.p.Lambda, Hyper: e.s.Hyper, Injected: len(e.s.BatchInjected)}
	e.s.BatchDrawn = false // until sample draws the next batch
	order := e.rank(fitness)
	nFinite := 0
	for _, f := range fitness {
		if !math.IsNaN(f) {
			nFinite++
		}
	}
	e.stepValid = false
	if nFinite > 0 {
		e.recordBest(fitness, order)
		if !e.update(order) {
			e.s.Stop = append(e.s.Stop, StopReason{Name: StopNumerical, Value: float64(e.s.Generation)})
		}
	}
	e.s.Generation++
	e.s.Evaluations += e.p.Lambda
	rec.Evaluations = e.s.Evaluations
	rec.Best, rec.Median = genStats(fitness, order, nFinite, &e.scratch.sorted)
	rec.BestSoFar = math.NaN()
	if e.s.HasBest {
		rec.BestSoFar = e.s.Best.F
	}
	switch {
	case nFinite > 0:
		e.s.FailedGenerations = 0
		if len(e.s.Stop) == 0 {
			e.checkStop(fitness, order, rec.Best, rec.Median)
		}
	default:
		e.checkFailedStop()
	}
	rec.Sigma, rec.AxisRatio = e.s.Sigma, e.AxisRatio()
	e.recordDistribution(&rec)
	if len(e.s.Stop) > 0 && e.mayRestart() {
		if err := e.restart(rec.Generation); err != nil {
			return Record{}, err
		}
		rec.Restarted = true
	}
	rec.Stop = append([]StopReason(nil), e.s.Stop...)
	if len(e.s.Stop) == 0 {
		e.sample()
	}
	return rec, nil
}

// rank returns the indices of the points sorted by fitness, NaN last, ties
// by index.
func (e *ES) rank(fitness []float64) []int {
	order := e.scratch.order
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
		src := e.s.Batch
		if e.pheno != nil {
			src = e.pheno
		}
		e.s.Best = Best{X: append(e.s.Best.X[:0:0], src.RawRowView(k)...), F: f, Generation: e.s.Generation}
		e.s.HasBest = true
	}
}

// genStats returns the best value and the median of the finite values.
func genStats(fitness []float64, order []int, nFinite int, buf *[]float64) (best, median float64) {
	if nFinite == 0 {
		return math.NaN(), math.NaN()
	}
	s := (*buf)[:0]
	for _, k := range order[:nFinite] {
		s = append(s, fitness[k])
	}
	*buf = s
	if nFinite%2 == 1 {
		return s[0], s[nFinite/2]
	}
	return s[0], (s[nFinite/2-1] + s[nFinite/2]) / 2
}

// update performs Algorithm 1, lines 8–14, on the ranked batch. It returns
// false, leaving the state as it was, if a non-finite value would enter it.
func (e *ES) update(order []int) bool {
	p, n := e.p, e.p.N
	st := &e.lastStep
	xm := e.updatePoints() // the batch, injected steps clipped (inject.go)
	x := xm.RawMatrix()

	// Keep what a replay of this update needs (Algorithm 3, line 3). C^t
	// without a copy: the Step takes e.s.C's matrix, and C^{t+1} is built
	// in a third one (commitC).
	spare := st.C
	st.C = e.s.C
	copy(st.PC, e.s.PC)
	copy(st.Mean, e.s.Mean)
	st.X.Copy(xm)
	copy(st.Order, order)
	st.Hyper, st.MuW, st.Sigma = e.s.Hyper, p.MuW, e.s.Sigma

	// Line 8: m' = Σ w_i x_{i:λ}; y_w = (m' − m)/σ.
	mNew := e.scratch.vec
	for i := range mNew {
		mNew[i] = 0
	}
	for i, w := range p.Weights {
		xr := x.Data[order[i]*x.Stride : order[i]*x.Stride+n]
		for j := range mNew {
			mNew[j] += w * xr[j]
		}
	}
	for j := range st.Yw {
		st.Yw[j] = (mNew[j] - e.s.Mean[j]) / e.s.Sigma
	}

	// Line 9: p_σ ← (1 − c_σ) p_σ + √(c_σ(2 − c_σ) μ_w) C^{−1/2} y_w,
	// with C^{−1/2} = B D^{−1} Bᵀ.
	// Bᵀ y_w by columns, B (D^{−1} Bᵀ y_w) by rows, each entry summed in
	// order whatever the split (ranges).
	bty := e.scratch.vec2
	bm := e.s.B.RawMatrix()
	ranges(n, n, func(lo, hi int) {
		bk := bty[lo:hi]
		clear(bk)
		for i := range n {
			row := bm.Data[i*bm.Stride+lo : i*bm.Stride+hi]
			yi := st.Yw[i]
			for k := range bk {
				bk[k] += row[k] * yi
			}
		}
		for k := lo; k < hi; k++ {
			bty[k] /= e.s.D[k]
		}
	})
	cs := math.Sqrt(p.CSigma * (2 - p.CSigma) * p.MuW)
	psNew := st.PSigma // reuse as scratch for the new p_σ
	// C^{−1/2} y_w, kept for the mean's rate (meanrate.go) in a run that
	// adapts it.
	loc := e.meanRateLoc()
	ranges(n, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := bm.Data[i*bm.Stride : i*bm.Stride+n]
			var s float64
			for k := range n {
				s += row[k] * bty[k]
			}
			if loc != nil {
				loc[i] = s
			}
			psNew[i] = (1-p.CSigma)*e.s.PSigma[i] + cs*s
		}
	})
	var psNorm2 float64
	for i := range n {
		psNorm2 += psNew[i] * psNew[i]
	}
	psNorm := math.Sqrt(psNorm2)

	// The mean's rate (meanrate.go), in a run that adapts it: m' ← m +
	// η_m'(m' − m), and σ' ← σ' η_m/η_m' (LRA-CMA-ES, Algorithm 1).
	rateSigma := 1.0
	if r := e.s.MeanRate; r != nil {
		rateSigma = e.meanRateStep(r, mNew, loc)
	}

	// Line 10: h_σ.
	st.HSigma = 0
	if psNorm < math.Sqrt(1-math.Pow(1-p.CSigma, 2*float64(e.s.T+1)))*(1.4+2/float64(n+1))*p.ChiN {
		st.HSigma = 1
	}

	// Line 12: C_μ = Σ w_i y_i y_iᵀ, y_i = (x_{i:λ} − m)/σ.
	cMuInto(st.CMu, e.scratch.ymu, xm, order, e.s.Mean, e.s.Sigma, p.Weights)
	st.Active = p.Active
	if p.Active {
		// Active CMA-ES: the negative part, under C^t's B and D.
		e.negativeUpdate(st, xm, order)
	}

	// Lines 11 and 13: p_c and C, through the same code as a replay.
	pcNew := e.scratch.vec2
	st.Replay(e.s.Hyper, pcNew, e.scratch.cNew)

	// Line 14: σ ← σ exp((c_σ/d_σ)(‖p_σ‖/E‖N(0, I)‖ − 1)).
	sigmaNew := e.s.Sigma * math.Exp(p.CSigma/p.DSigma*(psNorm/p.ChiN-1)) * rateSigma

	if !finite(mNew) || !finite(psNew) || !finite(pcNew) || !finiteSym(e.scratch.cNew) || math.IsInf(sigmaNew, 0) || math.IsNaN(sigmaNew) || sigmaNew <= 0 {
		st.C = keepC(spare, e.s.C)
		return false
	}
	now := e.decomposeNow() // NumericsLazy: maybe not (lazy.go)
	if now && !e.decompose(e.scratch.cNew) {
		st.C = keepC(spare, e.s.C)
		return false
	}
	copy(e.s.Mean, mNew)
	if r := e.s.MeanRate; r != nil {
		r.Eta, r.V = e.scratch.rate.Eta, e.scratch.rate.V
		copy(r.E, e.scratch.rate.E)
	}
	copy(e.s.PSigma, psNew)
	copy(e.s.PC, pcNew)
	// C^{t+1} becomes the state's, C^t (in st.C) stays the Step's, and
	// the Step's last matrix is the next update's scratch.
	e.s.C, e.scratch.cNew = e.scratch.cNew, spare
	e.s.Sigma = sigmaNew
	e.s.T++
	if now {
		e.s.EigenT = e.s.T
		e.s.DecomposedC = !e.safeguard()
	} else {
		// B and D stay those of an earlier C; only σ's bound applies
		// (the condition's was applied at that decomposition).
		e.boundSigma()
		e.s.DecomposedC = false
	}
	e.stepValid = true
	return true
}

// keepC returns spare set to c: the Step's own copy of C^t when an update
// fails after the Step took c itself.
func keepC(spare, c *mat.SymDense) *mat.SymDense {
	spare.CopySym(c)
	return spare
}

// negativeUpdate sets the negative part of the active update in st (C_μ^-
// and the sums Replay needs: Step.CMuNeg) from the ranked points x, with the
// Mahalanobis norms under the B and D of C^t.
func (e *ES) negativeUpdate(st *Step, x *mat.Dense, order []int) {
	n, k := e.p.N, len(e.p.WeightsNeg)
	if st.CMuNeg == nil {
		st.CMuNeg = mat.NewSymDense(n, nil)
	}
	st.AlphaMuWNeg = e.p.AlphaMuWNeg
	if k == 0 {
		st.CMuNeg.Zero()
		st.WNegSum = 0
		return
	}
	if y := e.scratch.yneg; y == nil || y.RawMatrix().Rows != n || y.RawMatrix().Cols != k {
		e.scratch.yneg = mat.NewDense(n, k, nil)
	}
	// The sampling buffers (λ×n) are free until the next batch is drawn.
	nw := negWork{y: e.scratch.z.RawMatrix().Data, bty: e.scratch.y.RawMatrix().Data, prod: &e.scratch.prod}
	st.WNegSum = cMuNegInto(st.CMuNeg, e.scratch.yneg, x, order, e.s.Mean, e.s.Sigma, e.p.WeightsNeg, e.s.B, e.s.D, len(e.s.BatchInjected), &nw)
}

// decompose sets B and D from the eigendecomposition of c by the ES's
// numerics version (NumericsDsyev: LAPACK's dsyev bit for bit; see
// internal/symeig), in place on reused buffers, leaving them as they were
// and returning false if it fails.
func (e *ES) decompose(c *mat.SymDense) bool {
	n := e.p.N
	sc := &e.scratch
	a := sc.eigVecs.RawMatrix()
	src := c.RawSymmetric()
	for i := range n {
		copy(a.Data[i*a.Stride+i:i*a.Stride+n], src.Data[i*src.Stride+i:i*src.Stride+n])
	}
	if !sc.eig.FactorizeVersion(symeigVersion(e.s.Config.Numerics), n, a.Data, a.Stride, sc.eigVals) {
		return false
	}
	if !finite(sc.eigVals) || !finite(a.Data) {
		return false
	}
	// The eigenvectors are the columns of eigVecs: it becomes B.
	e.s.B, sc.eigVecs = sc.eigVecs, e.s.B
	for i, v := range sc.eigVals {
		e.s.D[i] = math.Sqrt(math.Max(v, 0))
	}
	return true
}

// safeguard keeps C positive definite with a bounded condition number and σ
// bounded relative to D (docs/algorithm.md §1). It reports whether it
// changed C and D.
func (e *ES) safeguard() bool {
	n, changed := e.p.N, false
	lo, hi := e.s.D[0]*e.s.D[0], e.s.D[n-1]*e.s.D[n-1] // EigenSym sorts ascending
	if lo <= 0 || hi > maxCondition*lo {
		add := hi/maxCondition - math.Max(lo, 0)
		for i := range n {
			e.s.C.SetSym(i, i, e.s.C.At(i, i)+add)
			e.s.D[i] = math.Sqrt(e.s.D[i]*e.s.D[i] + add)
		}
		changed = true
	}
	return e.boundSigma() || changed
}

// boundSigma moves the scale from σ into C, D and p_c exactly when σ/max(D)
// exceeds maxSigmaOverD, and reports whether it did.
func (e *ES) boundSigma() bool {
	n := e.p.N
	maxD := e.s.D[n-1]
	if e.s.Sigma <= maxSigmaOverD*maxD {
		return false
	}
	s := e.s.Sigma / maxD
	e.s.RunMovedScale += 2 * math.Log(s)
	e.s.Sigma /= s
	for i := range n {
		e.s.PC[i] *= s
		e.s.D[i] *= s
	}
	cm := e.s.C.RawSymmetric()
	for i := range n {
		for j := i; j < n; j++ {
			cm.Data[i*cm.Stride+j] *= s * s
		}
	}
	return true
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func finiteSym(c *mat.SymDense) bool {
	r := c.RawSymmetric()
	for i := range r.N {
		if !finite(r.Data[i*r.Stride+i : i*r.Stride+r.N]) {
			return false
		}
	}
	return true
}

// StopNow ends the run at the caller's request: StopRequested, with the
// number of generations told as its value, becomes the stop reason, and no
// restart follows. A stopped ES is left as it is.
func (e *ES) StopNow() {
	if len(e.s.Stop) == 0 {
		e.s.Stop = append(e.s.Stop, StopReason{Name: StopRequested, Value: float64(e.s.Generation)})
	}
}
