package enginecodec

import (
	"fmt"
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
// first run. The continuations are runEndsHash and selfRunEndsHash on
// −‖x‖² over 1500 generations by that code, through the runs that end on
// tol_up_sigma and the restarts that follow (releasePair;
// SELFCMA_WRITE_FIXTURES=upsigma writes both again).
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

// releaseUpSigma: the fixtures decode with UpSigmaMoved and the scale
// moved in the first run, and continue through runs that end on
// tol_up_sigma, then restarts.
var releaseUpSigma = releasePair{
	name:    "upsigma",
	fixture: releaseUpSigmaFixture, selfFixture: selfReleaseUpSigmaFixture,
	version: versionUpSigma, selfVersion: versionUpSigmaSelf,
	continuation: releaseUpSigmaContinuation, selfContinuation: selfReleaseUpSigmaContinuation,
	f: diverge, gens: 1500,
	fixtureWrong: func(d *cmaes.ES) string {
		if !d.Config().Termination.UpSigmaMoved || !moved(d) {
			return fmt.Sprintf("UpSigmaMoved %t, moved scale %g in run %d; want true, a move in the first run",
				d.Config().Termination.UpSigmaMoved, d.State().RunMovedScale, d.State().Run)
		}
		return ""
	},
	continuedWrong: func(d *cmaes.ES, restarts int) string {
		if restarts < 1 || endedOnUpSigma(d) < 1 {
			return fmt.Sprintf("%d restarts, %d runs ended on tol_up_sigma; want at least 1 and 1", restarts, endedOnUpSigma(d))
		}
		return ""
	},
	states: func(t *testing.T) (*cmaes.ES, *selfcma.ES) { return releaseUpSigmaES(t), releaseSelfUpSigmaES(t) },
}

// TestReleaseUpSigmaContinues checks the fixtures of cmaes encoding 11 and
// selfcma encoding 14 by releasePair.check.
func TestReleaseUpSigmaContinues(t *testing.T) { releaseUpSigma.check(t) }

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
