package cmaes

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/binenc"
	"gonum.org/v1/gonum/mat"
)

// decode reads a state of the given version (codec.go) in the order encode
// writes it, one part at a time: each part reads what every version wrote
// and what its own versions added; what an older version did not write is
// set by migrate.go. Restore then checks the lengths and counters against
// n and λ and recomputes what version 5 and 6 left out (B and D, the
// batch); a batch sampled again must hash to what was written.
func decode(r *binenc.Reader, version uint32, given *Step) (*ES, error) {
	c, err := readConfig(r)
	if err != nil {
		return nil, err
	}
	st := &State{Config: c}
	if err := st.Rand.UnmarshalBinary(r.Bytes()); err != nil {
		return nil, fmt.Errorf("random stream: %w", err)
	}
	st.Lambda = r.Int()
	if err := checkLambda(r, version, given, len(c.X0), st.Lambda); err != nil {
		return nil, err
	}
	var d decoded
	readDistribution(r, version, given, st)
	readRuns(r, st)
	d.readBatch(r, version, st)
	readHistories(r, st)
	if version >= versionInject {
		readInjections(r, st)
	}
	readNumerics(r, version, st)
	migrateRestarts(st) // versions 1 to 6; version 7 overwrites
	if version >= versionRestarts {
		if err := readRestarts(r, st); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	e, err := Restore(st)
	if err != nil {
		return nil, err
	}
	if d.resampled && batchChecksum(e.s.Batch) != d.batchSum {
		return nil, fmt.Errorf("the batch sampled again differs from the one handed out: %w", binenc.ErrCorrupt)
	}
	return e, nil
}

// decoded holds what decode reads beside the State.
type decoded struct {
	resampled bool   // the batch was left out, to be sampled again
	batchSum  uint64 // its hash, as written
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
func readDistribution(r *binenc.Reader, version uint32, given *Step, st *State) {
	n := len(st.Config.X0)
	st.Hyper = Hyper{C1: r.Float(), CMu: r.Float(), Cc: r.Float()}
	st.Mean = r.Floats()
	st.Sigma = r.Float()
	if c := decodeC(r, version, given, n); len(c) == n*n {
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

// readRuns reads the counters and the runs ended.
func readRuns(r *binenc.Reader, st *State) {
	st.T, st.Generation, st.Evaluations, st.Run = r.Int(), r.Int(), r.Int(), r.Int()
	k := r.Int()
	if k < 0 || k > 1<<20 {
		r.Fail("%d run ends", k)
	}
	for range k {
		if r.Err() != nil {
			break
		}
		st.RunEnds = append(st.RunEnds, RunEnd{Generation: r.Int(), Lambda: r.Int(), Reasons: decodeReasons(r)})
	}
}

// readBatch reads the pending batch, or from version 5 the hash of the
// batch to sample again (Restore draws it from the stream written, the one
// before the batch).
func (d *decoded) readBatch(r *binenc.Reader, version uint32, st *State) {
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
func readHistories(r *binenc.Reader, st *State) {
	st.HasBest = r.Bool()
	st.Best = Best{X: r.Floats(), F: r.Float(), Generation: r.Int()}
	st.FunHist = r.Floats()
	st.FunPos, st.FunN = r.Int(), r.Int()
	st.StagBest, st.StagMed = r.Floats(), r.Floats()
	st.FlatGens = r.Ints()
	st.FlatPos, st.FlatN = r.Int(), r.Int()
	st.Stop = decodeReasons(r)
}

// readInjections reads version 2's block: the runaway criterion, the failed
// generations counted and the injected points.
func readInjections(r *binenc.Reader, st *State) {
	n, lambda, c := len(st.Config.X0), st.Lambda, &st.Config
	c.Termination.MaxFailedGenerations = r.Int()
	st.FailedGenerations = r.Int()
	st.Queued = decodeInjections(r, lambda, n, c.Bounds)
	st.BatchInjected = decodeInjections(r, lambda, n, c.Bounds)
}

// readNumerics reads version 3's numerics version (migrateNumerics for the
// older ones).
func readNumerics(r *binenc.Reader, version uint32, st *State) {
	if version < versionNumerics {
		migrateNumerics(st)
		return
	}
	st.Config.Numerics = r.Int()
	if r.Err() == nil && (st.Config.Numerics == 0 || validNumerics(st.Config.Numerics) != nil) {
		r.Fail("numerics version %d", st.Config.Numerics)
	}
}

// readRestarts reads version 7's block: active CMA-ES, BIPOP, restart
// points, the current run's regime, σ0 and generation limit, and each run
// end's regime and σ0.
func readRestarts(r *binenc.Reader, st *State) error {
	sigma0 := st.Config.Sigma0
	rs := &st.Config.Restarts
	st.Config.Active = r.Bool()
	rs.BIPOP = r.Bool()
	rs.IncPopSize = r.Float()
	rs.Point.Uniform = r.Bool()
	if r.Bool() {
		rs.Point.Region = &Bounds{Lower: r.Floats(), Upper: r.Floats()}
	}
	if r.Err() == nil {
		if err := st.Config.validateRestarts(); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	st.Regime = readRegime(r).String()
	st.RunSigma0 = readSigma0(r, sigma0)
	st.GenLimit = r.Int()
	for i := range st.RunEnds {
		st.RunEnds[i].Regime = readRegime(r).String()
		st.RunEnds[i].Sigma0 = readSigma0(r, sigma0)
	}
	if r.Err() == nil && (st.GenLimit < 0 || (st.Regime == RegimeDefault) != (st.Run == 0)) {
		r.Fail("generation limit %d, regime %v of run %d", st.GenLimit, st.Regime, st.Run)
	}
	return nil
}
