package enginecodec

import (
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// testdata/cmaes/encoding11-upsigma-n4.state and
// testdata/selfcma/encoding14-upsigma-n4.state were written by the code
// that introduced cmaes encoding 11 and selfcma encoding 14
// (Termination.UpSigmaMoved, State.RunMovedScale): NBIPOP with
// UpSigmaMoved and without ConditionCov (which the self-adapted rates
// reach first) on the diverging −‖x‖² from X0 = (1, 1, 1, 1), σ0 = 1,
// seed 47, told until the σ safeguard has moved the scale into C in the
// first run. The continuations are upSigmaHash and
// selfUpSigmaHash over 1500 generations by that code, through the runs
// that end on tol_up_sigma and the restarts that follow.
// SELFCMA_WRITE_FIXTURES=upsigma writes both again and prints the hashes:
// only for these versions' fixtures, never to make a changed continuation
// pass.
const (
	releaseUpSigmaFixture          = "testdata/cmaes/encoding11-upsigma-n4.state"
	releaseUpSigmaContinuation     = "15bd3448b2b36debd91908113c52863fc9693a02c91a59fdd82c14a418e8a715"
	selfReleaseUpSigmaFixture      = "testdata/selfcma/encoding14-upsigma-n4.state"
	selfReleaseUpSigmaContinuation = "0931b9845f135dd4eab32efb01773ae7a026a214a688c681427dd0d4be5d9bfc"
)

func diverge(x []float64) float64 {
	var s float64
	for _, v := range x {
		s -= v * v
	}
	return s
}

func upSigmaConfig() cmaes.Config {
	return cmaes.Config{X0: constVec(4, 1), Sigma0: 1, Seed: 47, Active: true,
		Termination: cmaes.Termination{UpSigmaMoved: true, ConditionCov: -1},
		Restarts:    cmaes.Restarts{BIPOP: true, Max: 4, SigmaDec: 1.6, Budget: 2}}
}

// moved reports whether the safeguard has moved the scale in e's first
// run, which goes on.
func moved(e *cmaes.ES) bool {
	st := e.State()
	return st.Run == 0 && st.RunMovedScale > 0 && e.Stopped() == nil
}

func releaseUpSigmaES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, upSigmaConfig())
	for g := 0; !moved(e); g++ {
		if g > 5000 || e.State().Run > 0 {
			t.Fatal("no move in the first run")
		}
		step(t, e, diverge)
	}
	return e
}

func releaseSelfUpSigmaES(t *testing.T) *selfcma.ES {
	t.Helper()
	s := selfMustNew(t, selfcma.Config{CMA: upSigmaConfig(), MinLambda: selfcma.EveryLambda, AdaptRestarts: true})
	for g := 0; !moved(s.Primary()); g++ {
		if g > 5000 || s.Primary().State().Run > 0 {
			t.Fatal("no move in the first run")
		}
		selfStep(t, s, diverge)
	}
	return s
}

// upSigmaHash is runEndsHash on −‖x‖².
func upSigmaHash(tb testing.TB, e *cmaes.ES, gens int) (string, int) {
	return runEndsHash(tb, e, gens, diverge)
}

// selfUpSigmaHash is selfRunEndsHash on −‖x‖².
func selfUpSigmaHash(tb testing.TB, s *selfcma.ES, gens int) (string, int) {
	return selfRunEndsHash(tb, s, gens, diverge)
}

// endedOnUpSigma counts the runs of e that ended on tol_up_sigma.
func endedOnUpSigma(e *cmaes.ES) int {
	k := 0
	for _, r := range e.RunEnds() {
		if _, ok := hasReason(r.Reasons, cmaes.StopTolUpSigma); ok {
			k++
		}
	}
	return k
}

// TestReleaseUpSigmaContinues checks that the fixtures of cmaes encoding
// 11 and selfcma encoding 14 decode with UpSigmaMoved and the scale moved,
// encode back to their bytes while those are the current versions, and
// continue as the code that wrote them did (runs ending on tol_up_sigma,
// then restarts), also encoded again and decoded.
func TestReleaseUpSigmaContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "upsigma" {
		writeUpSigmaFixtures(t)
		return
	}
	blob, e := stateFixture(t, releaseUpSigmaFixture, versionUpSigma)
	sblob, s := selfStateFixture(t, selfReleaseUpSigmaFixture, versionUpSigmaSelf)
	for _, d := range []*cmaes.ES{e, s.Primary()} {
		if !d.Config().Termination.UpSigmaMoved || !moved(d) {
			t.Fatalf("the fixture: UpSigmaMoved %t, moved scale %g in run %d; want true, a move in the first run",
				d.Config().Termination.UpSigmaMoved, d.State().RunMovedScale, d.State().Run)
		}
	}
	if again, _ := marshal(e); cmaesVersion == versionUpSigma && string(again) != string(blob) {
		t.Fatal("the cmaes fixture does not encode back to its bytes")
	}
	if again, _ := marshalSelf(s); selfcmaVersion == versionUpSigmaSelf && string(again) != string(sblob) {
		t.Fatal("the selfcma fixture does not encode back to its bytes")
	}
	again, _ := marshal(e)
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	sagain, _ := marshalSelf(s)
	s2, err := DecodeSelfCMA(sagain)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*cmaes.ES{e, e2} {
		if got, restarts := upSigmaHash(t, d, 1500); got != releaseUpSigmaContinuation || restarts < 1 || endedOnUpSigma(d) < 1 {
			t.Fatalf("cmaes: continuation %s through %d restarts (%d on tol_up_sigma), the writing code's %s",
				got, restarts, endedOnUpSigma(d), releaseUpSigmaContinuation)
		}
	}
	for _, d := range []*selfcma.ES{s, s2} {
		if got, restarts := selfUpSigmaHash(t, d, 1500); got != selfReleaseUpSigmaContinuation || restarts < 1 || endedOnUpSigma(d.Primary()) < 1 {
			t.Fatalf("selfcma: continuation %s through %d restarts (%d on tol_up_sigma), the writing code's %s",
				got, restarts, endedOnUpSigma(d.Primary()), selfReleaseUpSigmaContinuation)
		}
	}
}

func writeUpSigmaFixtures(t *testing.T) {
	if cmaesVersion != versionUpSigma || selfcmaVersion != versionUpSigmaSelf {
		t.Fatalf("the fixtures of versions %d and %d are written by the code of those versions", versionUpSigma, versionUpSigmaSelf)
	}
	blob, _ := marshal(releaseUpSigmaES(t))
	sblob, _ := marshalSelf(releaseSelfUpSigmaES(t))
	for path, b := range map[string][]byte{releaseUpSigmaFixture: blob, selfReleaseUpSigmaFixture: sblob} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := DecodeCMAES(blob)
	s, _ := DecodeSelfCMA(sblob)
	h, r := upSigmaHash(t, e, 1500)
	sh, sr := selfUpSigmaHash(t, s, 1500)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts, %d on tol_up_sigma", releaseUpSigmaFixture, len(blob), h, r, endedOnUpSigma(e))
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts, %d on tol_up_sigma", selfReleaseUpSigmaFixture, len(sblob), sh, sr, endedOnUpSigma(s.Primary()))
}

// A state of version 10 (selfcma 13) decodes with UpSigmaMoved false and
// no scale moved, whatever the ES had: they are version 11's.
func TestVersion10DecodesWithoutUpSigmaMoved(t *testing.T) {
	e := releaseUpSigmaES(t)
	d, err := DecodeCMAES(encodeAs(e, versionLoshchilov))
	if err != nil {
		t.Fatal(err)
	}
	if st := d.State(); st.Config.Termination.UpSigmaMoved || st.RunMovedScale != 0 {
		t.Fatalf("a version-10 state decoded with UpSigmaMoved %t, moved scale %g; want false, 0", st.Config.Termination.UpSigmaMoved, st.RunMovedScale)
	}
	cur, _ := marshal(e)
	d, err = DecodeCMAES(cur)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.State(); !st.Config.Termination.UpSigmaMoved || st.RunMovedScale != e.State().RunMovedScale {
		t.Fatalf("the current version: UpSigmaMoved %t, moved scale %g; want true, %g", st.Config.Termination.UpSigmaMoved, st.RunMovedScale, e.State().RunMovedScale)
	}
}
