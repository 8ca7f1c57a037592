package catcma

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
)

// The encoding: a tag, a schema version, the space, λ and the State in a
// fixed order, a CRC-32 (internal/binenc). Bump stateVersion with any change
// of the layout and keep every older version decoding as before.
//
//   - Version 1: the space (bounds, integer values, category counts), λ,
//     then the State's fields in their declared order. C is written only
//     when it differs from B diag(D²) Bᵀ (a flag says which; after New and
//     every update it does not, the reference rebuilding C so), and the
//     decoder rebuilds it with the same code.
const (
	stateMagic   = "selfcma/catcma"
	stateVersion = 1
)

// MarshalBinary encodes the optimizer exactly.
func (o *CatCMA) MarshalBinary() ([]byte, error) {
	s, p := &o.State, o.Params
	w := binenc.NewWriterSize(stateMagic, stateVersion, o.MemoryBytes())
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
	writeC := p.NMi > 0 && !o.cIsRebuilt()
	w.Bool(writeC)
	if writeC {
		w.Floats(s.C)
	}
	w.Floats(s.PSigma)
	w.Floats(s.PC)
	w.Floats(s.A)
	w.Floats(s.PMut)
	w.Int(len(s.IntSucc))
	for _, b := range s.IntSucc {
		w.Bool(b)
	}
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
	rng, err := s.RNG.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("catcma: encode: %w", err)
	}
	w.Bytes(rng)
	for k := range p.Lambda {
		if p.NMi > 0 {
			w.Floats(s.V[k])
		}
		if p.NCa > 0 {
			w.Ints(s.Cat[k])
		}
	}
	return w.Finish(), nil
}

// cIsRebuilt reports whether C is, bit for bit, B diag(D²) Bᵀ.
func (o *CatCMA) cIsRebuilt() bool {
	c := make([]float64, len(o.State.C))
	o.rebuildC(c)
	for i := range c {
		if math.Float64bits(c[i]) != math.Float64bits(o.State.C[i]) {
			return false
		}
	}
	return true
}

// Unmarshal decodes an optimizer encoded by MarshalBinary; it continues
// exactly as the encoded one would.
func Unmarshal(blob []byte) (*CatCMA, error) {
	o, err := unmarshal(blob)
	if err != nil {
		return nil, fmt.Errorf("catcma: decode: %w", err)
	}
	return o, nil
}

func unmarshal(blob []byte) (*CatCMA, error) {
	r, err := binenc.NewReader(blob, stateMagic, stateVersion)
	if err != nil {
		return nil, err
	}
	sp, lambda, err := decodeSpace(r)
	if err != nil {
		return nil, err
	}
	p, err := newParams(sp, lambda)
	if err != nil {
		return nil, err
	}
	o := &CatCMA{Space: sp, Params: p, grid: newGrid(sp.Z)}
	writeC, err := o.decodeState(r)
	if err != nil {
		return nil, err
	}
	if err := o.decodeBatch(r); err != nil {
		return nil, err
	}
	if err := r.Done(); err != nil {
		return nil, err
	}
	s := &o.State
	if s.Generation < 0 {
		return nil, fmt.Errorf("generation %d", s.Generation)
	}
	if n := p.NMi; n > 0 && !writeC {
		s.C = make([]float64, n*n)
		o.rebuildC(s.C)
	}
	o.rnd = rand.New(&s.RNG)
	return o, nil
}

// decodeSpace reads the search space and λ.
func decodeSpace(r *binenc.Reader) (Space, int, error) {
	var sp Space
	nx := r.Int()
	if nx < 0 || nx > r.Remaining()/16 {
		return sp, 0, fmt.Errorf("%d continuous coordinates exceed the blob", nx)
	}
	for range nx {
		sp.X = append(sp.X, [2]float64{r.Float(), r.Float()})
	}
	nz := r.Int()
	if nz < 0 || nz > r.Remaining()/8 {
		return sp, 0, fmt.Errorf("%d integer variables exceed the blob", nz)
	}
	for range nz {
		sp.Z = append(sp.Z, r.Floats())
	}
	sp.C = r.Ints()
	lambda := r.Int()
	if err := r.Err(); err != nil {
		return sp, 0, err
	}
	if err := sp.validate(); err != nil {
		return sp, 0, err
	}
	for i, row := range sp.Z {
		if !slices.IsSorted(row) {
			return sp, 0, fmt.Errorf("space.z[%d] is not sorted", i)
		}
	}
	if lambda < 2 || lambda > r.Remaining() {
		return sp, 0, fmt.Errorf("lambda %d", lambda)
	}
	return sp, lambda, nil
}

// decodeState reads the distribution's state; it reports whether C was
// written (else it is rebuilt from B and D).
func (o *CatCMA) decodeState(r *binenc.Reader) (bool, error) {
	s := &o.State
	s.Generation = r.Int()
	s.Mean = r.Floats()
	s.Sigma = r.Float()
	s.Sigma0 = r.Float()
	s.B = r.Floats()
	s.D = r.Floats()
	writeC := r.Bool()
	if writeC {
		s.C = r.Floats()
	}
	s.PSigma = r.Floats()
	s.PC = r.Floats()
	s.A = r.Floats()
	s.PMut = r.Floats()
	nb := count(r, 1)
	for range nb {
		s.IntSucc = append(s.IntSucc, r.Bool())
	}
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
	if err := s.RNG.UnmarshalBinary(r.Bytes()); err != nil && r.Err() == nil {
		return false, fmt.Errorf("random stream: %w", err)
	}
	if err := r.Err(); err != nil {
		return false, err
	}
	return writeC, o.checkShapes(writeC, nb, nq)
}

// decodeBatch reads the pending batch: per candidate its continuous and
// integer coordinates and its categories.
func (o *CatCMA) decodeBatch(r *binenc.Reader) error {
	p, s := o.Params, &o.State
	n, lambda := p.NMi, p.Lambda
	s.V, s.Cat = make([][]float64, lambda), make([][]int, lambda)
	for k := range lambda {
		if n > 0 {
			s.V[k] = r.Floats()
			if r.Err() == nil && len(s.V[k]) != n {
				return fmt.Errorf("batch row %d has %d values, want %d", k, len(s.V[k]), n)
			}
		}
		if p.NCa > 0 {
			s.Cat[k] = r.Ints()
			if r.Err() == nil && !validCats(s.Cat[k], p.K) {
				return fmt.Errorf("batch row %d: categories %v out of %v", k, s.Cat[k], p.K)
			}
		}
	}
	return nil
}

func validCats(c []int, k []int) bool {
	if len(c) != len(k) {
		return false
	}
	for i, v := range c {
		if v < 0 || v >= k[i] {
			return false
		}
	}
	return true
}

// checkShapes checks the decoded slices' lengths against the space.
func (o *CatCMA) checkShapes(writeC bool, nb, nq int) error {
	p, s := o.Params, &o.State
	n := p.NMi
	want := func(name string, got, w int) error {
		if got != w {
			return fmt.Errorf("%s has %d values, want %d", name, got, w)
		}
		return nil
	}
	nn := n * n
	gn, ft := n, 2*p.FunHistTerm
	if n == 0 {
		ft = 0
	}
	cLen := 0
	if writeC {
		cLen = nn
	}
	checks := []error{
		want("mean", len(s.Mean), gn), want("B", len(s.B), nn), want("D", len(s.D), gn),
		want("C", len(s.C), cLen), want("p_sigma", len(s.PSigma), gn), want("p_c", len(s.PC), gn),
		want("A", len(s.A), gn), want("p_mut", len(s.PMut), p.NIn), want("int_succ", nb, p.NIn),
		want("fun_hist", len(s.FunHist), ft), want("q", nq, p.NCa), want("s", len(s.S), p.ParamSum),
	}
	if n == 0 && writeC {
		checks = append(checks, errors.New("a C written without a Gaussian"))
	}
	if len(s.IQHist) > p.IQHistTerm {
		checks = append(checks, fmt.Errorf("iq_hist has %d values, at most %d", len(s.IQHist), p.IQHistTerm))
	}
	for i, q := range s.Q {
		checks = append(checks, want(fmt.Sprintf("q[%d]", i), len(q), p.K[i]))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
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
