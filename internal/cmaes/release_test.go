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

// release6Fixture: the same run written by the code that introduced state
// encoding 6 (a kept Step may stand for C; a plain ES writes C and one
// flag more). release6Continuation is continueHash(e, 8) by that code.
const (
	release6Fixture      = "testdata/encoding6-numerics3-n100.state"
	release6Continuation = "4826c95afb0aaf815022fe61f647ece9fa219f92343e01bf8a6b650a5b4cdd6f"
)

// TestReleaseContinues checks that the fixtures of earlier releases decode,
// encode back in their own version to their bytes, and continue as the
// code that wrote them did. SELFCMA_WRITE_FIXTURES=1 writes the fixture of
// the current encoding (only when it is new).
func TestReleaseContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "1" {
		blob, err := release5ES(t).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(release6Fixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		e, _ := Unmarshal(blob)
		t.Logf("wrote %s (%d bytes); continuation %s", release6Fixture, len(blob), continueHash(t, e, 8))
		return
	}
	for _, f := range []struct {
		version            uint32
		path, continuation string
	}{
		{versionRecompute, release5Fixture, release5Continuation},
		{versionStepDerived, release6Fixture, release6Continuation},
	} {
		t.Run(f.path, func(t *testing.T) {
			blob, e := stateFixture(t, f.path, f.version)
			if e.Numerics() != NumericsDC || !e.bdFromC || !e.resampled() {
				t.Fatalf("the fixture: numerics %d, B and D from C %v, batch sampled again %v; want %d, true, true", e.Numerics(), e.bdFromC, e.resampled(), NumericsDC)
			}
			if again := encodeAs(e, f.version); string(again) != string(blob) {
				t.Fatalf("the fixture does not encode back to its bytes in version %d", f.version)
			}
			if got := continueHash(t, e, 8); got != f.continuation {
				t.Fatalf("continuation %s, the writing code's %s", got, f.continuation)
			}
		})
	}
}
