package enginecodec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// testdata/cmaes/encoding5-numerics3-n100.state was written by the code that
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

const release5Fixture = "testdata/cmaes/encoding5-numerics3-n100.state"

func release5ES(t *testing.T) *cmaes.ES {
	t.Helper()
	lo, hi := constVec(100, -3), constVec(100, 4)
	e, err := cmaes.New(cmaes.Config{X0: constVec(100, 1), Sigma0: 0.5, Lambda: 12, Seed: 11, Bounds: &cmaes.Bounds{Lower: lo, Upper: hi}})
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
	release6Fixture      = "testdata/cmaes/encoding6-numerics3-n100.state"
	release6Continuation = "4826c95afb0aaf815022fe61f647ece9fa219f92343e01bf8a6b650a5b4cdd6f"
)

// release7Fixture: the same run written by the code that introduced state
// encoding 7 (the block of active CMA-ES and restarts at the end);
// release7Continuation is continueHash(e, 8) by that code.
const (
	release7Fixture      = "testdata/cmaes/encoding7-numerics3-n100.state"
	release7Continuation = "4826c95afb0aaf815022fe61f647ece9fa219f92343e01bf8a6b650a5b4cdd6f"
)

// TestReleaseContinues checks that the fixtures of earlier releases decode,
// encode back in their own version to their bytes, and continue as the
// code that wrote them did. SELFCMA_WRITE_FIXTURES=1 writes the fixture of
// the current encoding (only when it is new).
func TestReleaseContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "1" {
		if cmaesVersion != versionRestarts {
			t.Fatalf("the fixtures of version %d are written by the code of that version, not %d", versionRestarts, cmaesVersion)
		}
		blob, err := marshal(release5ES(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(release7Fixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		e, _ := DecodeCMAES(blob)
		t.Logf("wrote %s (%d bytes); continuation %s", release7Fixture, len(blob), continueHash(t, e, 8))
		return
	}
	for _, f := range []struct {
		version            uint32
		path, continuation string
	}{
		{versionRecompute, release5Fixture, release5Continuation},
		{versionStepDerived, release6Fixture, release6Continuation},
		{versionRestarts, release7Fixture, release7Continuation},
	} {
		t.Run(f.path, func(t *testing.T) {
			blob, e := stateFixture(t, f.path, f.version)
			if e.Config().Numerics != cmaes.NumericsDC || !e.State().DecomposedC || !resampled(e.State()) {
				t.Fatalf("the fixture: numerics %d, B and D from C %v, batch sampled again %v; want %d, true, true", e.Config().Numerics, e.State().DecomposedC, resampled(e.State()), cmaes.NumericsDC)
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

// testdata/cmaes/encoding7-bipop-n4.state was written by the code that
// introduced state encoding 7, in the middle of a small BIPOP run:
// release7BIPOPES. release7BIPOPContinuation is restartHash(e, 300) by
// that code, through the restarts that follow. SELFCMA_WRITE_FIXTURES=1
// writes it again and prints the hash: only for a new release's fixture.
const (
	release7BIPOPFixture      = "testdata/cmaes/encoding7-bipop-n4.state"
	release7BIPOPContinuation = "e9b210228b3bb6c980dcf4517dd260eda2758514179a68877d634b259d136abd"
)

// release7BIPOPES is BIPOP with at most 4 large restarts, uniform restart
// points in [0, 3]⁴ inside the bounds [−2, 5]⁴ and TolX 10⁻³, on
// Rastrigin from X0 = (1, 1, 1, 1), σ0 = 1, seed 19, told until the third
// generation of a small run that follows a large one.
func release7BIPOPES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, cmaes.Config{X0: constVec(4, 1), Sigma0: 1, Seed: 19, Bounds: &cmaes.Bounds{Lower: constVec(4, -2), Upper: constVec(4, 5)},
		Restarts:    cmaes.Restarts{BIPOP: true, Max: 4, Point: cmaes.RestartPoint{Uniform: true, Region: &cmaes.Bounds{Lower: constVec(4, 0), Upper: constVec(4, 3)}}},
		Termination: cmaes.Termination{TolX: 1e-3}})
	for g := 0; ; g++ {
		if g > 5000 || e.Stopped() != nil {
			t.Fatal("no small run after a large one")
		}
		step(t, e, rastrigin)
		if e.Regime() == cmaes.RegimeSmall && largeRuns(e) > 0 && e.State().T == 3 {
			return e
		}
	}
}

// runHash runs at most gens generations on f and returns the SHA-256 of
// the bits of every point asked, of each generation's λ and regime (and
// stop reasons, with stops), and the restarts it went through.
func runHash(tb testing.TB, e *cmaes.ES, gens int, f func([]float64) float64, stops bool) (string, int) {
	tb.Helper()
	h := sha256.New()
	restarts := hashSteps(tb, h, e.Ask, e.Tell, func() bool { return e.Stopped() != nil }, gens, f, stops)
	return hex.EncodeToString(h.Sum(nil)), restarts
}

// hashSteps runs at most gens generations of an ES (ask, tell, stopped)
// on f, writing runHash's bytes into h, and returns the restarts.
func hashSteps(tb testing.TB, h hash.Hash, ask func() [][]float64, tell func([]float64) (cmaes.Record, error),
	stopped func() bool, gens int, f func([]float64) float64, stops bool) int {
	tb.Helper()
	restarts := 0
	for range gens {
		if stopped() {
			break
		}
		X := ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = f(x)
			for _, xi := range x {
				h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(xi)))
			}
		}
		rec, err := tell(v)
		if err != nil {
			tb.Fatal(err)
		}
		if stops {
			fmt.Fprintf(h, "%d %s %v;", rec.Lambda, rec.Regime, rec.Stop)
		} else {
			fmt.Fprintf(h, "%d %s;", rec.Lambda, rec.Regime)
		}
		if rec.Restarted {
			restarts++
		}
	}
	return restarts
}

// restartHash is runHash on Rastrigin.
func restartHash(tb testing.TB, e *cmaes.ES, gens int) (string, int) {
	tb.Helper()
	return runHash(tb, e, gens, rastrigin, false)
}

// TestReleaseBIPOPContinues checks that the BIPOP fixture of encoding 7
// decodes, encodes back to its bytes, and continues through its restarts
// as the code that wrote it did, also encoded again and decoded.
func TestReleaseBIPOPContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "1" {
		if cmaesVersion != versionRestarts {
			t.Fatalf("the fixtures of version %d are written by the code of that version, not %d", versionRestarts, cmaesVersion)
		}
		blob, err := marshal(release7BIPOPES(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(release7BIPOPFixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		e, _ := DecodeCMAES(blob)
		got, restarts := restartHash(t, e, 300)
		t.Logf("wrote %s (%d bytes); continuation %s through %d restarts", release7BIPOPFixture, len(blob), got, restarts)
		return
	}
	blob, e := stateFixture(t, release7BIPOPFixture, versionRestarts)
	if e.Regime() != cmaes.RegimeSmall || e.State().RunSigma0 == e.Config().Sigma0 || e.State().GenLimit == 0 || !e.Config().Restarts.Point.Uniform {
		t.Fatalf("the fixture: regime %s, run σ0 %v, limit %d, restart points %+v; want a small run", e.Regime(), e.State().RunSigma0, e.State().GenLimit, e.Config().Restarts.Point)
	}
	if again := encodeAs(e, versionRestarts); !bytes.Equal(again, blob) {
		t.Fatal("the fixture does not encode back to its bytes in version 7")
	}
	again, _ := marshal(e)
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*cmaes.ES{e, e2} {
		got, restarts := restartHash(t, d, 300)
		if got != release7BIPOPContinuation || restarts < 2 {
			t.Fatalf("continuation %s through %d restarts, the writing code's %s", got, restarts, release7BIPOPContinuation)
		}
	}
}
