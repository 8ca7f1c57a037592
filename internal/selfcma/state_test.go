package selfcma

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// cloneState is a deep copy of st.
func cloneState(st *State) *State {
	c := *st
	c.Primary, c.Aux = st.Primary.Clone(), st.Aux.Clone()
	if st.Prev != nil {
		c.Prev = new(cmaes.Step)
		c.Prev.CopyFrom(st.Prev)
	}
	return &c
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
			ba, _ := a.MarshalBinary()
			bb, _ := b.MarshalBinary()
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
			ba, _ = a.MarshalBinary()
			bb, _ = b.MarshalBinary()
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
