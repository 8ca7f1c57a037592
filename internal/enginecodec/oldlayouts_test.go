package enginecodec

import (
	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// The layouts of older versions, which only the tests write (the encoder
// writes the current one): with them the decoder's old paths are tested on
// the states of any run, not only on the fixtures of testdata.

// encodeAsVersion writes s in the layout of version (4 to cmaesVersion): C
// in full and B, D, the batch and the stream after it always before
// version 5, no C left to the given Step before version 6, no block of
// version 7 before it.
func encodeAsVersion(w *binenc.Writer, version uint32, s *cmaes.State, given *cmaes.Step) {
	if version == cmaesVersion {
		encodeCMAES(w, s, given)
		return
	}
	resampled := version >= versionRecompute && resampled(s)
	writeHead(w, s, resampled)
	derived := false
	if version >= versionStepDerived {
		derived = given != nil && replaysTo(given, s.C)
		w.Bool(derived)
	}
	if !derived {
		writeUpper(w, s.C)
	}
	writeBD := true
	if version >= versionRecompute {
		writeBD = !s.DecomposedC
		w.Bool(s.DecomposedC)
	}
	if writeBD {
		w.Floats(s.B.RawMatrix().Data)
		w.Floats(s.D)
	}
	w.Floats(s.PSigma)
	w.Floats(s.PC)
	writeRuns(w, s)
	if version >= versionRecompute {
		w.Bool(resampled)
	}
	if resampled {
		w.Uint64(batchChecksum(s.Batch))
	} else {
		w.Floats(s.Batch.RawMatrix().Data)
	}
	writeHistories(w, s)
	writeInjected(w, s)
	w.Int(s.Config.Numerics)
	if version >= versionRestarts {
		writeRestarts(w, s)
	}
	if version >= versionLazy {
		w.Int(s.EigenT)
	}
	if version >= versionFlatFitness {
		w.Bool(s.Config.Termination.FlatFitness)
	}
	if version >= versionLoshchilov {
		w.Float(s.Config.Restarts.SigmaDec)
		w.Float(s.Config.Restarts.Budget)
	}
	if version >= versionUpSigma {
		w.Bool(s.Config.Termination.UpSigmaMoved)
		w.Float(s.RunMovedScale)
	}
	if version >= versionMirrored {
		w.Bool(s.Config.MirroredFirstRun)
		w.Bool(s.Config.MirroredSmallRuns)
	}
	if version >= versionMeanRate {
		writeMeanRate(w, s)
	}
	if version >= versionTolWorse {
		w.Float(s.Config.Termination.TolWorse)
		w.Float(s.RunStartF)
	}
	if version >= versionTolWorseDelta {
		w.Float(s.Config.Termination.TolWorseDelta)
	}
}

// encodeAs returns the blob of e in the layout of the given version.
func encodeAs(e *cmaes.ES, version uint32) []byte {
	w := binenc.NewWriter(cmaesMagic, version)
	encodeAsVersion(w, version, e.State(), nil)
	return w.Finish()
}

// encodeStepVersion writes a Step in the layout of version (6 or later:
// before 7 without the active flag).
func encodeStepVersion(w *binenc.Writer, version uint32, s *cmaes.Step) {
	if version >= versionActiveStep {
		encodeStep(w, s)
		return
	}
	writeStepFields(w, s)
}
