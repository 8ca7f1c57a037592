package cmaes

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
)

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

// numerics1State is testdata/numerics1-n40.state: written by the code
// before numerics versions (state encoding 1, commit b8986da) after 30
// generations of New(Config{X0: uniformX0(3, 40), Sigma0: 0.5, Lambda: 10,
// Seed: 7}) on the ellipsoid; numerics1Continuation is continueHash(e, 20)
// by that same code.
const numerics1Continuation = "76b5805ffab624227e7c854c8d93b115b87a2cbd057575eb4bd3a4f143f14f71"

// TestUpgradeKeepsNumerics1 checks that an ES encoded before numerics
// versions existed decodes with NumericsDsyev and continues bit for bit
// as the old code did, also through an encoding by the new code, and that
// the latest numerics would have sampled other points (so the test sees a
// wrong version).
func TestUpgradeKeepsNumerics1(t *testing.T) {
	blob, err := os.ReadFile("testdata/numerics1-n40.state")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Unmarshal(blob)
	if err != nil {
		t.Fatal(err)
	}
	if e.Config().Numerics != NumericsDsyev {
		t.Fatalf("numerics %d, want %d", e.Config().Numerics, NumericsDsyev)
	}
	again, err := e.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, e, 20); got != numerics1Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, numerics1Continuation)
	}
	e2, err := Unmarshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Config().Numerics != NumericsDsyev {
		t.Fatalf("re-encoded: numerics %d", e2.Config().Numerics)
	}
	if got := continueHash(t, e2, 20); got != numerics1Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, numerics1Continuation)
	}
	e3, _ := Unmarshal(blob)
	e3.s.Config.Numerics = NumericsLatest
	if got := continueHash(t, e3, 20); got == numerics1Continuation {
		t.Fatal("the latest numerics continue the same: the fixture does not tell versions apart")
	}
}

// numerics2State is testdata/numerics2-n40.state: written by the code of
// commit 0e9253e (numerics version 2 the latest) after 30 generations of
// New(Config{X0: uniformX0(3, 40), Sigma0: 0.5, Lambda: 10, Seed: 7}) on
// the ellipsoid; numerics2Continuation is continueHash(e, 20) by that same
// code.
const numerics2Continuation = "2f7da3300e58b293bf63ca321da51c1376ba2951f3d0f0e339c86a4ab001bf6c"

// TestUpgradeKeepsNumerics2 checks that an ES of numerics version 2,
// written before version 3 existed, decodes with NumericsBlocked and
// continues bit for bit as the old code did, also through an encoding by
// the new code, and that the latest numerics would have sampled other
// points (n = 40 is above the order where versions 2 and 3 agree).
func TestUpgradeKeepsNumerics2(t *testing.T) {
	blob, err := os.ReadFile("testdata/numerics2-n40.state")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Unmarshal(blob)
	if err != nil {
		t.Fatal(err)
	}
	if e.Config().Numerics != NumericsBlocked {
		t.Fatalf("numerics %d, want %d", e.Config().Numerics, NumericsBlocked)
	}
	again, err := e.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, e, 20); got != numerics2Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, numerics2Continuation)
	}
	e2, err := Unmarshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Config().Numerics != NumericsBlocked {
		t.Fatalf("re-encoded: numerics %d", e2.Config().Numerics)
	}
	if got := continueHash(t, e2, 20); got != numerics2Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, numerics2Continuation)
	}
	e3, _ := Unmarshal(blob)
	e3.s.Config.Numerics = NumericsLatest
	if got := continueHash(t, e3, 20); got == numerics2Continuation {
		t.Fatal("the latest numerics continue the same: the fixture does not tell versions apart")
	}
}

func TestNumericsConfig(t *testing.T) {
	x0 := uniformX0(1, 5)
	for _, c := range []struct{ in, want int }{{0, NumericsLatest}, {1, 1}, {2, 2}, {3, 3}} {
		e := mustNew(t, Config{X0: x0, Sigma0: 1, Numerics: c.in})
		if e.Config().Numerics != c.want {
			t.Errorf("Numerics %d: got %d, want %d", c.in, e.Config().Numerics, c.want)
		}
		blob, _ := e.MarshalBinary()
		if d, err := Unmarshal(blob); err != nil || d.Config().Numerics != c.want {
			t.Errorf("Numerics %d after decoding: %v, %v", c.in, d, err)
		}
	}
	for _, v := range []int{-1, 4} {
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

// TestDecodeRejectsNumerics checks that a blob naming no known numerics
// version (in version 6 the last field before the checksum) does not
// decode.
func TestDecodeRejectsNumerics(t *testing.T) {
	e := mustNew(t, Config{X0: uniformX0(1, 3), Sigma0: 1})
	blob := encodeAs(e, versionStepDerived)
	for _, v := range []int64{0, 4, -1} {
		bad := append([]byte(nil), blob...)
		binary.LittleEndian.PutUint64(bad[len(bad)-12:], uint64(v))
		if _, err := Unmarshal(binenc.Reseal(bad)); err == nil {
			t.Errorf("numerics %d decoded", v)
		}
	}
	good := append([]byte(nil), blob...)
	binary.LittleEndian.PutUint64(good[len(good)-12:], uint64(NumericsDsyev))
	if d, err := Unmarshal(binenc.Reseal(good)); err != nil || d.Config().Numerics != NumericsDsyev {
		t.Errorf("numerics %d: %v", NumericsDsyev, err)
	}
}
