package selfcma

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/exactbits"
	"gonum.org/v1/gonum/mat"
)

// cloneState is a deep copy of st.
func cloneState(st *State) *State {
	c := *st
	c.Primary, c.Aux = st.Primary.Clone(), st.Aux.Clone()
	if st.Prev != nil {
		c.Prev = new(cmaes.Step)
		c.Prev.CopyFrom(st.Prev)
	}
	if st.SNRRule != nil {
		r := *st.SNRRule
		r.E = slices.Clone(r.E)
		c.SNRRule = &r
	}
	return &c
}

// stateBits is s's State with every float64 as its bits (exactbits): equal
// for two self-CMA-ES exactly when they are the same state.
func stateBits(tb testing.TB, s *ES) []byte {
	tb.Helper()
	return exactbits.JSON(tb, exactbits.Of(s.State()))
}

// restoreCopy restores a self-CMA-ES from a copy of s's State with the
// derived parts of both CMA-ES left out where cmaes.Restore recomputes
// them, as the stored form leaves them out.
func restoreCopy(tb testing.TB, s *ES) (*ES, error) {
	tb.Helper()
	st := cloneState(s.State())
	for _, es := range []*cmaes.State{st.Primary, st.Aux} {
		if es.DecomposedC {
			es.B, es.D = nil, nil
		}
		if es.BatchDrawn {
			es.Batch, es.Rand = nil, es.BatchRand
		}
	}
	return Restore(st)
}

// A self-CMA-ES restored from a copy of its State continues bit for bit
// beside the original, in a run that self-adapts (a kept step).
func TestRestoreContinues(t *testing.T) {
	a, err := New(Config{CMA: cmaes.Config{X0: []float64{1, 2, 3}, Sigma0: 0.5, Lambda: 30, Seed: 4}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	tell := func(e *ES, f []float64) {
		if _, err := e.Tell(f); err != nil {
			t.Fatal(err)
		}
	}
	for g := range 40 {
		if g%10 == 9 {
			if a.State().Prev == nil {
				t.Fatalf("generation %d: no kept step in a run that self-adapts", g)
			}
			b, err := Restore(cloneState(a.State()))
			if err != nil {
				t.Fatalf("generation %d: %v", g, err)
			}
			ba, bb := stateBits(t, a), stateBits(t, b)
			if !bytes.Equal(ba, bb) {
				t.Fatalf("generation %d: the restored state encodes differently", g)
			}
			// Both go on with the same values.
			f := make([]float64, 30)
			for i := range f {
				f[i] = r.Float64()
			}
			tell(a, f)
			tell(b, f)
			ba, bb = stateBits(t, a), stateBits(t, b)
			if !bytes.Equal(ba, bb) {
				t.Fatalf("generation %d: the restored self-CMA-ES went on differently", g)
			}
			a = b
			continue
		}
		f := make([]float64, 30)
		for i := range f {
			f[i] = r.Float64()
		}
		tell(a, f)
	}
}

// Restore refuses a State whose parts do not fit together.
func TestRestoreRefuses(t *testing.T) {
	e, err := New(Config{CMA: cmaes.Config{X0: []float64{1, 2}, Sigma0: 1, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New(Config{CMA: cmaes.Config{X0: []float64{1, 2, 3, 4}, Sigma0: 1, Seed: 1}})
	for name, mutate := range map[string]func(*State){
		"init":       func(s *State) { s.Init = "bogus" },
		"min lambda": func(s *State) { s.MinLambda = 0 },
		"auxiliary":  func(s *State) { s.Aux = other.State().Primary.Clone() },
		"primary":    func(s *State) { s.Primary.Sigma = 0 },
	} {
		st := cloneState(e.State())
		mutate(st)
		if _, err := Restore(st); !errors.Is(err, ErrInvalidState) {
			t.Errorf("%s: %v, want ErrInvalidState", name, err)
		}
	}
}

// sameRows reports whether two lists of points have the same bits.
func sameRows(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !exactbits.Same(a[k], b[k]) {
			return false
		}
	}
	return true
}

// sameUpperBits reports whether a and b have the same upper triangle, bit
// for bit.
func sameUpperBits(a, b *mat.SymDense) bool {
	ra, rb := a.RawSymmetric(), b.RawSymmetric()
	if ra.N != rb.N {
		return false
	}
	for i := range ra.N {
		for j := i; j < ra.N; j++ {
			if math.Float64bits(ra.Data[i*ra.Stride+j]) != math.Float64bits(rb.Data[i*rb.Stride+j]) {
				return false
			}
		}
	}
	return true
}

// twin is a state restored from another's, told the same values for left
// more generations.
type twin struct {
	es   *ES
	left int
}
