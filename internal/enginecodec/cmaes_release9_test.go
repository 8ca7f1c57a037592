package enginecodec

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// testdata/cmaes/encoding9-flatfitness-n4.state was written by the code
// that introduced state encoding 9 (Termination.FlatFitness): BIPOP with
// pycma's tolflatfitness on the step sphere from X0 = (1, 1, 1, 1), σ0 =
// 1, seed 23, told until the second generation of the first run after one
// that tolflatfitness ended, the last of them flat. releaseFlatContinuation is
// stepHash(e, 300) by that code, through the restarts that follow.
// SELFCMA_WRITE_FIXTURES=flat writes it again and prints the hash: only
// for this version's fixture, never to make a changed continuation pass.
const (
	releaseFlatFixture      = "testdata/cmaes/encoding9-flatfitness-n4.state"
	releaseFlatContinuation = "02af19fd92a672b80e1b9e1c3aa39f6eee29c78c2b59bb58da0cbc6d3a434b3c"
)

// stepSphere is Σ ⌊2x_i⌋²: plateaus, flat generations near its optimum.
func stepSphere(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += math.Floor(2*v) * math.Floor(2*v)
	}
	return s
}

func releaseFlatES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, cmaes.Config{X0: constVec(4, 1), Sigma0: 1, Seed: 23,
		Restarts:    cmaes.Restarts{BIPOP: true, Max: 4},
		Termination: cmaes.Termination{FlatFitness: true}})
	for g := 0; ; g++ {
		if g > 5000 || e.Stopped() != nil {
			t.Fatal("no run after one that tolflatfitness ended")
		}
		step(t, e, stepSphere)
		ends := e.RunEnds()
		if len(ends) > 0 && ends[len(ends)-1].Reasons[0].Name == cmaes.StopTolFlatFitness && e.State().FlatN > 0 {
			return e
		}
	}
}

// stepHash is runHash on the step sphere, with each generation's stop
// reasons.
func stepHash(tb testing.TB, e *cmaes.ES, gens int) (string, int) {
	tb.Helper()
	return runHash(tb, e, gens, stepSphere, true)
}

// TestReleaseFlatFitnessContinues checks that the fixture of encoding 9
// decodes with FlatFitness, encodes back to its bytes in version 9, and
// continues through its restarts as the code that wrote it did, also
// encoded again and decoded.
func TestReleaseFlatFitnessContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "flat" {
		if cmaesVersion != versionFlatFitness {
			t.Fatalf("the fixture of version %d is written by the code of that version, not %d", versionFlatFitness, cmaesVersion)
		}
		blob, _ := marshal(releaseFlatES(t))
		if err := os.WriteFile(releaseFlatFixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		e, _ := DecodeCMAES(blob)
		got, restarts := stepHash(t, e, 300)
		t.Logf("wrote %s (%d bytes); continuation %s through %d restarts", releaseFlatFixture, len(blob), got, restarts)
		return
	}
	blob, e := stateFixture(t, releaseFlatFixture, versionFlatFitness)
	if !e.Config().Termination.FlatFitness || e.State().FlatN == 0 {
		t.Fatalf("the fixture: FlatFitness %v, flat generations %d; want true and some", e.Config().Termination.FlatFitness, e.State().FlatN)
	}
	if again := encodeAs(e, versionFlatFitness); !bytes.Equal(again, blob) {
		t.Fatal("the fixture does not encode back to its bytes in version 9")
	}
	again, _ := marshal(e)
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*cmaes.ES{e, e2} {
		got, restarts := stepHash(t, d, 300)
		if got != releaseFlatContinuation || restarts < 1 {
			t.Fatalf("continuation %s through %d restarts, the writing code's %s", got, restarts, releaseFlatContinuation)
		}
	}
}

// A state of version 7 or 8 decodes with FlatFitness false, whatever the
// ES had: the flag is version 9's.
func TestVersion7DecodesWithoutFlatFitness(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: constVec(4, 1), Sigma0: 1, Seed: 23, Termination: cmaes.Termination{FlatFitness: true}})
	for range 3 {
		step(t, e, stepSphere)
	}
	for _, v := range []uint32{versionRestarts, versionLazy} {
		d, err := DecodeCMAES(encodeAs(e, v))
		if err != nil {
			t.Fatal(err)
		}
		if d.Config().Termination.FlatFitness {
			t.Fatalf("a version-%d state decoded with FlatFitness", v)
		}
	}
	cur, _ := marshal(e)
	if d, err := DecodeCMAES(cur); err != nil || !d.Config().Termination.FlatFitness {
		t.Fatalf("the current version: FlatFitness lost (%v)", err)
	}
}
