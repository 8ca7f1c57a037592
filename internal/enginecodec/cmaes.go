package enginecodec

import (
	"fmt"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// The versions of cmaes.State's encoding. Bump cmaesVersion with any change
// of the layout, and keep every older version decoding as before.
//
//   - Version 1: the fields up to the stop reasons.
//   - Version 2 (versionInject): a block at the end, Termination's
//     MaxFailedGenerations, the count of consecutive failed generations, the
//     queue of injected points and those of the pending batch. A version-1
//     state decodes with that block empty: MaxFailedGenerations 0 (the
//     default applies: it fires only after generations whose every value
//     failed, which change nothing else), no failed generation counted, no
//     injected point.
//   - Version 3 (versionNumerics): the numerics version (Config.Numerics)
//     after it. A state of version 1 or 2 decodes with NumericsDsyev, the
//     eigendecomposition every ES had before, so it continues bit for bit.
//   - Version 4 (versionPacked): the same fields, smaller. C is written as
//     its upper triangle, n(n+1)/2 values instead of n² (binenc's
//     UpperFloats); so is a Step's C. A Step no longer carries C_μ, which
//     its points, order, mean, σ and the weights of its (n, λ) determine:
//     the decoder recomputes it with the update's own code (Step.CMuInto), bit
//     for bit. A flag before it keeps C_μ written for a Step where that
//     recomputation would differ (one not made by an update), so that every
//     Step still decodes as it was. Versions 1 to 3 wrote both matrices in
//     full and decode as before.
//   - Version 5 (versionRecompute): B, D and the pending batch left out
//     when the decoder can recompute them bit for bit. A flag after C says
//     whether B and D are written; they are not when they are what the
//     eigendecomposition of C by the ES's numerics version gives
//     (State.DecomposedC), and the decoder then decomposes C by the same
//     code. A flag in place of the batch says whether it is written;
//     it is not when it is what sampling from the random stream, m, σ, B
//     and D gives (State.BatchDrawn: not after a Tell that stopped without
//     sampling, nor for a batch larger than maxResampled), and then
//     the stream field holds the stream before the batch was sampled, a
//     hash of the batch follows the flag, and the decoder samples the batch
//     again, puts the injected points of the batch in it, checks the hash
//     and leaves the stream where the sampling left it. Versions 1 to 4
//     wrote B, D, the batch and the stream as they were, and decode as
//     before.
//   - Version 6 (versionStepDerived): what a kept Step (selfcma's) makes
//     redundant left out. A flag in place of C says whether C is written;
//     it is not when C is what the Step of the update that made it gives
//     (Step.Replay with the Step's own rates, Algorithm 1, line 13: the
//     update computes C so), and the decoder, handed that Step
//     (selfcma's encoding), replays it. A plain ES has no such Step
//     and always writes C. A Step writes only the rows of X that C_μ uses,
//     x_{1:λ} … x_{μ:λ} in rank order; its other points served the ranking
//     only, and decode as NaN. Version 5 and older wrote C and every row.
//   - Version 7 (versionRestarts): a block at the end, after the numerics
//     version, for active CMA-ES and BIPOP restarts (cmaes's restart.go): the
//     config's Active, Restarts.BIPOP, Restarts.IncPopSize,
//     Restarts.Point.Uniform and the Region (a flag, then its lower and
//     upper values); the current run's regime (its number: 0 default, 1
//     large, 2 small), its σ0 (a flag, then the value, written only when
//     its bits differ from Sigma0's), its generation limit (0: none); and
//     for each run end, in order, its regime and σ0 the same way. The
//     evaluations of the small and the large runs and the count of large
//     runs follow from the run ends (generation, λ, regime: cmaes.Restore counts them),
//     and a run's start point is not needed to continue it, so neither is
//     written. A state of version 1 to 6 decodes as the ES it was: Active
//     false, no BIPOP, IncPopSize 0 (doubling λ, as then), uniform points
//     off; the first run of regime default, every later one large (an IPOP
//     restart), each with σ0 = Sigma0, and no generation limit.
//   - Version 8 (versionLazy): after version 7's block, State.EigenT, the
//     update of the run that last decomposed C (NumericsLazy decides by
//     it: cmaes's lazy.go). A state of version 1 to 7 had every update
//     decompose C: EigenT = T.
//   - Version 9 (versionFlatFitness): one flag at the end,
//     Termination.FlatFitness (pycma's tolflatfitness in place of
//     EqualFunValues; the flat generations stay in FlatGens). A state of
//     version 1 to 8 decodes with false: EqualFunValues, as it ran.
//   - Version 10 (versionLoshchilov): two floats at the end,
//     Restarts.SigmaDec and Restarts.Budget (NIPOP and NBIPOP, cmaes's
//     restart.go). The best point's regime, which NBIPOP's budgets need,
//     follows from the best point's generation and the run ends, so it is
//     not written. A state of version 1 to 9 decodes with 0 and 0: σ0 at
//     every large run and equal budgets, as it ran.
//   - Version 11 (versionUpSigma): a flag and a float at the end,
//     Termination.UpSigmaMoved and State.RunMovedScale (TolUpSigma counts
//     the scale the σ safeguard moved into C in the run). A state of
//     version 1 to 10 decodes with false and 0: TolUpSigma as it ran,
//     which reads no moved scale.
//   - Version 12 (versionMirrored): two flags at the end,
//     Config.MirroredFirstRun and Config.MirroredSmallRuns (mirrored
//     sampling in the first run, in BIPOP's small runs). A state of version
//     1 to 11 decodes with both false: every point drawn, as it ran.
//   - Version 13 (versionMeanRate): a block at the end,
//     Config.MeanRateSmallRuns, MeanRateLargeRuns, MeanRateAlpha and
//     MeanRateEtaMin (the
//     mean's learning rate in restarts, cmaes's meanrate.go), then a flag
//     and, in a run that adapts the mean's rate, State.MeanRate (η_m, V,
//     E). A state of version 1 to 12 decodes with both flags false and no
//     rule: the mean moved by its whole update, as it ran.
//   - Version 14 (versionTolWorse): two floats at the end,
//     Termination.TolWorse and State.RunStartF (a restart that converges
//     onto a point worse than an earlier run's best ends, cmaes's
//     stop.go). A state of version 1 to 13 decodes with 0 and 0: the
//     criterion off, as it ran.
//   - Version 15 (versionTolWorseDelta): a float at the end,
//     Termination.TolWorseDelta (δ of TolWorse, 0 for cmaes's default). A
//     state of version 1 to 14 decodes with 0: δ = 10^-3
//     (cmaes.DefaultTolWorseDelta), as it ran.
//   - Version 16 (versionSpareBestSmall): a flag at the end,
//     Restarts.SpareBestSmall (a small BIPOP run that found the best point
//     outlives its generation limit, cmaes's stop.go). A state of version
//     1 to 15 decodes with false: every small run ends at its limit, as it
//     ran.
const (
	cmaesMagic            = "selfcma/cmaes"
	cmaesVersion          = 16
	versionInject         = 2
	versionNumerics       = 3
	versionPacked         = 4
	versionRecompute      = 5
	versionStepDerived    = 6
	versionRestarts       = 7
	versionActiveStep     = 7 // a Step's active part (step.go)
	versionLazy           = 8
	versionFlatFitness    = 9
	versionLoshchilov     = 10
	versionUpSigma        = 11
	versionMirrored       = 12
	versionMeanRate       = 13
	versionTolWorse       = 14
	versionTolWorseDelta  = 15
	versionSpareBestSmall = 16
)

// AppendCMAES appends the encoding of s, the whole state of a CMA-ES (the
// random stream and the pending batch included), to dst: a caller that
// persists every generation reuses one buffer. The kept Step is not part
// of it: LastStep is nil after a decode.
func AppendCMAES(dst []byte, s *cmaes.State) []byte {
	w := binenc.NewWriterTo(slices.Grow(dst, cmaesSize(s)+64), cmaesMagic, cmaesVersion)
	encodeCMAES(w, s, nil)
	return w.Finish()
}

// DecodeCMAES decodes a state written by AppendCMAES of any version and
// restores the ES. A corrupted, truncated or foreign blob, or one whose
// contents are inconsistent, gives an error and no ES.
func DecodeCMAES(blob []byte) (*cmaes.ES, error) {
	r, v, err := binenc.NewReaderVersions(blob, cmaesMagic, 1, cmaesVersion)
	if err != nil {
		return nil, fmt.Errorf("cmaes: decode state: %w", err)
	}
	d, err := decodeCMAES(r, v, nil)
	if err == nil {
		err = r.Done()
	}
	var e *cmaes.ES
	if err == nil {
		e, err = d.restore()
	}
	if err != nil {
		return nil, fmt.Errorf("cmaes: decode state: %w", err)
	}
	return e, nil
}

// cmaesSize is about the number of bytes encodeCMAES writes for s.
func cmaesSize(s *cmaes.State) int {
	n, l := len(s.Config.X0), s.Lambda
	k := len(s.Queued) + len(s.BatchInjected)
	size := n*(n+1)/2 + 8*n + len(s.FunHist) + 2*len(s.StagBest) + len(s.FlatGens) + k*(n+2) + 6*len(s.RunEnds)
	if !s.DecomposedC {
		size += n * n
	}
	if s.MeanRate != nil {
		size += n + 2
	}
	if s.Config.Restarts.Point.Region != nil {
		size += 2 * n
	}
	if !resampled(s) {
		size += l * n
	}
	return 8*size + 1024
}

// resampled reports whether version 5 leaves the pending batch out.
func resampled(s *cmaes.State) bool {
	n := len(s.Config.X0)
	return s.BatchDrawn && s.Lambda*n <= maxResampled(n)
}

// maxResampled is the largest batch, in values λn, that version 5 leaves
// out at dimension n: 2¹⁶ values, or 32 times C's n(n+1)/2 if more. A
// decoder then allocates no batch larger than its blob holds or 32 times
// the C it holds, and a small blob samples no large batch.
func maxResampled(n int) int { return max(1<<16, 32*(n*(n+1)/2)) }
