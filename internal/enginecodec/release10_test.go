package enginecodec

import (
	"fmt"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// testdata/cmaes/encoding10-nbipop-n4.state and
// testdata/selfcma/encoding13-nbipop-n4.state were written by the code
// that introduced cmaes encoding 10 and selfcma encoding 13
// (Restarts.SigmaDec and Budget: NBIPOP): NBIPOP (ρ_σdec = 1.6, ρ_budget =
// 2) on Rastrigin from X0 = (3, 3, 3, 3), σ0 = 2, seed 31 (the
// self-CMA-ES self-adapting in every run), told until
// the first small run has started (so after a large run of σ0/1.6). The
// continuations are runEndsHash and selfRunEndsHash on Rastrigin over
// 1500 generations by that code, through the restarts that follow
// (releasePair; SELFCMA_WRITE_FIXTURES=nbipop writes both again).
const (
	releaseNBIPOPFixture          = "testdata/cmaes/encoding10-nbipop-n4.state"
	releaseNBIPOPContinuation     = "6269401dc4c8ba95577f3cdb117bc57fbe5fef5395b2c02ac0947e59dbe350dd"
	selfReleaseNBIPOPFixture      = "testdata/selfcma/encoding13-nbipop-n4.state"
	selfReleaseNBIPOPContinuation = "273f6a309238ff8d9f09c0ad7bd9c6d92ba7467662a496275c1466b48275bffd"
)

func nbipopConfig() cmaes.Config {
	return cmaes.Config{X0: constVec(4, 3), Sigma0: 2, Seed: 31, Active: true,
		Restarts: cmaes.Restarts{BIPOP: true, Max: 6, SigmaDec: 1.6, Budget: 2}}
}

// inSmallRun reports whether e is in a small run after a large one.
func inSmallRun(e *cmaes.ES) bool {
	return e.Regime() == cmaes.RegimeSmall && e.Stopped() == nil
}

func releaseNBIPOPES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, nbipopConfig())
	for g := 0; !inSmallRun(e); g++ {
		if g > 20000 || e.Stopped() != nil {
			t.Fatal("no small run")
		}
		step(t, e, rastrigin)
	}
	return e
}

func releaseSelfNBIPOPES(t *testing.T) *selfcma.ES {
	t.Helper()
	s, err := selfcma.New(selfcma.Config{CMA: nbipopConfig(), MinLambda: selfcma.EveryLambda, AdaptRestarts: true})
	if err != nil {
		t.Fatal(err)
	}
	for g := 0; !inSmallRun(s.Primary()); g++ {
		if g > 20000 || s.Primary().Stopped() != nil {
			t.Fatal("no small run")
		}
		selfStep(t, s, rastrigin)
	}
	return s
}

// releaseNBIPOP: the fixtures decode with SigmaDec and Budget, in a small
// run, and continue through at least two restarts.
var releaseNBIPOP = releasePair{
	name:    "nbipop",
	fixture: releaseNBIPOPFixture, selfFixture: selfReleaseNBIPOPFixture,
	version: versionLoshchilov, selfVersion: versionLoshchilovSelf,
	continuation: releaseNBIPOPContinuation, selfContinuation: selfReleaseNBIPOPContinuation,
	f: rastrigin, gens: 1500,
	fixtureWrong: func(d *cmaes.ES) string {
		if rs := d.Config().Restarts; rs.SigmaDec != 1.6 || rs.Budget != 2 || !rs.BIPOP || d.Regime() != cmaes.RegimeSmall {
			return fmt.Sprintf("restarts %+v, regime %s; want NBIPOP in a small run", rs, d.Regime())
		}
		return ""
	},
	continuedWrong: func(_ *cmaes.ES, restarts int) string {
		if restarts < 2 {
			return fmt.Sprintf("%d restarts, want at least 2", restarts)
		}
		return ""
	},
	states: func(t *testing.T) (*cmaes.ES, *selfcma.ES) { return releaseNBIPOPES(t), releaseSelfNBIPOPES(t) },
}

// TestReleaseNBIPOPContinues checks the NBIPOP fixtures (cmaes encoding
// 10, selfcma encoding 13) by releasePair.check.
func TestReleaseNBIPOPContinues(t *testing.T) { releaseNBIPOP.check(t) }

// A state of version 9 (selfcma 12) decodes with SigmaDec and Budget 0,
// whatever the ES had: they are version 10's.
func TestVersion9DecodesWithoutLoshchilov(t *testing.T) {
	e := mustNew(t, nbipopConfig())
	for range 3 {
		step(t, e, rastrigin)
	}
	d, err := DecodeCMAES(encodeAs(e, versionFlatFitness))
	if err != nil {
		t.Fatal(err)
	}
	if rs := d.Config().Restarts; rs.SigmaDec != 0 || rs.Budget != 0 || !rs.BIPOP {
		t.Fatalf("a version-9 state decoded with restarts %+v, want BIPOP without SigmaDec and Budget", rs)
	}
	cur, _ := marshal(e)
	if d, err := DecodeCMAES(cur); err != nil || d.Config().Restarts != e.Config().Restarts {
		t.Fatalf("the current version: restarts %+v, want %+v (%v)", d.Config().Restarts, e.Config().Restarts, err)
	}
}
