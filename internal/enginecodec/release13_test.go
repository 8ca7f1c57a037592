package enginecodec

import (
	"fmt"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// testdata/cmaes/encoding13-meanrate-n4.state and
// testdata/selfcma/encoding17-meanrate-n4.state were written by the code
// that introduced cmaes encoding 13 and selfcma encoding 17 (the mean's
// learning rate in restarts, cmaes's meanrate.go): mirroredConfig's NBIPOP
// with MeanRateSmallRuns and MeanRateLargeRuns, on Rastrigin, told until
// the fifth generation of its first small run, whose rule is running (η_m,
// V and E in the state). The continuations are runEndsHash and
// selfRunEndsHash over 1500 generations by that code, through more small
// and large runs (releasePair; SELFCMA_WRITE_FIXTURES=meanrate writes both
// again).
const (
	releaseMeanRateFixture          = "testdata/cmaes/encoding13-meanrate-n4.state"
	releaseMeanRateContinuation     = "e10f255a411f8b9cee1682619b5644cc7d76f8bf70167c727aafc07ab4bf677d"
	selfReleaseMeanRateFixture      = "testdata/selfcma/encoding17-meanrate-n4.state"
	selfReleaseMeanRateContinuation = "9dae081f6e1ecec4c2e3f78de727e81d684e795a90f01d5a2d3993491000516c"
)

func meanRateConfig() cmaes.Config {
	c := mirroredConfig()
	c.MeanRateSmallRuns, c.MeanRateLargeRuns = true, true
	return c
}

// untilSmallRunGen5 steps until the fifth generation of the first small run.
func untilSmallRunGen5(t *testing.T, e *cmaes.ES, tell func()) {
	t.Helper()
	for g := 0; e.Regime() != cmaes.RegimeSmall || e.State().T < 5; g++ {
		if g > 5000 || e.Stopped() != nil {
			t.Fatal("no fifth generation of a small run within 5000 generations")
		}
		tell()
	}
}

func releaseMeanRateES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, meanRateConfig())
	untilSmallRunGen5(t, e, func() { step(t, e, rastrigin) })
	e.Ask()
	return e
}

func releaseSelfMeanRateES(t *testing.T) *selfcma.ES {
	t.Helper()
	s := selfMustNew(t, selfcma.Config{CMA: meanRateConfig(), MinLambda: 40, SNR: true})
	untilSmallRunGen5(t, s.Primary(), func() { selfStep(t, s, rastrigin) })
	s.Ask()
	return s
}

// ruleRunning says what is wrong with d as the fixtures hold it: in a
// small run with the rule's state, η_m below 1 (it has moved).
func ruleRunning(d *cmaes.ES) string {
	c, st := d.Config(), d.State()
	if !c.MeanRateSmallRuns || !c.MeanRateLargeRuns || d.Regime() != cmaes.RegimeSmall || st.MeanRate == nil || !(st.MeanRate.Eta < 1) {
		return fmt.Sprintf("mean rate in small runs %t, large %t, regime %s, rule %+v; want true, true, small, η_m < 1",
			c.MeanRateSmallRuns, c.MeanRateLargeRuns, d.Regime(), st.MeanRate)
	}
	return ""
}

var releaseMeanRate = releasePair{
	name:    "meanrate",
	fixture: releaseMeanRateFixture, selfFixture: selfReleaseMeanRateFixture,
	version: versionMeanRate, selfVersion: versionMeanRateSelf,
	continuation: releaseMeanRateContinuation, selfContinuation: selfReleaseMeanRateContinuation,
	f: rastrigin, gens: 1500,
	fixtureWrong: ruleRunning,
	continuedWrong: func(d *cmaes.ES, _ int) string {
		if !smallAndLarge(d) {
			return "no small run and large run ended"
		}
		return ""
	},
	states: func(t *testing.T) (*cmaes.ES, *selfcma.ES) { return releaseMeanRateES(t), releaseSelfMeanRateES(t) },
}

// TestReleaseMeanRateContinues checks the fixtures of cmaes encoding 13
// and selfcma encoding 17 by releasePair.check.
func TestReleaseMeanRateContinues(t *testing.T) { releaseMeanRate.check(t) }

// A state of version 12 decodes with the mean's rate off and no rule,
// whatever the ES had; the current version keeps both.
func TestVersion12DecodesWithoutMeanRate(t *testing.T) {
	e := mustNew(t, meanRateConfig())
	for g := 0; e.Regime() != cmaes.RegimeLarge; g++ {
		if g > 5000 {
			t.Fatal("no large run within 5000 generations")
		}
		step(t, e, rastrigin)
	}
	if e.State().MeanRate == nil {
		t.Fatal("a large run of MeanRateLargeRuns has no rule")
	}
	cur, _ := marshal(e)
	d, err := DecodeCMAES(cur)
	if err != nil {
		t.Fatal(err)
	}
	if r, r0 := d.State().MeanRate, e.State().MeanRate; r == nil || r.Eta != r0.Eta || r.V != r0.V {
		t.Fatalf("the current version: rule %+v, want %+v", r, r0)
	}
	plain := mustNew(t, mirroredConfig())
	for range 30 {
		step(t, plain, rastrigin)
	}
	old, err := DecodeCMAES(encodeAs(plain, versionMirrored))
	if err != nil {
		t.Fatal(err)
	}
	if c := old.Config(); c.MeanRateSmallRuns || c.MeanRateLargeRuns || c.MeanRateAlpha != 0 || old.State().MeanRate != nil {
		t.Fatalf("a version-12 state decoded with the mean's rate: %+v", c)
	}
}
