package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// testdata/cmaes/encoding16-sparebestsmall-n4.state and
// testdata/selfcma/encoding20-sparebestsmall-n4.state were written by the
// code that introduced cmaes encoding 16 and selfcma encoding 20
// (Restarts.SpareBestSmall): spareBestStates(true). The continuations are
// runEndsHash and selfRunEndsHash over 1500 generations by that code
// (SELFCMA_WRITE_FIXTURES=sparebestsmall writes both again). Both differ
// from the continuations of the same states made without the flag (at
// n = 4 few seeds spare a small run within 1500 generations; these do):
// they read the flag decoded (TestSpareBestFixturesNeedTheFlag).
const (
	releaseSpareBestFixture          = "testdata/cmaes/encoding16-sparebestsmall-n4.state"
	releaseSpareBestContinuation     = "1df61ff72a1172affb2eed4029f92995b3f7aab3b3942fa4da02e0522fa75d1b"
	selfReleaseSpareBestFixture      = "testdata/selfcma/encoding20-sparebestsmall-n4.state"
	selfReleaseSpareBestContinuation = "6ce8ead2d32fa9bac6396cb57f3f5a0ac69586b2769f59fe7a80e4ab381818dc"
)

// spareBestStates makes the fixtures' states, with the flag or without:
// a CMA-ES (seed 8) and a self-CMA-ES (seed 3) of tolWorseConfig on
// Rastrigin, told until the fifth generation of their first small run.
func spareBestStates(spare bool) func(*testing.T) (*cmaes.ES, *selfcma.ES) {
	config := func(seed uint64) cmaes.Config {
		c := tolWorseConfig()
		c.Seed, c.Restarts.SpareBestSmall = seed, spare
		return c
	}
	return func(t *testing.T) (*cmaes.ES, *selfcma.ES) {
		e := mustNew(t, config(8))
		untilSmallRunGen5(t, e, func() { step(t, e, rastrigin) })
		e.Ask()
		s := selfMustNew(t, selfcma.Config{CMA: config(3), MinLambda: 40, SNR: true})
		untilSmallRunGen5(t, s.Primary(), func() { selfStep(t, s, rastrigin) })
		s.Ask()
		return e, s
	}
}

var releaseSpareBest = releasePair{
	name:    "sparebestsmall",
	fixture: releaseSpareBestFixture, selfFixture: selfReleaseSpareBestFixture,
	version: versionSpareBestSmall, selfVersion: versionSpareBestSmallSelf,
	continuation: releaseSpareBestContinuation, selfContinuation: selfReleaseSpareBestContinuation,
	f: rastrigin, gens: 1500,
	fixtureWrong: func(d *cmaes.ES) string {
		if !d.Config().Restarts.SpareBestSmall || d.Regime() != cmaes.RegimeSmall {
			return "want SpareBestSmall in a small run"
		}
		return ""
	},
	continuedWrong: func(d *cmaes.ES, _ int) string {
		if !d.Config().Restarts.SpareBestSmall {
			return "SpareBestSmall lost"
		}
		return ""
	},
	states: spareBestStates(true),
}

// TestReleaseSpareBestContinues checks the fixtures of cmaes encoding 16
// and selfcma encoding 20 by releasePair.check.
func TestReleaseSpareBestContinues(t *testing.T) { releaseSpareBest.check(t) }

// The cmaes fixture in the layout of version 15 decodes with the flag
// unset, as every state of then ran, and continues otherwise than the
// fixture; so do the states of both fixtures made without the flag.
func TestSpareBestFixturesNeedTheFlag(t *testing.T) {
	_, e := stateFixture(t, releaseSpareBestFixture, versionSpareBestSmall)
	d, err := DecodeCMAES(encodeAs(e, versionTolWorseDelta))
	if err != nil {
		t.Fatal(err)
	}
	if d.Config().Restarts.SpareBestSmall {
		t.Fatal("a version-15 state decoded with SpareBestSmall")
	}
	if h, _ := runEndsHash(t, d, releaseSpareBest.gens, rastrigin); h == releaseSpareBestContinuation {
		t.Fatal("the version-15 state continues as the fixture: the fixture cannot tell the flag")
	}
	e, s := spareBestStates(false)(t)
	if h, _ := runEndsHash(t, e, releaseSpareBest.gens, rastrigin); h == releaseSpareBestContinuation {
		t.Error("cmaes: the state made without the flag continues as the fixture")
	}
	if h, _ := selfRunEndsHash(t, s, releaseSpareBest.gens, rastrigin); h == selfReleaseSpareBestContinuation {
		t.Error("selfcma: the state made without the flag continues as the fixture")
	}
}
