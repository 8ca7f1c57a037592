package enginecodec

import (
	"fmt"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/catcma"
)

// The encoding of a catcma.CatCMA: the space, λ and the State in a fixed
// order.
//
//   - Version 1 (internal/catcma's own codec before it moved here): the
//     space (bounds, integer values, category counts), λ, then the
//     State's fields in their declared order. C is written only when it
//     differs from B diag(D²) Bᵀ (a flag says which; after New and every
//     update it does not) and is otherwise rebuilt by catcma.Restore.
//   - Version 2 adds the run's bookkeeping after the ASNG's state: the
//     seed, evaluations, the best candidate (a flag, then x, z, c, f and its
//     generation), the termination (max evaluations, a target flag and
//     value, NoShouldStop) and the stop reasons. A state of version 1
//     decodes as the engine it was: seed 0 (unknown), λ·g evaluations, no best, no
//     termination and no should_stop (migrateCatCMA).
const (
	catcmaMagic   = "selfcma/catcma"
	catcmaVersion = 2
	versionTrack  = 2
)

// AppendCatCMA appends the encoding of o, the random stream and the
// pending batch included, to dst.
func AppendCatCMA(dst []byte, o *catcma.CatCMA) []byte {
	s, p := &o.State, o.Params
	w := binenc.NewWriterTo(slices.Grow(dst, o.MemoryBytes()), catcmaMagic, catcmaVersion)
	w.Int(len(o.Space.X))
	for _, b := range o.Space.X {
		w.Float(b[0])
		w.Float(b[1])
	}
	w.Int(len(o.Space.Z))
	for _, row := range o.Space.Z {
		w.Floats(row)
	}
	w.Ints(o.Space.C)
	w.Int(p.Lambda)

	w.Int(s.Generation)
	w.Floats(s.Mean)
	w.Float(s.Sigma)
	w.Float(s.Sigma0)
	w.Floats(s.B)
	w.Floats(s.D)
	writeC := p.NMi > 0 && !o.CRebuilt()
	w.Bool(writeC)
	if writeC {
		w.Floats(s.C)
	}
	w.Floats(s.PSigma)
	w.Floats(s.PC)
	w.Floats(s.A)
	w.Floats(s.PMut)
	w.Bools(s.IntSucc)
	w.Floats(s.IQHist)
	w.Floats(s.FunHist)
	w.Int(len(s.Q))
	for _, q := range s.Q {
		w.Floats(q)
	}
	w.Floats(s.S)
	w.Float(s.Gamma)
	w.Float(s.Delta)
	w.Float(s.TrustDelta)
	writeTrack(w, s)
	rng, _ := s.RNG.MarshalBinary() // a PCG's never fails
	w.Bytes(rng)
	for k := range p.Lambda {
		if p.NMi > 0 {
			w.Floats(s.V[k])
		}
		if p.NCa > 0 {
			w.Ints(s.Cat[k])
		}
	}
	return w.Finish()
}

func writeTrack(w *binenc.Writer, s *catcma.State) {
	w.Uint64(s.Seed)
	w.Int(s.Evaluations)
	w.Bool(s.HasBest)
	if s.HasBest {
		w.Floats(s.Best.X)
		w.Floats(s.Best.Z)
		w.Ints(s.Best.C)
		w.Float(s.Best.F)
		w.Int(s.Best.Generation)
	}
	t := s.Termination
	w.Int(t.MaxEvaluations)
	w.Bool(t.HasTarget)
	w.Float(t.TargetFitness)
	w.Bool(t.NoShouldStop)
	w.Int(len(s.Stop))
	for _, r := range s.Stop {
		w.String(r.Name)
		w.Float(r.Value)
	}
}

// DecodeCatCMA decodes a state written by AppendCatCMA (or internal/catcma's
// MarshalBinary of version 1) and restores the optimizer.
func DecodeCatCMA(blob []byte) (*catcma.CatCMA, error) {
	o, err := decodeCatCMA(blob)
	if err != nil {
		return nil, fmt.Errorf("catcma: decode state: %w", err)
	}
	return o, nil
}

func decodeCatCMA(blob []byte) (*catcma.CatCMA, error) {
	r, version, err := binenc.NewReaderVersions(blob, catcmaMagic, 1, catcmaVersion)
	if err != nil {
		return nil, err
	}
	sp, lambda := readSpace(r)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if lambda < 2 || lambda > r.Remaining() {
		return nil, fmt.Errorf("lambda %d", lambda)
	}
	var s catcma.State
	readCatState(r, &s)
	if version >= versionTrack {
		readTrack(r, &s)
	} else {
		migrateCatCMA(&s, lambda)
	}
	if err := s.RNG.UnmarshalBinary(r.Bytes()); err != nil && r.Err() == nil {
		return nil, fmt.Errorf("random stream: %w", err)
	}
	_, nin, nca := sp.Dims()
	nmi := len(sp.X) + nin
	s.V, s.Cat = make([][]float64, lambda), make([][]int, lambda)
	for k := range lambda {
		if nmi > 0 {
			s.V[k] = r.Floats()
		}
		if nca > 0 {
			s.Cat[k] = r.Ints()
		}
	}
	if err := r.Done(); err != nil {
		return nil, err
	}
	return catcma.Restore(sp, lambda, s)
}

// migrateCatCMA sets what version 1 did not write, as that engine had it.
func migrateCatCMA(s *catcma.State, lambda int) {
	s.Evaluations = s.Generation * lambda
	s.Termination = catcma.Termination{NoShouldStop: true}
}

func readSpace(r *binenc.Reader) (catcma.Space, int) {
	var sp catcma.Space
	nx := count(r, 16)
	for range nx {
		sp.X = append(sp.X, [2]float64{r.Float(), r.Float()})
	}
	nz := count(r, 8)
	for range nz {
		sp.Z = append(sp.Z, r.Floats())
	}
	sp.C = r.Ints()
	return sp, r.Int()
}

func readCatState(r *binenc.Reader, s *catcma.State) {
	s.Generation = r.Int()
	s.Mean = r.Floats()
	s.Sigma = r.Float()
	s.Sigma0 = r.Float()
	s.B = r.Floats()
	s.D = r.Floats()
	if r.Bool() {
		s.C = r.Floats()
	}
	s.PSigma = r.Floats()
	s.PC = r.Floats()
	s.A = r.Floats()
	s.PMut = r.Floats()
	s.IntSucc = r.Bools()
	s.IQHist = r.Floats()
	s.FunHist = r.Floats()
	nq := count(r, 8)
	for range nq {
		s.Q = append(s.Q, r.Floats())
	}
	s.S = r.Floats()
	s.Gamma = r.Float()
	s.Delta = r.Float()
	s.TrustDelta = r.Float()
}

func readTrack(r *binenc.Reader, s *catcma.State) {
	s.Seed = r.Uint64()
	s.Evaluations = r.Int()
	if s.HasBest = r.Bool(); s.HasBest {
		s.Best.X = r.Floats()
		s.Best.Z = r.Floats()
		s.Best.C = r.Ints()
		s.Best.F = r.Float()
		s.Best.Generation = r.Int()
	}
	t := &s.Termination
	t.MaxEvaluations = r.Int()
	t.HasTarget = r.Bool()
	t.TargetFitness = r.Float()
	t.NoShouldStop = r.Bool()
	ns := count(r, 16)
	for range ns {
		s.Stop = append(s.Stop, catcma.StopReason{Name: r.String(), Value: r.Float()})
	}
}

// count reads a slice length whose elements take at least size bytes.
func count(r *binenc.Reader, size int) int {
	n := r.Int()
	if r.Err() == nil && (n < 0 || n > r.Remaining()/size) {
		r.Fail("length %d exceeds the blob", n)
		return 0
	}
	return n
}
