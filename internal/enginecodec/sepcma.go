package enginecodec

import (
	"fmt"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/sepcma"
)

// The encoding of a sepcma.State: binenc's tag, schema version, the fields
// of the State in a fixed order, CRC-32. The pending batch is left out (it
// is sampled again from Rand, and checked against BatchSum), so the
// encoding holds O(n) values: 4n for m, C, p_σ, p_c, n for the best point,
// and the histories.
//
//   - Version 1 (internal/sepcma's own codec, before it moved here): every
//     field of the State.
//   - Version 2: version 1's fields, then the bounds (Config.Bounds) and
//     the injected points (Queued, BatchInjected). Version 1 reads as a
//     state without them.
const (
	sepcmaMagic   = "sepcma.State"
	sepcmaVersion = 2
)

// AppendSepCMA appends the encoding of s to dst.
func AppendSepCMA(dst []byte, s *sepcma.State) ([]byte, error) {
	n := len(s.Mean)
	w := binenc.NewWriterTo(slices.Grow(dst, 8*(6*n+len(s.FunHist)+2*len(s.StagBest)+len(s.FlatGens))+1024), sepcmaMagic, sepcmaVersion)
	c := s.Config
	w.Floats(c.X0)
	w.Float(c.Sigma0)
	w.Int(c.Lambda)
	w.Uint64(c.Seed)
	w.Uint32(uint32(c.Rates))
	t := c.Termination
	w.Int(t.MaxEvaluations)
	w.Bool(t.HasTarget)
	w.Float(t.TargetFitness)
	w.Floats([]float64{t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma})
	w.Bool(t.NoEffectAxis)
	w.Bool(t.NoEffectCoord)
	w.Bool(t.NoStagnation)
	w.Bool(t.NoEqualFunVal)
	w.Int(t.MaxFailedGenerations)
	rs := c.Restarts
	w.Bool(rs.IPOP)
	w.Bool(rs.BIPOP)
	w.Int(rs.Max)
	w.Float(rs.IncPopSize)
	w.Bool(rs.Point.Uniform)
	w.Bool(rs.Point.Region != nil)
	if r := rs.Point.Region; r != nil {
		w.Floats(r.Lower)
		w.Floats(r.Upper)
	}

	w.Int(s.Lambda)
	w.Floats(s.Mean)
	w.Float(s.Sigma)
	w.Floats(s.C)
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
		w.String(r.Regime)
		w.Float(r.Sigma0)
		writeReasons(w, r.Reasons)
	}
	w.String(s.Regime)
	w.Float(s.RunSigma0)
	w.Int(s.GenLimit)
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
	w.Int(s.FailedGens)
	writeReasons(w, s.Stop)
	rnd, err := s.Rand.MarshalBinary()
	if err != nil {
		return dst, fmt.Errorf("sepcma: encode random stream: %w", err)
	}
	w.Bytes(rnd)
	w.Uint64(s.BatchSum)
	w.Bool(c.Bounds != nil)
	if b := c.Bounds; b != nil {
		w.Floats(b.Lower)
		w.Floats(b.Upper)
	}
	writeSepInjections(w, s.Queued)
	writeSepInjections(w, s.BatchInjected)
	return w.Finish(), nil
}

// writeSepInjections writes injected points as sep-CMA-ES's encoding has
// them: x, then the clip flag (CMA-ES's has the flag first).
func writeSepInjections(w *binenc.Writer, q []cmaes.Injection) {
	w.Int(len(q))
	for _, in := range q {
		w.Floats(in.X)
		w.Bool(in.Clip)
	}
}

func readSepInjections(r *binenc.Reader) []cmaes.Injection {
	k := r.Int()
	if k < 0 || k > r.Remaining()/9 {
		r.Fail("%d injected points", k)
		return nil
	}
	var out []cmaes.Injection
	for range k {
		out = append(out, cmaes.Injection{X: r.Floats(), Clip: r.Bool()})
	}
	return out
}

// DecodeSepCMAState decodes what AppendSepCMA wrote (or sepcma's own
// MarshalBinary, before the codec moved here). It checks the encoding, not
// the state: sepcma.Restore does.
func DecodeSepCMAState(blob []byte) (sepcma.State, error) {
	r, version, err := binenc.NewReaderVersions(blob, sepcmaMagic, 1, sepcmaVersion)
	if err != nil {
		return sepcma.State{}, fmt.Errorf("sepcma: decode state: %w", err)
	}
	var d sepcma.State
	c := &d.Config
	c.X0 = r.Floats()
	c.Sigma0 = r.Float()
	c.Lambda = r.Int()
	c.Seed = r.Uint64()
	c.Rates = sepcma.Rates(r.Uint32())
	t := &c.Termination
	t.MaxEvaluations = r.Int()
	t.HasTarget = r.Bool()
	t.TargetFitness = r.Float()
	if tol := r.Floats(); len(tol) == 4 {
		t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma = tol[0], tol[1], tol[2], tol[3]
	} else {
		r.Fail("%d tolerances, want 4", len(tol))
	}
	t.NoEffectAxis = r.Bool()
	t.NoEffectCoord = r.Bool()
	t.NoStagnation = r.Bool()
	t.NoEqualFunVal = r.Bool()
	t.MaxFailedGenerations = r.Int()
	rs := &c.Restarts
	rs.IPOP = r.Bool()
	rs.BIPOP = r.Bool()
	rs.Max = r.Int()
	rs.IncPopSize = r.Float()
	rs.Point.Uniform = r.Bool()
	if r.Bool() {
		rs.Point.Region = &cmaes.Bounds{Lower: r.Floats(), Upper: r.Floats()}
	}

	d.Lambda = r.Int()
	d.Mean = r.Floats()
	d.Sigma = r.Float()
	d.C = r.Floats()
	d.PSigma = r.Floats()
	d.PC = r.Floats()
	d.T = r.Int()
	d.Generation = r.Int()
	d.Evaluations = r.Int()
	d.Run = r.Int()
	k := r.Int()
	if k < 0 || k > r.Remaining()/32 {
		r.Fail("%d run ends", k)
		k = 0
	}
	for range k {
		d.RunEnds = append(d.RunEnds, cmaes.RunEnd{Generation: r.Int(), Lambda: r.Int(), Regime: r.String(),
			Sigma0: r.Float(), Reasons: readReasons(r)})
	}
	d.Regime = r.String()
	d.RunSigma0 = r.Float()
	d.GenLimit = r.Int()
	d.HasBest = r.Bool()
	d.Best.X = r.Floats()
	d.Best.F = r.Float()
	d.Best.Generation = r.Int()
	d.FunHist = r.Floats()
	d.FunPos = r.Int()
	d.FunN = r.Int()
	d.StagBest = r.Floats()
	d.StagMed = r.Floats()
	d.FlatGens = r.Ints()
	d.FlatPos = r.Int()
	d.FlatN = r.Int()
	d.FailedGens = r.Int()
	d.Stop = readReasons(r)
	rnd := r.Bytes()
	d.BatchSum = r.Uint64()
	if version >= 2 {
		if r.Bool() {
			c.Bounds = &cmaes.Bounds{Lower: r.Floats(), Upper: r.Floats()}
		}
		d.Queued = readSepInjections(r)
		d.BatchInjected = readSepInjections(r)
	}
	if err := r.Done(); err != nil {
		return sepcma.State{}, fmt.Errorf("sepcma: decode state: %w", err)
	}
	if err := d.Rand.UnmarshalBinary(rnd); err != nil {
		return sepcma.State{}, fmt.Errorf("sepcma: decode random stream: %w", err)
	}
	return d, nil
}

// DecodeSepCMA decodes a state written by AppendSepCMA and restores the ES
// (sepcma.Restore: its pending batch sampled again and checked).
func DecodeSepCMA(blob []byte) (*sepcma.ES, error) {
	s, err := DecodeSepCMAState(blob)
	if err != nil {
		return nil, err
	}
	return sepcma.Restore(s)
}
