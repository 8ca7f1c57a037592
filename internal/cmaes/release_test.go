package cmaes

import (
	"os"
	"testing"
)

// testdata/encoding5-numerics3-n100.state was written by the code that
// introduced state encoding 5 and numerics version 3 (divide and conquer
// above n = 96), so that later code keeps continuing it bit for bit: 30
// generations on the ellipsoid of New(Config{X0: constVec(100, 1),
// Sigma0: 0.5, Lambda: 12, Seed: 11, Bounds: [−3, 4]¹⁰⁰}), a point
// injected at generation 3 (constVec(100, 0.5), its step clipped) and one
// waiting (constVec(100, −0.25)). release5Continuation is continueHash(e,
// 8) by that same code. SELFCMA_WRITE_FIXTURES=1 writes the fixture again
// and prints its hash: only for a new release's fixture, never to make a
// changed continuation pass.
const release5Continuation = "4826c95afb0aaf815022fe61f647ece9fa219f92343e01bf8a6b650a5b4cdd6f"

const release5Fixture = "testdata/encoding5-numerics3-n100.state"

func release5ES(t *testing.T) *ES {
	t.Helper()
	lo, hi := constVec(100, -3), constVec(100, 4)
	e, err := New(Config{X0: constVec(100, 1), Sigma0: 0.5, Lambda: 12, Seed: 11, Bounds: &Bounds{Lower: lo, Upper: hi}})
	if err != nil {
		t.Fatal(err)
	}
	for g := range 30 {
		if g == 3 {
			if err := e.Inject([][]float64{constVec(100, 0.5)}, true); err != nil {
				t.Fatal(err)
			}
		}
		step(t, e, ellipsoid)
	}
	if err := e.Inject([][]float64{constVec(100, -0.25)}, false); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRelease5Continues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "1" {
		blob, err := release5ES(t).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(release5Fixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		e, _ := Unmarshal(blob)
		t.Logf("wrote %s (%d bytes); continuation %s", release5Fixture, len(blob), continueHash(t, e, 8))
		return
	}
	blob, e := stateFixture(t, release5Fixture, 5)
	if e.Numerics() != NumericsDC || !e.bdFromC || !e.resampled() {
		t.Fatalf("the fixture: numerics %d, B and D from C %v, batch sampled again %v; want %d, true, true", e.Numerics(), e.bdFromC, e.resampled(), NumericsDC)
	}
	if again, _ := e.MarshalBinary(); string(again) != string(blob) {
		t.Fatal("the fixture does not encode back to its bytes")
	}
	if got := continueHash(t, e, 8); got != release5Continuation {
		t.Fatalf("continuation %s, the writing code's %s", got, release5Continuation)
	}
}
