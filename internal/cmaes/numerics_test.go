package cmaes

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"runtime"
	"testing"
)

func TestNumericsConfig(t *testing.T) {
	x0 := uniformX0(1, 5)
	for _, c := range []struct{ in, want int }{{0, NumericsLatest}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {6, 6}} {
		e := mustNew(t, Config{X0: x0, Sigma0: 1, Numerics: c.in})
		if e.Config().Numerics != c.want {
			t.Errorf("Numerics %d: got %d, want %d", c.in, e.Config().Numerics, c.want)
		}
		if d, err := restoreCopy(t, e); err != nil || d.Config().Numerics != c.want {
			t.Errorf("Numerics %d after decoding: %v, %v", c.in, d, err)
		}
	}
	for _, v := range []int{-1, 5, 7} {
		if _, err := New(Config{X0: x0, Sigma0: 1, Numerics: v}); err == nil {
			t.Errorf("Numerics %d accepted", v)
		}
	}
}

// TestNumericsDeterministic checks that a run with the latest numerics
// samples the same points at GOMAXPROCS 1, 2 and 8, at a dimension where
// the eigendecomposition runs in parallel.
func TestNumericsDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want string
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		e := mustNew(t, Config{X0: uniformX0(4, 150), Sigma0: 0.5, Lambda: 20, Seed: 3, Termination: never})
		got := continueHash(t, e, 8)
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("GOMAXPROCS=%d: points differ", procs)
		}
	}
}

// continueHash runs gens generations on the ellipsoid and returns the
// SHA-256 of the bits of every point asked.
func continueHash(tb testing.TB, e *ES, gens int) string {
	tb.Helper()
	h := sha256.New()
	for range gens {
		X := e.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = ellipsoid(x)
			for _, xi := range x {
				h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(xi)))
			}
		}
		if _, err := e.Tell(v); err != nil {
			tb.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
