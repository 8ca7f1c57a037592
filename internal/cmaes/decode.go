package cmaes

import (
	"fmt"
	"math/rand/v2"

	"github.com/selfcma/selfcma/internal/binenc"
	"gonum.org/v1/gonum/mat"
)

// decode reads a state of the given version (codec.go) in the order encode
// writes it, one part at a time: each part reads what every version wrote
// and what its own versions added; what an older version did not write is
// set by migrate.go. It then checks the lengths and counters against n and
// λ and recomputes what version 5 and 6 left out.
func decode(r *binenc.Reader, version uint32, given *Step) (*ES, error) {
	c, err := readConfig(r)
	if err != nil {
		return nil, err
	}
	e := &ES{cfg: c, term: c.Termination.resolved(c.Sigma0), src: &rand.PCG{}}
	if err := e.src.UnmarshalBinary(r.Bytes()); err != nil {
		return nil, fmt.Errorf("random stream: %w", err)
	}
	e.rnd = rand.New(e.src)
	lambda := r.Int()
	if err := checkLambda(r, version, given, len(c.X0), lambda); err != nil {
		return nil, err
	}
	if err := e.startRun(lambda); err != nil {
		return nil, err
	}
	var d decoded
	e.readDistribution(r, version, given, &d)
	e.readRuns(r)
	e.readBatch(r, version, &d)
	e.readHistories(r, &d)
	if version >= versionInject {
		e.readInjections(r)
	}
	e.readNumerics(r, version)
	migrateRestarts(e) // versions 1 to 6; version 7 overwrites
	if version >= versionRestarts {
		if err := e.readRestarts(r); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	e.tallyRuns()
	if !e.hyp.Valid() {
		return nil, fmt.Errorf("hyper-parameters out of range: %w", binenc.ErrCorrupt)
	}
	if !e.consistent(&d) {
		return nil, fmt.Errorf("inconsistent lengths or counters: %w", binenc.ErrCorrupt)
	}
	if err := e.restore(&d); err != nil {
		return nil, err
	}
	return e, nil
}

// decoded holds what decode reads before it can check and place it.
type decoded struct {
	cData, bData []float64 // C (n×n, both triangles); B if written
	readBD       bool      // B and D were written (else C's decomposition)
	resampled    bool      // the batch was left out, to be sampled again
	arx          []float64 // the batch, if written
	funHist      []float64
	flat         []int
}

// readConfig reads the Config of version 1's layout (the later fields come
// in the blocks of their versions) and checks it.
func readConfig(r *binenc.Reader) (Config, error) {
	var c Config
	c.X0 = r.Floats()
	c.Sigma0 = r.Float()
	c.Lambda = r.Int()
	c.Seed = r.Uint64()
	if r.Bool() {
		c.Bounds = &Bounds{Lower: r.Floats(), Upper: r.Floats()}
	}
	t := &c.Termination
	t.MaxEvaluations = r.Int()
	t.HasTarget = r.Bool()
	t.TargetFitness = r.Float()
	t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma = r.Float(), r.Float(), r.Float(), r.Float()
	t.NoEffectAxis, t.NoEffectCoord, t.NoStagnation, t.NoEqualFunVal = r.Bool(), r.Bool(), r.Bool(), r.Bool()
	c.Restarts.IPOP = r.Bool()
	c.Restarts.Max = r.Int()
	if err := r.Err(); err != nil {
		return c, err
	}
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// checkLambda checks λ before anything is allocated for it: the pending
// batch (λ·n values) must still be in the blob, or be one that version 5
// samples again. So must C (n(n+1)/2 values or more), unless version 6 may
// have left it out for the given Step's C, of the same n, which was in the
// blob.
func checkLambda(r *binenc.Reader, version uint32, given *Step, n, lambda int) error {
	batchMax := r.Remaining() / 8
	if version >= versionRecompute {
		batchMax = max(batchMax, maxResampled(n))
	}
	cInBlob := version < versionStepDerived || given == nil || len(given.PC) != n
	if r.Err() != nil || lambda < 2 || lambda > batchMax/n || cInBlob && n > r.Remaining()/(4*(n+1)) {
		return fmt.Errorf("population size %d: %w", lambda, binenc.ErrCorrupt)
	}
	return nil
}

// readDistribution reads the rates, m, σ, C (from version 6 maybe the given
// Step's replay: decodeC), B and D (from version 5 maybe left out), p_σ
// and p_c.
func (e *ES) readDistribution(r *binenc.Reader, version uint32, given *Step, d *decoded) {
	e.hyp = Hyper{C1: r.Float(), CMu: r.Float(), Cc: r.Float()}
	e.mean = r.Floats()
	e.sigma = r.Float()
	d.cData = decodeC(r, version, given, len(e.cfg.X0))
	d.readBD = version < versionRecompute || !r.Bool()
	if d.readBD {
		d.bData, e.d = r.Floats(), r.Floats()
	}
	e.pSigma, e.pc = r.Floats(), r.Floats()
}

// readRuns reads the counters and the runs ended.
func (e *ES) readRuns(r *binenc.Reader) {
	e.t, e.generation, e.evaluations, e.run = r.Int(), r.Int(), r.Int(), r.Int()
	k := r.Int()
	if k < 0 || k > 1<<20 {
		r.Fail("%d run ends", k)
	}
	for range k {
		if r.Err() != nil {
			break
		}
		e.runEnds = append(e.runEnds, RunEnd{Generation: r.Int(), Lambda: r.Int(), Reasons: decodeReasons(r)})
	}
}

// readBatch reads the pending batch, or from version 5 the hash of the
// batch to sample again.
func (e *ES) readBatch(r *binenc.Reader, version uint32, d *decoded) {
	d.resampled = version >= versionRecompute && r.Bool()
	if d.resampled {
		e.batchSum = r.Uint64()
		return
	}
	d.arx = r.Floats()
}

// readHistories reads the best point, the termination criteria's
// histories and the stop reasons.
func (e *ES) readHistories(r *binenc.Reader, d *decoded) {
	e.hasBest = r.Bool()
	e.best = Best{X: r.Floats(), F: r.Float(), Generation: r.Int()}
	d.funHist = r.Floats()
	e.funPos, e.funN = r.Int(), r.Int()
	e.stagBest, e.stagMed = r.Floats(), r.Floats()
	d.flat = r.Ints()
	e.flatPos, e.flatN = r.Int(), r.Int()
	e.stopWhy = decodeReasons(r)
}

// readInjections reads version 2's block: the runaway criterion, the failed
// generations counted and the injected points.
func (e *ES) readInjections(r *binenc.Reader) {
	n, lambda, c := len(e.cfg.X0), e.p.Lambda, &e.cfg
	c.Termination.MaxFailedGenerations = r.Int()
	e.term = c.Termination.resolved(c.Sigma0)
	e.failedGens = r.Int()
	e.injQueue = decodeInjections(r, lambda, n, c.Bounds)
	e.batchInj = decodeInjections(r, lambda, n, c.Bounds)
}

// readNumerics reads version 3's numerics version (migrateNumerics for the
// older ones).
func (e *ES) readNumerics(r *binenc.Reader, version uint32) {
	if version < versionNumerics {
		migrateNumerics(e)
		return
	}
	e.cfg.Numerics = r.Int()
	if r.Err() == nil && (e.cfg.Numerics == 0 || validNumerics(e.cfg.Numerics) != nil) {
		r.Fail("numerics version %d", e.cfg.Numerics)
	}
}

// readRestarts reads version 7's block: active CMA-ES, BIPOP, restart
// points, the current run's regime, σ0 and generation limit, and each run
// end's regime and σ0.
func (e *ES) readRestarts(r *binenc.Reader) error {
	n, lambda, sigma0 := len(e.cfg.X0), e.p.Lambda, e.cfg.Sigma0
	rs := &e.cfg.Restarts
	if e.cfg.Active = r.Bool(); e.cfg.Active && r.Err() == nil {
		// startRun took the parameters of Algorithm 1: the active ones
		// replace them (NewParamsActive).
		p, err := NewParamsActive(n, lambda, true)
		if err != nil {
			return err
		}
		e.p = p
	}
	rs.BIPOP = r.Bool()
	rs.IncPopSize = r.Float()
	rs.Point.Uniform = r.Bool()
	if r.Bool() {
		rs.Point.Region = &Bounds{Lower: r.Floats(), Upper: r.Floats()}
	}
	if r.Err() == nil {
		if err := e.cfg.validateRestarts(); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	e.regime = readRegime(r)
	e.runSigma0 = readSigma0(r, sigma0)
	e.genLimit = r.Int()
	for i := range e.runEnds {
		e.runEnds[i].Regime = readRegime(r).String()
		e.runEnds[i].Sigma0 = readSigma0(r, sigma0)
	}
	if r.Err() == nil && (e.genLimit < 0 || (e.regime == regimeDefault) != (e.run == 0)) {
		r.Fail("generation limit %d, regime %v of run %d", e.genLimit, e.regime, e.run)
	}
	return nil
}

// consistent reports whether every length matches the dimension and λ, and
// every counter is in its range.
func (e *ES) consistent(d *decoded) bool {
	n, lambda := e.p.N, e.p.Lambda
	switch {
	case len(e.mean) != n || len(e.pSigma) != n || len(e.pc) != n || len(d.cData) != n*n:
		return false
	case d.readBD && (len(e.d) != n || len(d.bData) != n*n):
		return false
	case d.resampled && lambda*n > maxResampled(n), !d.resampled && len(d.arx) != lambda*n:
		return false
	case e.hasBest && len(e.best.X) != n:
		return false
	}
	return e.historiesConsistent(d) && e.countersConsistent()
}

func (e *ES) historiesConsistent(d *decoded) bool {
	switch {
	case len(d.funHist) != len(e.funHist) || len(d.flat) != len(e.flatGens):
		return false
	case len(e.stagBest) != len(e.stagMed) || len(e.stagBest) > stagMax:
		return false
	case e.funPos < 0 || e.funPos >= len(d.funHist) || e.funN < 0 || e.funN > len(d.funHist):
		return false
	case e.flatPos < 0 || e.flatPos >= len(d.flat) || e.flatN < 0 || e.flatN > len(d.flat):
		return false
	}
	return true
}

func (e *ES) countersConsistent() bool {
	return e.sigma > 0 && e.t >= 0 && e.generation >= 0 && e.evaluations >= 0 && e.run >= 0 && e.failedGens >= 0
}

// restore places what was read and recomputes what version 5 left out: B
// and D by decomposing C, the batch by sampling it again.
func (e *ES) restore(d *decoded) error {
	n := e.p.N
	e.c = mat.NewSymDense(n, d.cData)
	e.funHist, e.flatGens = d.funHist, d.flat
	if d.readBD {
		e.b = mat.NewDense(n, n, d.bData)
	} else {
		// The update's decomposition of the same C bits, by the same code
		// and numerics version: the same B and D.
		if !finiteSym(e.c) || !e.decompose(e.c) {
			return fmt.Errorf("C does not decompose: %w", binenc.ErrCorrupt)
		}
		e.bdFromC = true
	}
	if d.resampled {
		if err := e.resample(); err != nil {
			return err
		}
	} else {
		e.placeBatch(d.arx)
	}
	return e.checkInjected()
}

// resample samples the batch as sample drew it from the stream before it,
// then puts its injected points in, as takeInjections did, and checks the
// hash written.
func (e *ES) resample() error {
	e.batchSrc = *e.src
	e.drawBatch()
	for k, in := range e.batchInj {
		e.genotypeInto(e.arx.RawRowView(k), in.x)
	}
	if batchChecksum(e.arx) != e.batchSum {
		return fmt.Errorf("the batch sampled again differs from the one handed out: %w", binenc.ErrCorrupt)
	}
	e.batchFresh = true
	return nil
}

// placeBatch sets the batch written, and with bounds its images.
func (e *ES) placeBatch(arx []float64) {
	n, lambda := e.p.N, e.p.Lambda
	e.arx = mat.NewDense(lambda, n, arx)
	if e.pheno != nil {
		ph := e.pheno.RawMatrix()
		for k := range lambda {
			transformInto(ph.Data[k*ph.Stride:k*ph.Stride+n], arx[k*n:(k+1)*n], e.cfg.Bounds)
		}
	}
}

// checkInjected checks that each injected candidate is the genotype of its
// point, and hands the point out as given.
func (e *ES) checkInjected() error {
	n := e.p.N
	arx := e.arx.RawMatrix().Data
	g := make([]float64, n)
	for k, in := range e.batchInj {
		e.genotypeInto(g, in.x)
		for i := range n {
			if !sameBits(g[i], arx[k*n+i]) {
				return fmt.Errorf("injected candidate %d differs from its point: %w", k, binenc.ErrCorrupt)
			}
		}
		if e.pheno != nil {
			copy(e.pheno.RawRowView(k), in.x)
		}
	}
	return nil
}
