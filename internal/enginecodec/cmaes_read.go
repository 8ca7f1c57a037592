package enginecodec

import (
	"fmt"
	"math"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

// decodedCMAES is a cmaes.State read from a blob, with what the reader
// checks once the engine has restored it.
type decodedCMAES struct {
	st        *cmaes.State
	resampled bool   // the batch was left out, to be sampled again
	batchSum  uint64 // its hash, as written
}

// restore restores the ES and checks that a batch it sampled again is the
// one handed out.
func (d *decodedCMAES) restore() (*cmaes.ES, error) {
	e, err := cmaes.Restore(d.st)
	if err != nil {
		return nil, err
	}
	if err := d.check(e.State()); err != nil {
		return nil, err
	}
	return e, nil
}

// check checks the batch of the restored state st against the hash read.
func (d *decodedCMAES) check(st *cmaes.State) error {
	if d.resampled && batchChecksum(st.Batch) != d.batchSum {
		return fmt.Errorf("the batch sampled again differs from the one handed out: %w", binenc.ErrCorrupt)
	}
	return nil
}

// decodeCMAES reads a state of the given version in the order
// encodeCMAES writes it, one part at a time: each part reads what every
// version wrote and what its own versions added; what an older version did
// not write is set by migrate.go. cmaes.Restore then checks the lengths and
// counters against n and λ and recomputes what versions 5 and 6 left out
// (B and D, the batch); given is the kept Step whose replay version 6 may
// have left C to.
func decodeCMAES(r *binenc.Reader, version uint32, given *cmaes.Step) (*decodedCMAES, error) {
	c, err := readConfig(r)
	if err != nil {
		return nil, err
	}
	st := &cmaes.State{Config: c}
	if err := st.Rand.UnmarshalBinary(r.Bytes()); err != nil {
		return nil, fmt.Errorf("random stream: %w", err)
	}
	st.Lambda = r.Int()
	if err := checkLambda(r, version, given, len(c.X0), st.Lambda); err != nil {
		return nil, err
	}
	d := &decodedCMAES{st: st}
	readDistribution(r, version, given, st)
	readRuns(r, st)
	d.readBatch(r, version)
	readHistories(r, st)
	if version >= versionInject {
		readInjections(r, st)
	}
	if version >= versionNumerics {
		readNumerics(r, st)
	} else {
		migrateNumerics(st)
	}
	if version >= versionRestarts {
		readRestarts(r, st)
	} else {
		migrateRestarts(st)
	}
	if version >= versionLazy {
		st.EigenT = r.Int() // cmaes.Restore checks 0 ≤ EigenT ≤ T
	} else {
		migrateLazy(st)
		if cmaes.IsLazy(st.Config.Numerics) {
			r.Fail("numerics %d in version %d", st.Config.Numerics, version) // came with version 8 (NumericsLazyLong later)
		}
	}
	if version >= versionFlatFitness {
		st.Config.Termination.FlatFitness = r.Bool()
	}
	if version >= versionLoshchilov {
		st.Config.Restarts.SigmaDec, st.Config.Restarts.Budget = r.Float(), r.Float() // cmaes.Restore checks them
	}
	if version >= versionUpSigma {
		st.Config.Termination.UpSigmaMoved, st.RunMovedScale = r.Bool(), r.Float() // cmaes.Restore checks the scale
	}
	if version >= versionMirrored {
		st.Config.MirroredFirstRun, st.Config.MirroredSmallRuns = r.Bool(), r.Bool()
	}
	if version >= versionMeanRate {
		readMeanRate(r, st)
	}
	if version >= versionTolWorse {
		st.Config.Termination.TolWorse, st.RunStartF = r.Float(), r.Float() // cmaes.Restore checks TolWorse
	}
	if version >= versionTolWorseDelta {
		st.Config.Termination.TolWorseDelta = r.Float()
	}
	if version >= versionSpareBestSmall {
		st.Config.Restarts.SpareBestSmall = r.Bool() // cmaes.Restore checks it needs BIPOP
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return d, nil
}

// readConfig reads the Config of version 1's layout (the later fields come
// in the blocks of their versions). cmaes.Restore checks it; here only
// that it has a dimension.
func readConfig(r *binenc.Reader) (cmaes.Config, error) {
	var c cmaes.Config
	c.X0 = r.Floats()
	c.Sigma0 = r.Float()
	c.Lambda = r.Int()
	c.Seed = r.Uint64()
	if r.Bool() {
		c.Bounds = &cmaes.Bounds{Lower: r.Floats(), Upper: r.Floats()}
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
	if len(c.X0) == 0 {
		return c, fmt.Errorf("config: x0 is empty: %w", binenc.ErrCorrupt)
	}
	return c, nil
}

// checkLambda checks λ before anything is allocated for it: the pending
// batch (λ·n values) must still be in the blob, or be one that version 5
// samples again. So must C (n(n+1)/2 values or more), unless version 6 may
// have left it out for the given Step's C, of the same n, which was in the
// blob.
func checkLambda(r *binenc.Reader, version uint32, given *cmaes.Step, n, lambda int) error {
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
// Step's replay: readC), B and D (from version 5 maybe left out: B nil), p_σ
// and p_c.
func readDistribution(r *binenc.Reader, version uint32, given *cmaes.Step, st *cmaes.State) {
	n := len(st.Config.X0)
	st.Hyper = cmaes.Hyper{C1: r.Float(), CMu: r.Float(), Cc: r.Float()}
	st.Mean = r.Floats()
	st.Sigma = r.Float()
	if c := readC(r, version, given, n); len(c) == n*n {
		st.C = mat.NewSymDense(n, c)
	}
	if version < versionRecompute || !r.Bool() {
		b, d := r.Floats(), r.Floats()
		if len(b) != n*n || len(d) != n {
			r.Fail("B of %d values and D of %d, n = %d", len(b), len(d), n)
			return
		}
		st.B, st.D = mat.NewDense(n, n, b), d
	}
	st.PSigma, st.PC = r.Floats(), r.Floats()
}

// readC reads C, or from version 6 replays the given Step if C was left
// out. A C written that the Step's replay gives is refused, as the encoder
// never writes it, so that every state decoded encodes back to its bytes.
func readC(r *binenc.Reader, version uint32, given *cmaes.Step, n int) []float64 {
	if version < versionStepDerived {
		return readSym(r, version)
	}
	derived := r.Bool()
	if r.Err() != nil {
		return nil
	}
	usable := given != nil && len(given.PC) == n
	if !derived {
		data := readSym(r, version)
		if r.Err() == nil && usable && len(data) == n*n && replaysTo(given, mat.NewSymDense(n, data)) {
			r.Fail("C written, though the kept step gives it")
		}
		return data
	}
	if !usable {
		r.Fail("C left out, and no step of dimension %d to replay", n)
		return nil
	}
	// C is the given Step's replay, as the update made it.
	data := mirrored(replayedC(given))
	if !finite(data) {
		r.Fail("C left out, and the kept step's replay is not finite")
		return nil
	}
	return data
}

// readRuns reads the counters and the runs ended.
func readRuns(r *binenc.Reader, st *cmaes.State) {
	st.T, st.Generation, st.Evaluations, st.Run = r.Int(), r.Int(), r.Int(), r.Int()
	k := r.Int()
	if k < 0 || k > 1<<20 {
		r.Fail("%d run ends", k)
	}
	for range k {
		if r.Err() != nil {
			break
		}
		st.RunEnds = append(st.RunEnds, cmaes.RunEnd{Generation: r.Int(), Lambda: r.Int(), Reasons: readReasons(r)})
	}
}

// readBatch reads the pending batch, or from version 5 the hash of the
// batch to sample again (cmaes.Restore draws it from the stream written,
// the one before the batch).
func (d *decodedCMAES) readBatch(r *binenc.Reader, version uint32) {
	st := d.st
	n := len(st.Config.X0)
	d.resampled = version >= versionRecompute && r.Bool()
	if d.resampled {
		d.batchSum = r.Uint64()
		if r.Err() == nil && st.Lambda*n > maxResampled(n) {
			r.Fail("batch of %d×%d left out", st.Lambda, n)
		}
		return
	}
	x := r.Floats()
	if r.Err() == nil && len(x) != st.Lambda*n {
		r.Fail("batch of %d values, λ = %d, n = %d", len(x), st.Lambda, n)
		return
	}
	st.Batch = mat.NewDense(st.Lambda, n, x)
}

// readHistories reads the best point, the termination criteria's
// histories and the stop reasons.
func readHistories(r *binenc.Reader, st *cmaes.State) {
	st.HasBest = r.Bool()
	st.Best = cmaes.Best{X: r.Floats(), F: r.Float(), Generation: r.Int()}
	st.FunHist = r.Floats()
	st.FunPos, st.FunN = r.Int(), r.Int()
	st.StagBest, st.StagMed = r.Floats(), r.Floats()
	st.FlatGens = r.Ints()
	st.FlatPos, st.FlatN = r.Int(), r.Int()
	st.Stop = readReasons(r)
}

// readInjections reads version 2's block: the runaway criterion, the failed
// generations counted and the injected points (cmaes.Restore checks them).
func readInjections(r *binenc.Reader, st *cmaes.State) {
	st.Config.Termination.MaxFailedGenerations = r.Int()
	st.FailedGenerations = r.Int()
	st.Queued = readInjected(r, st.Lambda)
	st.BatchInjected = readInjected(r, st.Lambda)
}

// readInjected reads at most lambda injected points.
func readInjected(r *binenc.Reader, lambda int) []cmaes.Injection {
	k := r.Int()
	if r.Err() != nil {
		return nil
	}
	if k < 0 || k > lambda {
		r.Fail("%d injected points, λ = %d", k, lambda)
		return nil
	}
	var q []cmaes.Injection
	for range k {
		in := cmaes.Injection{Clip: r.Bool(), X: r.Floats()}
		if r.Err() != nil {
			return nil
		}
		q = append(q, in)
	}
	return q
}

// readNumerics reads version 3's numerics version (cmaes.Restore checks
// it).
func readNumerics(r *binenc.Reader, st *cmaes.State) { st.Config.Numerics = r.Int() }

// readRestarts reads version 7's block: active CMA-ES, BIPOP, restart
// points, the current run's regime, σ0 and generation limit, and each run
// end's regime and σ0.
func readRestarts(r *binenc.Reader, st *cmaes.State) {
	sigma0 := st.Config.Sigma0
	rs := &st.Config.Restarts
	st.Config.Active = r.Bool()
	rs.BIPOP = r.Bool()
	rs.IncPopSize = r.Float()
	rs.Point.Uniform = r.Bool()
	if r.Bool() {
		rs.Point.Region = &cmaes.Bounds{Lower: r.Floats(), Upper: r.Floats()}
	}
	st.Regime = readRegime(r)
	st.RunSigma0 = readSigma0(r, sigma0)
	st.GenLimit = r.Int()
	for i := range st.RunEnds {
		st.RunEnds[i].Regime = readRegime(r)
		st.RunEnds[i].Sigma0 = readSigma0(r, sigma0)
	}
}

// readRegime reads a regime's number (version 7).
func readRegime(r *binenc.Reader) string {
	v := r.Int()
	if v < 0 || v >= len(regimes) {
		r.Fail("regime %d", v)
		return cmaes.RegimeDefault
	}
	return regimes[v]
}

// readSigma0 reads what writeSigma0 wrote. A value written with the bits of
// sigma0 is refused (writeSigma0 never writes one), and so is one that is
// not a finite value > 0.
func readSigma0(r *binenc.Reader, sigma0 float64) float64 {
	if !r.Bool() {
		return sigma0
	}
	v := r.Float()
	if r.Err() == nil && (sameBits(v, sigma0) || !(v > 0) || math.IsInf(v, 0)) {
		r.Fail("run σ0 %v", v)
	}
	return v
}

func readReasons(r *binenc.Reader) []cmaes.StopReason {
	k := r.Int()
	if k < 0 || k > 64 {
		r.Fail("%d stop reasons", k)
		return nil
	}
	var rs []cmaes.StopReason
	for range k {
		rs = append(rs, cmaes.StopReason{Name: r.String(), Value: r.Float()})
	}
	return rs
}

// readSym reads a symmetric matrix written by a state of the given version:
// its full n×n data, both triangles set. Versions 1 to 3 wrote all n²
// values, which must be symmetric bit for bit; version 4 its upper
// triangle.
func readSym(r *binenc.Reader, version uint32) []float64 {
	if version >= versionPacked {
		_, data := r.UpperFloats()
		return data
	}
	data := r.Floats()
	n := int(math.Sqrt(float64(len(data))))
	if r.Err() != nil || n*n != len(data) {
		r.Fail("matrix of %d values is not square", len(data))
		return nil
	}
	for i := range n {
		for j := range i {
			if !sameBits(data[i*n+j], data[j*n+i]) {
				r.Fail("matrix not symmetric")
				return nil
			}
		}
	}
	return data
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// readMeanRate reads version 13's block (writeMeanRate); cmaes.Restore
// checks it against the run.
func readMeanRate(r *binenc.Reader, st *cmaes.State) {
	st.Config.MeanRateSmallRuns, st.Config.MeanRateLargeRuns = r.Bool(), r.Bool()
	st.Config.MeanRateAlpha, st.Config.MeanRateEtaMin = r.Float(), r.Float()
	if r.Bool() {
		st.MeanRate = &cmaes.MeanRate{Eta: r.Float(), V: r.Float(), E: r.Floats()}
	}
}
