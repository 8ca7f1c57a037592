package enginecodec_test

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/enginecodec"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

// catStep asks, evaluates with f and tells.
func catStep(t testing.TB, o *catcma.CatCMA, f func(x, z []float64, c []int) float64) {
	t.Helper()
	batch := o.Ask()
	vals := make([]float64, len(batch))
	for i, c := range batch {
		vals[i] = f(c.X, c.Z, c.C)
	}
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
}

// TestCatCMARoundTrip: encode, decode, encode gives the same bytes, and the
// decoded optimizer continues exactly as the original, for every kind of
// space, with a termination that stops the run before the end.
func TestCatCMARoundTrip(t *testing.T) {
	spaces := map[string]catcma.Space{
		"mixed":    {X: [][2]float64{{-1, 2}, {math.Inf(-1), math.Inf(1)}}, Z: [][]float64{{0, 1, 2, 3}, {0.01, 0.1, 1}}, C: []int{3, 2}},
		"cont_int": {X: [][2]float64{{-1, 2}}, Z: [][]float64{{-3, -2, -1, 0, 1}}},
		"int_cat":  {Z: [][]float64{{0, 1, 2}}, C: []int{4}},
		"cat":      {C: []int{3, 5}},
		"cont":     {X: [][2]float64{{-1, 2}, {-1, 2}}},
	}
	f := func(x, z []float64, c []int) float64 {
		return mixedfn.SphereIntCOM(x, z, c) + 0.3*float64(len(x))
	}
	for name, sp := range spaces {
		t.Run(name, func(t *testing.T) {
			a, err := catcma.New(catcma.Config{Space: sp, Seed: 11, Termination: catcma.Termination{MaxEvaluations: 200}})
			if err != nil {
				t.Fatal(err)
			}
			for gen := 0; len(a.Stopped()) == 0 || gen == 0; gen++ {
				blob := enginecodec.AppendCatCMA(nil, a)
				b, err := enginecodec.DecodeCatCMA(blob)
				if err != nil {
					t.Fatalf("gen %d: %v", gen, err)
				}
				if again := enginecodec.AppendCatCMA(nil, b); !bytes.Equal(blob, again) {
					t.Fatalf("gen %d: re-encoding differs", gen)
				}
				if mb := a.MemoryBytes(); mb < len(blob)/2 {
					t.Fatalf("gen %d: MemoryBytes %d for a %d-byte state", gen, mb, len(blob))
				}
				catStep(t, a, f)
				catStep(t, b, f)
				if !bytes.Equal(enginecodec.AppendCatCMA(nil, a), enginecodec.AppendCatCMA(nil, b)) {
					t.Fatalf("gen %d: the decoded optimizer diverged", gen)
				}
			}
			b, err := enginecodec.DecodeCatCMA(enginecodec.AppendCatCMA(nil, a))
			if err != nil || !reflect.DeepEqual(b.Stopped(), a.Stopped()) || b.State.Best.F != a.State.Best.F {
				t.Fatalf("stopped run: %v, %v against %v", err, b.Stopped(), a.Stopped())
			}
		})
	}
}

// TestCatCMAVersion1: states that internal/catcma's own codec wrote
// (version 1; the SphereIntCOM generator of testdata/catcma, seed 7,
// generations 25 and 30) decode, and the first continues to the second
// exactly: the same distribution, stream and batch; λ·g evaluations; no
// should_stop, as then.
func TestCatCMAVersion1(t *testing.T) {
	read := func(name string) *catcma.CatCMA {
		b, err := os.ReadFile("testdata/catcma/" + name)
		if err != nil {
			t.Fatal(err)
		}
		o, err := enginecodec.DecodeCatCMA(b)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b := read("v1-gen25.state"), read("v1-gen30.state")
	if a.State.Evaluations != 25*a.Params.Lambda || !a.State.Termination.NoShouldStop {
		t.Errorf("migrated: %d evaluations, termination %+v", a.State.Evaluations, a.State.Termination)
	}
	for range 5 {
		catStep(t, a, mixedfn.SphereIntCOM)
	}
	sa, sb := a.State, b.State
	sa.Best, sa.HasBest = catcma.Best{}, false // tracked since the decode only
	if !reflect.DeepEqual(sa, sb) {
		t.Error("the version-1 state of generation 25 does not continue to that of generation 30")
	}
}

func TestCatCMADecodeRefuses(t *testing.T) {
	o, err := catcma.New(catcma.Config{Space: catcma.Space{X: [][2]float64{{0, 1}}, Z: [][]float64{{0, 1, 2}}, C: []int{3}}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	catStep(t, o, mixedfn.SphereIntCOM)
	blob := enginecodec.AppendCatCMA(nil, o)
	for _, bad := range [][]byte{nil, blob[:len(blob)-1], append(slices.Clone(blob), 0)} {
		if _, err := enginecodec.DecodeCatCMA(bad); err == nil {
			t.Errorf("a %d-byte blob decoded", len(bad))
		}
	}
	flipped := slices.Clone(blob)
	flipped[40] ^= 1
	if _, err := enginecodec.DecodeCatCMA(flipped); err == nil {
		t.Error("a flipped bit decoded")
	}
}

func FuzzDecodeCatCMA(f *testing.F) {
	o, _ := catcma.New(catcma.Config{Space: catcma.Space{X: [][2]float64{{0, 1}}, Z: [][]float64{{0, 1, 2}}, C: []int{3}}})
	catStep(f, o, mixedfn.SphereIntCOM)
	f.Add(enginecodec.AppendCatCMA(nil, o))
	if b, err := os.ReadFile("testdata/catcma/v1-gen25.state"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := enginecodec.DecodeCatCMA(binenc.Reseal(b)) // past the checksum
		if err != nil {
			return
		}
		once := enginecodec.AppendCatCMA(nil, o)
		o2, err := enginecodec.DecodeCatCMA(once)
		if err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
		if twice := enginecodec.AppendCatCMA(nil, o2); !bytes.Equal(once, twice) {
			t.Fatal("encoding is not stable")
		}
		o2.Ask()
		// Whatever the values, a decoded optimizer takes a Tell without
		// panicking.
		o2.Tell(make([]float64, o2.Params.Lambda))
	})
}
