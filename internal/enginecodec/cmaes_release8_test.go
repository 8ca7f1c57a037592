package enginecodec

import (
	"bytes"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// testdata/cmaes/encoding8-lazy-n50.state was written by the code that
// introduced state encoding 8 and NumericsLazy (State.EigenT): an active
// CMA-ES with BIPOP restarts, New(Config{X0: [1 … 1] (n = 50), Sigma0:
// 0.5, Lambda: 4, Seed: 23, Active, NumericsLazy}), whose lazy gap is
// about 2.6 updates, told on the ellipsoid until an update that did not
// decompose C after 20 generations: B and D those of an earlier C, so
// written. lazyRelease8Continuation is continueHash(e, 12) by that code.
// SELFCMA_WRITE_FIXTURES=lazy8 writes it again and prints its hash: only
// for this version's fixture, never to make a changed continuation pass.
const (
	lazyRelease8Fixture      = "testdata/cmaes/encoding8-lazy-n50.state"
	lazyRelease8Continuation = "075664e1f941d2ba12202f0728cdc54a8b1f6b4a8bde470a270d2802fd615461"
)

func lazyRelease8ES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, cmaes.Config{X0: constVec(50, 1), Sigma0: 0.5, Lambda: 4, Seed: 23, Active: true,
		Numerics: cmaes.NumericsLazy, Restarts: cmaes.Restarts{BIPOP: true, Max: 2}})
	for g := 0; g < 20 || e.State().EigenT == e.State().T; g++ {
		step(t, e, ellipsoid)
	}
	return e
}

// TestLazyRelease8Continues: the fixture of encoding 8 decodes between two
// decompositions, encodes back to its bytes while 8 is the current
// version, and continues as the code that wrote it did, also after an
// encode and decode of its own.
func TestLazyRelease8Continues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "lazy8" {
		blob, _ := marshal(lazyRelease8ES(t))
		if err := os.WriteFile(lazyRelease8Fixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		e, _ := DecodeCMAES(blob)
		t.Logf("wrote %s (%d bytes); continuation %s", lazyRelease8Fixture, len(blob), continueHash(t, e, 12))
		return
	}
	blob, e := stateFixture(t, lazyRelease8Fixture, versionLazy)
	st := e.State()
	if st.Config.Numerics != cmaes.NumericsLazy || st.DecomposedC || st.EigenT >= st.T {
		t.Fatalf("the fixture: numerics %d, B and D from C %v, EigenT %d, T %d; want %d, false, EigenT < T", st.Config.Numerics, st.DecomposedC, st.EigenT, st.T, cmaes.NumericsLazy)
	}
	if again := encodeAs(e, versionLazy); !bytes.Equal(again, blob) {
		t.Fatal("the fixture does not encode back to its bytes in version 8")
	}
	again, _ := marshal(e)
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*cmaes.ES{e, e2} {
		if got := continueHash(t, d, 12); got != lazyRelease8Continuation {
			t.Fatalf("continuation %s, the writing code's %s", got, lazyRelease8Continuation)
		}
	}
}
