package enginecodec

import (
	"fmt"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/constraints"
)

// The encoding of a constraints.AL (the augmented Lagrangian of a
// constrained session): a tag, a schema version, n and m, the State's
// fields in their declared order, a CRC-32.
//
//   - Version 1 (internal/constraints' own codec, before it moved here):
//     n, m, then the State.
const (
	alMagic   = "selfcma/constraints"
	alVersion = 1
)

// AppendAL appends the encoding of a to dst.
func AppendAL(dst []byte, a *constraints.AL) []byte {
	s := &a.State
	w := binenc.NewWriterTo(slices.Grow(dst, 8*a.Params.M*(len(s.GHistory)+7)+64), alMagic, alVersion)
	w.Int(a.Params.N)
	w.Int(a.Params.M)
	w.Bool(s.Set)
	w.Floats(s.Lam)
	w.Floats(s.Mu)
	w.Bools(s.Initialized)
	w.Int(s.Count)
	w.Bool(s.PenCounted)
	w.Ints(s.PenCount)
	w.Bool(s.HavePrev)
	w.Float(s.PrevF)
	w.Floats(s.PrevG)
	w.Int(len(s.GHistory))
	for _, row := range s.GHistory {
		w.Floats(row)
	}
	w.Bool(s.SameChanges != nil)
	w.Ints(s.SameChanges)
	return w.Finish()
}

// DecodeAL decodes an augmented Lagrangian written by AppendAL and
// restores it (constraints.Restore checks its shapes).
func DecodeAL(blob []byte) (*constraints.AL, error) {
	a, err := decodeAL(blob)
	if err != nil {
		return nil, fmt.Errorf("constraints: decode: %w", err)
	}
	return a, nil
}

func decodeAL(blob []byte) (*constraints.AL, error) {
	r, err := binenc.NewReader(blob, alMagic, alVersion)
	if err != nil {
		return nil, err
	}
	n, m := r.Int(), r.Int()
	if err := r.Err(); err != nil {
		return nil, err
	}
	if m > r.Remaining() {
		return nil, fmt.Errorf("%d constraints exceed the blob", m)
	}
	p, err := constraints.NewParams(n, m)
	if err != nil {
		return nil, err
	}
	var s constraints.State
	s.Set = r.Bool()
	s.Lam = r.Floats()
	s.Mu = r.Floats()
	s.Initialized = r.Bools()
	s.Count = r.Int()
	s.PenCounted = r.Bool()
	s.PenCount = r.Ints()
	s.HavePrev = r.Bool()
	s.PrevF = r.Float()
	s.PrevG = r.Floats()
	h := r.Int()
	if r.Err() == nil && (h < 0 || h > p.HistoryLen) {
		return nil, fmt.Errorf("g history of %d rows, at most %d", h, p.HistoryLen)
	}
	for range h {
		s.GHistory = append(s.GHistory, r.Floats())
	}
	hasSame := r.Bool()
	s.SameChanges = r.Ints()
	if err := r.Done(); err != nil {
		return nil, err
	}
	if !hasSame {
		s.SameChanges = nil
	}
	return constraints.Restore(n, m, s)
}
