package enginecodec

import (
	"math"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

// encodeCMAES writes s in the current layout (cmaesVersion). C is left out
// if replaying the Step given (nil: none) gives it (version 6), B and D if
// decomposing C gives them, the batch if sampling gives it (version 5).
func encodeCMAES(w *binenc.Writer, s *cmaes.State, given *cmaes.Step) {
	resampled := resampled(s)
	writeHead(w, s, resampled)
	derived := given != nil && replaysTo(given, s.C) // version 6
	w.Bool(derived)
	if !derived {
		writeUpper(w, s.C) // version 4: the upper triangle
	}
	w.Bool(s.DecomposedC) // version 5: B and D only if decompose(C) would not give them
	if !s.DecomposedC {
		w.Floats(s.B.RawMatrix().Data)
		w.Floats(s.D)
	}
	w.Floats(s.PSigma)
	w.Floats(s.PC)
	writeRuns(w, s)
	w.Bool(resampled) // version 5: the batch, or the hash of the batch sampled again
	if resampled {
		w.Uint64(batchChecksum(s.Batch))
	} else {
		w.Floats(s.Batch.RawMatrix().Data)
	}
	writeHistories(w, s)
	writeInjected(w, s)                      // version 2
	w.Int(s.Config.Numerics)                 // version 3: the eigendecomposition's version
	writeRestarts(w, s)                      // version 7
	w.Int(s.EigenT)                          // version 8: the lazy update's last decomposition
	w.Bool(s.Config.Termination.FlatFitness) // version 9
	w.Float(s.Config.Restarts.SigmaDec)      // version 10: NIPOP, NBIPOP
	w.Float(s.Config.Restarts.Budget)
	w.Bool(s.Config.Termination.UpSigmaMoved) // version 11
	w.Float(s.RunMovedScale)
	w.Bool(s.Config.MirroredFirstRun) // version 12
	w.Bool(s.Config.MirroredSmallRuns)
	writeMeanRate(w, s)                    // version 13
	w.Float(s.Config.Termination.TolWorse) // version 14
	w.Float(s.RunStartF)
	w.Float(s.Config.Termination.TolWorseDelta) // version 15
	w.Bool(s.Config.Restarts.SpareBestSmall)    // version 16
}

// writeMeanRate writes version 13's block: Config.MeanRateSmallRuns,
// MeanRateLargeRuns, MeanRateAlpha and MeanRateEtaMin, then a flag and,
// when the run adapts the mean's rate, State.MeanRate's η, V and E.
func writeMeanRate(w *binenc.Writer, s *cmaes.State) {
	w.Bool(s.Config.MeanRateSmallRuns)
	w.Bool(s.Config.MeanRateLargeRuns)
	w.Float(s.Config.MeanRateAlpha)
	w.Float(s.Config.MeanRateEtaMin)
	w.Bool(s.MeanRate != nil)
	if r := s.MeanRate; r != nil {
		w.Float(r.Eta)
		w.Float(r.V)
		w.Floats(r.E)
	}
}

// writeRuns writes the counters and the runs ended.
func writeRuns(w *binenc.Writer, s *cmaes.State) {
	w.Int(s.T)
	w.Int(s.Generation)
	w.Int(s.Evaluations)
	w.Int(s.Run)
	w.Int(len(s.RunEnds))
	for _, r := range s.RunEnds {
		w.Int(r.Generation)
		w.Int(r.Lambda)
		writeReasons(w, r.Reasons)
	}
}

// writeHistories writes the best point, the termination criteria's
// histories and the stop reasons.
func writeHistories(w *binenc.Writer, s *cmaes.State) {
	w.Bool(s.HasBest)
	w.Floats(s.Best.X)
	w.Float(s.Best.F)
	w.Int(s.Best.Generation)
	w.Floats(s.FunHist)
	w.Int(s.FunPos)
	w.Int(s.FunN)
	w.Floats(s.StagBest)
	w.Floats(s.StagMed)
	w.Ints(s.FlatGens)
	w.Int(s.FlatPos)
	w.Int(s.FlatN)
	writeReasons(w, s.Stop)
}

// writeInjected writes version 2's block: the runaway criterion, the
// failed generations counted and the injected points.
func writeInjected(w *binenc.Writer, s *cmaes.State) {
	w.Int(s.Config.Termination.MaxFailedGenerations)
	w.Int(s.FailedGenerations)
	writeInjections(w, s.Queued)
	writeInjections(w, s.BatchInjected)
}

// writeHead writes the config, the random stream (the one before the batch
// if the batch is left out to be sampled again), λ, the rates, m and σ.
func writeHead(w *binenc.Writer, s *cmaes.State, resampled bool) {
	src := &s.Rand
	if resampled {
		src = &s.BatchRand // the decoder samples the batch from it again
	}
	rng, err := src.MarshalBinary()
	if err != nil {
		panic(err) // PCG.MarshalBinary never fails
	}
	writeConfig(w, &s.Config)
	w.Bytes(rng)
	w.Int(s.Lambda)
	w.Float(s.Hyper.C1)
	w.Float(s.Hyper.CMu)
	w.Float(s.Hyper.Cc)
	w.Floats(s.Mean)
	w.Float(s.Sigma)
}

// writeConfig writes the Config of version 1's layout (the later fields
// come in the blocks of their versions).
func writeConfig(w *binenc.Writer, c *cmaes.Config) {
	w.Floats(c.X0)
	w.Float(c.Sigma0)
	w.Int(c.Lambda)
	w.Uint64(c.Seed)
	w.Bool(c.Bounds != nil)
	if c.Bounds != nil {
		w.Floats(c.Bounds.Lower)
		w.Floats(c.Bounds.Upper)
	}
	t := c.Termination
	w.Int(t.MaxEvaluations)
	w.Bool(t.HasTarget)
	w.Float(t.TargetFitness)
	for _, v := range []float64{t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma} {
		w.Float(v)
	}
	for _, v := range []bool{t.NoEffectAxis, t.NoEffectCoord, t.NoStagnation, t.NoEqualFunVal} {
		w.Bool(v)
	}
	w.Bool(c.Restarts.IPOP)
	w.Int(c.Restarts.Max)
}

// writeRestarts writes version 7's block: active CMA-ES, BIPOP and restart
// points, the current run's regime, σ0 and generation limit, and each run
// end's regime and σ0.
func writeRestarts(w *binenc.Writer, s *cmaes.State) {
	c := s.Config
	rs := c.Restarts
	w.Bool(c.Active)
	w.Bool(rs.BIPOP)
	w.Float(rs.IncPopSize)
	w.Bool(rs.Point.Uniform)
	w.Bool(rs.Point.Region != nil)
	if rs.Point.Region != nil {
		w.Floats(rs.Point.Region.Lower)
		w.Floats(rs.Point.Region.Upper)
	}
	w.Int(regimeNumber(s.Regime))
	writeSigma0(w, s.RunSigma0, c.Sigma0)
	w.Int(s.GenLimit)
	for _, r := range s.RunEnds {
		w.Int(regimeNumber(r.Regime))
		writeSigma0(w, r.Sigma0, c.Sigma0)
	}
}

// regimes are the regimes by their number in version 7.
var regimes = [...]string{cmaes.RegimeDefault, cmaes.RegimeLarge, cmaes.RegimeSmall}

// regimeNumber is the number version 7 writes for a regime's name
// (len(regimes), which decoding refuses, for a name it does not know).
func regimeNumber(name string) int {
	for r, n := range regimes {
		if n == name {
			return r
		}
	}
	return len(regimes)
}

// writeSigma0 writes a run's σ0: a flag, and the value only when its bits
// differ from the config's Sigma0 (version 7).
func writeSigma0(w *binenc.Writer, v, sigma0 float64) {
	differs := !sameBits(v, sigma0)
	w.Bool(differs)
	if differs {
		w.Float(v)
	}
}

func writeInjections(w *binenc.Writer, q []cmaes.Injection) {
	w.Int(len(q))
	for _, in := range q {
		w.Bool(in.Clip)
		w.Floats(in.X)
	}
}

func writeReasons(w *binenc.Writer, rs []cmaes.StopReason) {
	w.Int(len(rs))
	for _, r := range rs {
		w.String(r.Name)
		w.Float(r.Value)
	}
}

// writeUpper writes the upper triangle of a symmetric matrix, the one
// SymDense keeps (version 4).
func writeUpper(w *binenc.Writer, c *mat.SymDense) {
	r := c.RawSymmetric()
	w.UpperFloats(r.N, r.Stride, r.Data)
}

// batchChecksum hashes the bits of the batch: a decoder that samples the
// batch again checks it got the points handed out. Each step is a
// bijection of the hash, so a batch that differs in one value always
// hashes differently.
func batchChecksum(x *mat.Dense) uint64 {
	r := x.RawMatrix()
	h := uint64(0x5e1fc3a)
	for k := range r.Rows {
		for _, v := range r.Data[k*r.Stride : k*r.Stride+r.Cols] {
			h = (h ^ math.Float64bits(v)) * 0x9e3779b97f4a7c15
			h ^= h >> 32
		}
	}
	return h
}

// sameBits compares bit patterns, so −0 and +0 (equal as numbers) differ:
// the encoding mirrors a symmetric matrix bit for bit.
func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
