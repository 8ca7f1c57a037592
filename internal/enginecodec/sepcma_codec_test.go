package enginecodec

import (
	"bytes"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/sepcma"
)

func appendSep(tb testing.TB, e *sepcma.ES) []byte {
	tb.Helper()
	s := e.State()
	blob, err := AppendSepCMA(nil, &s)
	if err != nil {
		tb.Fatal(err)
	}
	return blob
}

// TestSepCMAEncoding: along a BIPOP run with bounds, uniform restart
// points and an injected point (every field of version 2), each
// generation's state decodes to a state that encodes to the same bytes and
// restores (internal/sepcma's tests check that a restored ES continues as
// the original); the ES decoded last continues as the original.
func TestSepCMAEncoding(t *testing.T) {
	box := &cmaes.Bounds{Lower: constVec(5, -5), Upper: constVec(5, 5)}
	e, err := sepcma.New(sepcma.Config{X0: constVec(5, 3), Sigma0: 2, Seed: 9, Bounds: box,
		Restarts:    cmaes.Restarts{BIPOP: true, Max: 2, Point: cmaes.RestartPoint{Uniform: true}},
		Termination: cmaes.Termination{MaxEvaluations: 6000}})
	if err != nil {
		t.Fatal(err)
	}
	var d *sepcma.ES
	var f []float64
	for g := 0; len(e.Stopped()) == 0; g++ {
		if g == 3 {
			if err := e.Inject([][]float64{constVec(5, 0.5)}, true); err != nil {
				t.Fatal(err)
			}
		}
		blob := appendSep(t, e)
		s, err := DecodeSepCMAState(blob)
		if err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		if again, _ := AppendSepCMA(nil, &s); !bytes.Equal(again, blob) {
			t.Fatalf("generation %d: the decoded state encodes otherwise", g)
		}
		if d, err = DecodeSepCMA(blob); err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		x := e.Ask()
		f = make([]float64, len(x))
		for k := range x {
			f[k] = rastrigin(x[k])
		}
		if _, err := e.Tell(f); err != nil {
			t.Fatal(err)
		}
	}
	if e.Run() < 2 {
		t.Errorf("%d restarts: the test does not cover them", e.Run())
	}
	// d is the state before the last tell: told the same, it ends as e.
	d.Ask()
	if _, err := d.Tell(f); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reasonNames(d.Stopped()), reasonNames(e.Stopped())) || !bytes.Equal(appendSep(t, d), appendSep(t, e)) {
		t.Error("the ES decoded before the last generation does not end as the original")
	}
}

// TestSepCMADecodeRefuses: a flipped byte anywhere, or a truncated
// encoding, is an error, not a state.
func TestSepCMADecodeRefuses(t *testing.T) {
	e, _ := sepcma.New(sepcma.Config{X0: constVec(4, 1), Sigma0: 1})
	blob := appendSep(t, e)
	for i := range blob {
		bad := slices.Clone(blob)
		bad[i] ^= 0x40
		if _, err := DecodeSepCMAState(bad); err == nil {
			t.Fatalf("a flipped byte %d decoded", i)
		}
	}
	if _, err := DecodeSepCMAState(blob[:len(blob)-5]); err == nil {
		t.Error("a truncated encoding decoded")
	}
}

// FuzzDecodeSepCMA: no blob panics the decoder or sepcma.Restore.
func FuzzDecodeSepCMA(f *testing.F) {
	e, _ := sepcma.New(sepcma.Config{X0: constVec(3, 1), Sigma0: 1, Restarts: cmaes.Restarts{BIPOP: true}})
	f.Add(appendSep(f, e))
	x := e.Ask()
	v := make([]float64, len(x))
	for k := range x {
		v[k] = rastrigin(x[k])
	}
	e.Tell(v)
	f.Add(appendSep(f, e))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := DecodeSepCMA(binenc.Reseal(b)); err == nil && len(d.Stopped()) == 0 {
			x := d.Ask()
			d.Tell(make([]float64, len(x)))
		}
	})
}
