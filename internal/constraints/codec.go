package constraints

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/binenc"
)

// The encoding: a tag, a schema version, n and m, the State's fields in
// their declared order, a CRC-32 (internal/binenc). Bump stateVersion with
// any change of the layout and keep every older version decoding as before.
//
//   - Version 1: n, m, then State.
const (
	stateMagic   = "selfcma/constraints"
	stateVersion = 1
)

// MarshalBinary encodes the augmented Lagrangian exactly.
func (a *AL) MarshalBinary() ([]byte, error) {
	s := &a.State
	w := binenc.NewWriterSize(stateMagic, stateVersion, 8*a.Params.M*(len(s.GHistory)+7)+64)
	w.Int(a.Params.N)
	w.Int(a.Params.M)
	w.Bool(s.Set)
	w.Floats(s.Lam)
	w.Floats(s.Mu)
	w.Int(len(s.Initialized))
	for _, b := range s.Initialized {
		w.Bool(b)
	}
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
	return w.Finish(), nil
}

// Unmarshal decodes an augmented Lagrangian encoded by MarshalBinary.
func Unmarshal(blob []byte) (*AL, error) {
	r, err := binenc.NewReader(blob, stateMagic, stateVersion)
	if err != nil {
		return nil, fmt.Errorf("constraints: decode: %w", err)
	}
	n, m := r.Int(), r.Int()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("constraints: decode: %w", err)
	}
	if m > r.Remaining() {
		return nil, fmt.Errorf("constraints: decode: %d constraints exceed the blob", m)
	}
	a, err := New(n, m)
	if err != nil {
		return nil, fmt.Errorf("constraints: decode: %w", err)
	}
	s := &a.State
	s.Set = r.Bool()
	s.Lam = r.Floats()
	s.Mu = r.Floats()
	k := r.Int()
	if r.Err() == nil && (k < 0 || k > r.Remaining()) {
		return nil, fmt.Errorf("constraints: decode: %d flags exceed the blob", k)
	}
	for range k {
		s.Initialized = append(s.Initialized, r.Bool())
	}
	s.Count = r.Int()
	s.PenCounted = r.Bool()
	s.PenCount = r.Ints()
	s.HavePrev = r.Bool()
	s.PrevF = r.Float()
	s.PrevG = r.Floats()
	h := r.Int()
	if r.Err() == nil && (h < 0 || h > a.Params.HistoryLen) {
		return nil, fmt.Errorf("constraints: decode: g history of %d rows, at most %d", h, a.Params.HistoryLen)
	}
	for range h {
		s.GHistory = append(s.GHistory, r.Floats())
	}
	hasSame := r.Bool()
	s.SameChanges = r.Ints()
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("constraints: decode: %w", err)
	}
	if !hasSame {
		s.SameChanges = nil
	}
	if err := a.checkShapes(); err != nil {
		return nil, fmt.Errorf("constraints: decode: %w", err)
	}
	return a, nil
}

func (a *AL) checkShapes() error {
	s, m := &a.State, a.Params.M
	coef := 0
	if s.Set {
		coef = m
	}
	pen := 0
	if s.PenCounted {
		pen = m
	}
	prev := 0
	if s.HavePrev {
		prev = m
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"lam", len(s.Lam), coef}, {"mu", len(s.Mu), coef}, {"initialized", len(s.Initialized), coef},
		{"pen_count", len(s.PenCount), pen}, {"prev_g", len(s.PrevG), prev},
	} {
		if c.got != c.want {
			return fmt.Errorf("%s has %d values, want %d", c.name, c.got, c.want)
		}
	}
	if s.SameChanges != nil && len(s.SameChanges) != m {
		return fmt.Errorf("same_changes has %d values, want %d", len(s.SameChanges), m)
	}
	for i, row := range s.GHistory {
		if len(row) != m {
			return fmt.Errorf("g history row %d has %d values, want %d", i, len(row), m)
		}
	}
	return nil
}

// MemoryBytes returns about how many bytes the augmented Lagrangian holds:
// its coefficients and the history of n + 20 constraint vectors.
func (a *AL) MemoryBytes() int {
	m := a.Params.M
	return 8*(m*(a.Params.HistoryLen+7)) + 256
}
