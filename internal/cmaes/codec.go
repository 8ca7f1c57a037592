package cmaes

import (
	"fmt"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"gonum.org/v1/gonum/mat"
)

// The state's encoding: a tag, a schema version, the fields in a fixed
// order, a CRC-32. Bump stateVersion with any change of the layout, and keep
// every older version decoding as before.
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
//     the decoder recomputes it with the update's own code (cMuInto), bit
//     for bit. A flag before it keeps C_μ written for a Step where that
//     recomputation would differ (one not made by an update), so that every
//     Step still decodes as it was. Versions 1 to 3 wrote both matrices in
//     full and decode as before.
//   - Version 5 (versionRecompute): B, D and the pending batch left out
//     when the decoder can recompute them bit for bit. A flag after C says
//     whether B and D are written; they are not when they are what the
//     eigendecomposition of C by the ES's numerics version gives (the ES
//     keeps that fact: bdFromC), and the decoder then decomposes C by the
//     same code. A flag in place of the batch says whether it is written;
//     it is not when it is what sampling from the random stream, m, σ, B
//     and D gives (batchFresh: not after a Tell that stopped without
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
//     (UnmarshalFromVersionAfter), replays it. A plain ES has no such Step
//     and always writes C. A Step writes only the rows of X that C_μ uses,
//     x_{1:λ} … x_{μ:λ} in rank order; its other points served the ranking
//     only, and decode as NaN. Version 5 and older wrote C and every row.
//   - Version 7 (versionRestarts): a block at the end, after the numerics
//     version, for active CMA-ES and BIPOP restarts (restart.go): the
//     config's Active, Restarts.BIPOP, Restarts.IncPopSize,
//     Restarts.Point.Uniform and the Region (a flag, then its lower and
//     upper values); the current run's regime (its number: 0 default, 1
//     large, 2 small), its σ0 (a flag, then the value, written only when
//     its bits differ from Sigma0's), its generation limit (0: none); and
//     for each run end, in order, its regime and σ0 the same way. The
//     evaluations of the small and the large runs and the count of large
//     runs follow from the run ends (generation, λ, regime: tallyRuns),
//     and a run's start point is not needed to continue it, so neither is
//     written. A state of version 1 to 6 decodes as the ES it was: Active
//     false, no BIPOP, IncPopSize 0 (doubling λ, as then), uniform points
//     off; the first run of regime default, every later one large (an IPOP
//     restart), each with σ0 = Sigma0, and no generation limit.
const (
	stateMagic         = "selfcma/cmaes"
	stateVersion       = 7
	versionInject      = 2
	versionNumerics    = 3
	versionPacked      = 4
	versionRecompute   = 5
	versionStepDerived = 6
	versionRestarts    = 7
	// EncodingVersion is the version MarshalTo writes, for a wrapping
	// encoding to record and hand back to UnmarshalFromVersion.
	EncodingVersion = stateVersion
)

// MarshalBinary encodes the whole state of the ES, the random stream and
// the pending batch included, so that a restored ES continues bit for bit.
// The kept Step is not encoded: LastStep is nil after a restore.
func (e *ES) MarshalBinary() ([]byte, error) {
	return e.AppendBinary(make([]byte, 0, e.EncodedSize()+64))
}

// AppendBinary appends what MarshalBinary returns to dst
// (encoding.BinaryAppender): a caller that persists every generation
// reuses one buffer.
func (e *ES) AppendBinary(dst []byte) ([]byte, error) {
	dst = slices.Grow(dst, e.EncodedSize()+64)
	w := binenc.NewWriterTo(dst, stateMagic, stateVersion)
	e.encode(w, stateVersion, nil)
	return w.Finish(), nil
}

// EncodedSize is about the number of bytes MarshalTo writes.
func (e *ES) EncodedSize() int { return encodedSize(e.State()) }

func encodedSize(s *State) int {
	n, l := len(s.Config.X0), s.Lambda
	k := len(s.Queued) + len(s.BatchInjected)
	size := n*(n+1)/2 + 8*n + len(s.FunHist) + 2*len(s.StagBest) + len(s.FlatGens) + k*(n+2) + 6*len(s.RunEnds)
	if !s.DecomposedC {
		size += n * n
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
func resampled(s *State) bool {
	n := len(s.Config.X0)
	return s.BatchDrawn && s.Lambda*n <= maxResampled(n)
}

// maxResampled is the largest batch, in values λn, that version 5 leaves
// out at dimension n: 2¹⁶ values, or 32 times C's n(n+1)/2 if more. A
// decoder then allocates no batch larger than its blob holds or 32 times
// the C it holds, and a small blob samples no large batch.
func maxResampled(n int) int { return max(1<<16, 32*(n*(n+1)/2)) }

// encode writes the ES's state in the layout of version (encodeState).
func (e *ES) encode(w *binenc.Writer, version uint32, given *Step) {
	encodeState(w, version, e.State(), given)
}

// encodeState writes s in the layout of version (4 to 7; the tests write
// older versions to compare). From version 6, C is left out if replaying
// the Step given (nil: none) gives it.
func encodeState(w *binenc.Writer, version uint32, s *State, given *Step) {
	src := &s.Rand
	resampled := version >= versionRecompute && resampled(s)
	if resampled {
		src = &s.BatchRand // the decoder samples the batch from it again
	}
	rng, err := src.MarshalBinary()
	if err != nil {
		panic(err) // PCG.MarshalBinary never fails
	}
	// Config.
	c := s.Config
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

	// Run and distribution.
	w.Bytes(rng)
	w.Int(s.Lambda)
	w.Float(s.Hyper.C1)
	w.Float(s.Hyper.CMu)
	w.Float(s.Hyper.Cc)
	w.Floats(s.Mean)
	w.Float(s.Sigma)
	derived := false
	if version >= versionStepDerived {
		// Version 6: C only if the given Step's replay would not give it.
		derived = given != nil && given.replaysTo(s.C)
		w.Bool(derived)
	}
	if !derived {
		writeUpper(w, s.C) // version 4 (versionPacked): the upper triangle
	}
	writeBD := true
	if version >= versionRecompute {
		// Version 5 (versionRecompute): B and D only if decompose(C)
		// would not give them.
		writeBD = !s.DecomposedC
		w.Bool(s.DecomposedC)
	}
	if writeBD {
		w.Floats(s.B.RawMatrix().Data)
		w.Floats(s.D)
	}
	w.Floats(s.PSigma)
	w.Floats(s.PC)
	w.Int(s.T)
	w.Int(s.Generation)
	w.Int(s.Evaluations)
	w.Int(s.Run)
	w.Int(len(s.RunEnds))
	for _, r := range s.RunEnds {
		w.Int(r.Generation)
		w.Int(r.Lambda)
		encodeReasons(w, r.Reasons)
	}
	if version >= versionRecompute {
		// Version 5: the batch, or the hash of the batch sampled again.
		w.Bool(resampled)
	}
	if resampled {
		w.Uint64(batchChecksum(s.Batch))
	} else {
		w.Floats(s.Batch.RawMatrix().Data)
	}
	w.Bool(s.HasBest)
	w.Floats(s.Best.X)
	w.Float(s.Best.F)
	w.Int(s.Best.Generation)

	// Termination histories.
	w.Floats(s.FunHist)
	w.Int(s.FunPos)
	w.Int(s.FunN)
	w.Floats(s.StagBest)
	w.Floats(s.StagMed)
	w.Ints(s.FlatGens)
	w.Int(s.FlatPos)
	w.Int(s.FlatN)
	encodeReasons(w, s.Stop)

	// Version 2 (versionInject): the runaway criterion and injected points.
	w.Int(c.Termination.MaxFailedGenerations)
	w.Int(s.FailedGenerations)
	encodeInjections(w, s.Queued)
	encodeInjections(w, s.BatchInjected)

	// Version 3 (versionNumerics): the eigendecomposition's version.
	w.Int(c.Numerics)

	if version >= versionRestarts {
		// Version 7: active CMA-ES, BIPOP and restart points.
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

// regimeNumber is the number version 7 writes for a regime's name
// (regimeCount, which decoding refuses, for a name it does not know).
func regimeNumber(name string) int {
	for r, n := range regimeNames {
		if n == name {
			return r
		}
	}
	return int(regimeCount)
}

// readRegime reads a regime's number (version 7).
func readRegime(r *binenc.Reader) regime {
	v := r.Int()
	if r.Err() == nil && (v < 0 || v >= int(regimeCount)) {
		r.Fail("regime %d", v)
		return regimeDefault
	}
	return regime(v)
}

func encodeInjections(w *binenc.Writer, q []Injection) {
	w.Int(len(q))
	for _, in := range q {
		w.Bool(in.Clip)
		w.Floats(in.X)
	}
}

// decodeInjections reads at most lambda injected points of dimension n.
func decodeInjections(r *binenc.Reader, lambda, n int, b *Bounds) []Injection {
	k := r.Int()
	if r.Err() != nil {
		return nil
	}
	if k < 0 || k > lambda {
		r.Fail("%d injected points, λ = %d", k, lambda)
		return nil
	}
	var q []Injection
	for range k {
		in := Injection{Clip: r.Bool(), X: r.Floats()}
		if r.Err() != nil {
			return nil
		}
		if err := checkPoint(in.X, n, b); err != nil {
			r.Fail("injected point: %v", err)
			return nil
		}
		q = append(q, in)
	}
	return q
}

func encodeReasons(w *binenc.Writer, rs []StopReason) {
	w.Int(len(rs))
	for _, r := range rs {
		w.String(r.Name)
		w.Float(r.Value)
	}
}

func decodeReasons(r *binenc.Reader) []StopReason {
	k := r.Int()
	if k < 0 || k > 64 {
		r.Fail("%d stop reasons", k)
		return nil
	}
	var rs []StopReason
	for range k {
		rs = append(rs, StopReason{Name: r.String(), Value: r.Float()})
	}
	return rs
}

// sameBits compares bit patterns, so −0 and +0 (equal as numbers) differ:
// the encoding mirrors a symmetric matrix bit for bit.
func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// writeUpper writes the upper triangle of a symmetric matrix, the one
// SymDense keeps (version 4, versionPacked).
func writeUpper(w *binenc.Writer, c *mat.SymDense) {
	r := c.RawSymmetric()
	w.UpperFloats(r.N, r.Stride, r.Data)
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

// decodeC reads C, or from version 6 replays the given Step if C was left
// out (encode). A C written that the Step's replay gives is refused, as
// encode never writes it, so that every state decoded encodes back to its
// bytes.
func decodeC(r *binenc.Reader, version uint32, given *Step, n int) []float64 {
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
		if r.Err() == nil && usable && len(data) == n*n && given.replaysTo(mat.NewSymDense(n, data)) {
			r.Fail("C written, though the kept step gives it")
		}
		return data
	}
	if !usable {
		r.Fail("C left out, and no step of dimension %d to replay", n)
		return nil
	}
	// C is the given Step's replay, as the update made it.
	data := mirrored(given.replayedC())
	if !finite(data) {
		r.Fail("C left out, and the kept step's replay is not finite")
		return nil
	}
	return data
}

// Unmarshal decodes a state written by MarshalBinary. A corrupted, truncated
// or foreign blob, or one whose contents are inconsistent, gives an error
// and no ES.
func Unmarshal(blob []byte) (*ES, error) {
	r, v, err := binenc.NewReaderVersions(blob, stateMagic, 1, stateVersion)
	if err != nil {
		return nil, fmt.Errorf("cmaes: decode state: %w", err)
	}
	e, err := decode(r, v, nil)
	if err == nil {
		err = r.Done()
	}
	if err != nil {
		return nil, fmt.Errorf("cmaes: decode state: %w", err)
	}
	return e, nil
}

// MarshalTo lets a wrapping package (selfcma) embed an ES in its own
// encoding (UnmarshalFromVersion reads it).

func (e *ES) MarshalTo(w *binenc.Writer) { e.encode(w, stateVersion, nil) }

// MarshalToAfter is MarshalTo for an ES whose C the kept Step s may give
// (s.Replay with s.Hyper; nil: none): C is then left out, and
// UnmarshalFromVersionAfter, handed the same Step, replays it.
func (e *ES) MarshalToAfter(w *binenc.Writer, s *Step) { e.encode(w, stateVersion, s) }

// UnmarshalFromVersion decodes an ES embedded with MarshalTo by a version
// of this code whose EncodingVersion was version (1 to EncodingVersion).
func UnmarshalFromVersion(r *binenc.Reader, version uint32) (*ES, error) {
	return UnmarshalFromVersionAfter(r, version, nil)
}

// UnmarshalFromVersionAfter decodes an ES embedded with MarshalToAfter,
// given the Step that was handed to it (decoded first). A blob that left C
// out when no Step (or one of another dimension) is given is corrupt.
func UnmarshalFromVersionAfter(r *binenc.Reader, version uint32, s *Step) (*ES, error) {
	if version < 1 || version > stateVersion {
		return nil, fmt.Errorf("cmaes: encoding version %d, want 1 to %d: %w", version, stateVersion, binenc.ErrCorrupt)
	}
	return decode(r, version, s)
}
