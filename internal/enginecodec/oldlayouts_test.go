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
	src := &s.Rand
	resampled := version >= versionRecompute && resampled(s)
	if resampled {
		src = &s.BatchRand
	}
	rng, err := src.MarshalBinary()
	if err != nil {
		panic(err)
	}
	writeConfig(w, &s.Config)
	w.Bytes(rng)
	w.Int(s.Lambda)
	w.Float(s.Hyper.C1)
	w.Float(s.Hyper.CMu)
	w.Float(s.Hyper.Cc)
	w.Floats(s.Mean)
	w.Float(s.Sigma)
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
	if version >= versionRecompute {
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
	w.Floats(s.FunHist)
	w.Int(s.FunPos)
	w.Int(s.FunN)
	w.Floats(s.StagBest)
	w.Floats(s.StagMed)
	w.Ints(s.FlatGens)
	w.Int(s.FlatPos)
	w.Int(s.FlatN)
	writeReasons(w, s.Stop)
	w.Int(s.Config.Termination.MaxFailedGenerations)
	w.Int(s.FailedGenerations)
	writeInjections(w, s.Queued)
	writeInjections(w, s.BatchInjected)
	w.Int(s.Config.Numerics)
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
	writeUpper(w, s.C)
	w.Floats(s.PC)
	w.Floats(s.Yw)
	w.Float(s.HSigma)
	keep := !cMuRecomputes(s)
	w.Bool(keep)
	if keep {
		writeUpper(w, s.CMu)
	}
	w.Float(s.MuW)
	w.Float(s.Hyper.C1)
	w.Float(s.Hyper.CMu)
	w.Float(s.Hyper.Cc)
	w.Float(s.Sigma)
	w.Floats(s.PSigma)
	w.Floats(s.Mean)
	l, _ := s.X.Dims()
	w.Int(l)
	w.FloatRows(usedRows(s)...)
	w.Ints(s.Order)
}
