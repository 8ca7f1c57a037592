package enginecodec

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/constraints"
)

// alIteration tells a a generation of six values that move with k: the
// multipliers set, then updated, the history filling past its length, μ
// changing the same way in a row.
func alIteration(a *constraints.AL, k int) {
	f := make([]float64, 6)
	g := make([][]float64, 6)
	for i := range f {
		v := math.Sin(float64(3*k+i)) + 1/float64(k+1)
		f[i] = v * v * float64(i+1)
		g[i] = make([]float64, a.Params.M)
		for j := range g[i] {
			g[i][j] = v - 0.3*float64(j) + 0.01*float64(i)
		}
	}
	a.Tell(f, g)
}

// TestALEncoding: after every iteration of a run, the AL decodes to one
// that encodes to the same bytes and continues as the original (the next
// two iterations, bit for bit); a truncated encoding is an error.
func TestALEncoding(t *testing.T) {
	a, err := constraints.New(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	var last []byte
	for k := range 60 {
		blob := AppendAL(nil, a)
		d, err := DecodeAL(blob)
		if err != nil {
			t.Fatalf("iteration %d: %v", k, err)
		}
		if again := AppendAL(nil, d); !bytes.Equal(again, blob) {
			t.Fatalf("iteration %d: the decoded AL encodes otherwise", k)
		}
		c := *a
		c.State = cloneALState(a.State)
		for j := range 2 {
			alIteration(&c, k+j)
			alIteration(d, k+j)
		}
		if !bytes.Equal(AppendAL(nil, &c), AppendAL(nil, d)) {
			t.Fatalf("iteration %d: the decoded AL continues otherwise", k)
		}
		alIteration(a, k)
		last = blob
	}
	if s := a.State; !s.Set || s.SameChanges == nil || len(s.GHistory) != a.Params.HistoryLen {
		t.Fatalf("the run does not cover the state: set %v, same changes %v, %d of %d history rows", s.Set, s.SameChanges, len(s.GHistory), a.Params.HistoryLen)
	}
	if _, err := DecodeAL(last[:len(last)-5]); err == nil {
		t.Error("a truncated encoding decoded")
	}
}

func cloneALState(s constraints.State) constraints.State {
	c := s
	c.Lam, c.Mu, c.Initialized = slices.Clone(s.Lam), slices.Clone(s.Mu), slices.Clone(s.Initialized)
	c.PenCount, c.PrevG, c.SameChanges = slices.Clone(s.PenCount), slices.Clone(s.PrevG), slices.Clone(s.SameChanges)
	c.GHistory = make([][]float64, len(s.GHistory))
	for i, row := range s.GHistory {
		c.GHistory[i] = slices.Clone(row)
	}
	return c
}

// FuzzDecodeAL: no blob panics the decoder, a decoded AL encodes stably,
// and it can be told.
func FuzzDecodeAL(f *testing.F) {
	a, _ := constraints.New(4, 2)
	for k := range 12 {
		alIteration(a, k)
	}
	f.Add(AppendAL(nil, a))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAL(binenc.Reseal(b))
		if err != nil {
			return
		}
		once := AppendAL(nil, a)
		a2, err := DecodeAL(once)
		if err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
		if !bytes.Equal(once, AppendAL(nil, a2)) {
			t.Fatal("encoding is not stable")
		}
		g := make([][]float64, 3)
		for i := range g {
			g[i] = make([]float64, a.Params.M)
		}
		a.Tell([]float64{1, 2, 3}, g)
	})
}
