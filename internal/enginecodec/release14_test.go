package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// testdata/cmaes/encoding14-tolworse-n4.state and
// testdata/selfcma/encoding18-tolworse-n4.state were written by the code
// that introduced cmaes encoding 14 and selfcma encoding 18
// (Termination.TolWorse, State.RunStartF): meanRateConfig's NBIPOP with
// TolWorse 0.3, on Rastrigin, told until the fifth generation of its first
// small run. The continuations are runEndsHash and selfRunEndsHash over
// 1500 generations by that code, through runs that end on tol_worse
// (releasePair; SELFCMA_WRITE_FIXTURES=tolworse writes both again).
const (
	releaseTolWorseFixture          = "testdata/cmaes/encoding14-tolworse-n4.state"
	releaseTolWorseContinuation     = "8ce7be4251aea71d37b82a7b8ed8eb470db6182f927aa3c3446f601f462839f1"
	selfReleaseTolWorseFixture      = "testdata/selfcma/encoding18-tolworse-n4.state"
	selfReleaseTolWorseContinuation = "60114327f05902e5671ae4df88e1c5bb7d3ec7d8835bb8ba2216b6ab6e3a4d25"
)

func tolWorseConfig() cmaes.Config {
	c := meanRateConfig()
	c.Termination.TolWorse = 0.3
	return c
}

// endedOnTolWorse reports whether a run of e ended on tol_worse.
func endedOnTolWorse(e *cmaes.ES) bool {
	for _, r := range e.RunEnds() {
		for _, s := range r.Reasons {
			if s.Name == cmaes.StopTolWorse {
				return true
			}
		}
	}
	return false
}

var releaseTolWorse = releasePair{
	name:    "tolworse",
	fixture: releaseTolWorseFixture, selfFixture: selfReleaseTolWorseFixture,
	version: versionTolWorse, selfVersion: versionTolWorseSelf,
	continuation: releaseTolWorseContinuation, selfContinuation: selfReleaseTolWorseContinuation,
	f: rastrigin, gens: 1500,
	fixtureWrong: func(d *cmaes.ES) string {
		if d.Config().Termination.TolWorse != 0.3 || d.Regime() != cmaes.RegimeSmall || d.State().RunStartF == 0 {
			return "want TolWorse 0.3 in a small run with its first generation's best"
		}
		return ""
	},
	continuedWrong: noRunEndedOnTolWorse,
	states:         tolWorseStates(tolWorseConfig),
}

// noRunEndedOnTolWorse is continuedWrong of the tol_worse fixtures.
func noRunEndedOnTolWorse(d *cmaes.ES, _ int) string {
	if !endedOnTolWorse(d) {
		return "no run ended on tol_worse"
	}
	return ""
}

// tolWorseStates makes the tol_worse fixtures' states: a CMA-ES and a
// self-CMA-ES of config on Rastrigin, told until the fifth generation of
// their first small run.
func tolWorseStates(config func() cmaes.Config) func(*testing.T) (*cmaes.ES, *selfcma.ES) {
	return func(t *testing.T) (*cmaes.ES, *selfcma.ES) {
		e := mustNew(t, config())
		untilSmallRunGen5(t, e, func() { step(t, e, rastrigin) })
		e.Ask()
		s := selfMustNew(t, selfcma.Config{CMA: config(), MinLambda: 40, SNR: true})
		untilSmallRunGen5(t, s.Primary(), func() { selfStep(t, s, rastrigin) })
		s.Ask()
		return e, s
	}
}

// TestReleaseTolWorseContinues checks the fixtures of cmaes encoding 14
// and selfcma encoding 18 by releasePair.check.
func TestReleaseTolWorseContinues(t *testing.T) { releaseTolWorse.check(t) }

// A state of version 13 decodes with TolWorse off, whatever the ES had;
// the current version keeps it.
func TestVersion13DecodesWithoutTolWorse(t *testing.T) {
	checkTerminationByVersion(t, tolWorseConfig(), versionMeanRate, func(t cmaes.Termination) [2]float64 { return [2]float64{t.TolWorse} },
		[2]float64{0.3}, [2]float64{0})
}

// checkTerminationByVersion checks the termination fields field picks of
// an ES of config told 30 generations on Rastrigin: want after the
// current version's encoding, wantOld after old's.
func checkTerminationByVersion(t *testing.T, config cmaes.Config, old uint32, field func(cmaes.Termination) [2]float64, want, wantOld [2]float64) {
	t.Helper()
	e := mustNew(t, config)
	for range 30 {
		step(t, e, rastrigin)
	}
	cur, _ := marshal(e)
	for _, c := range []struct {
		version uint32
		blob    []byte
		want    [2]float64
	}{{cmaesVersion, cur, want}, {old, encodeAs(e, old), wantOld}} {
		d, err := DecodeCMAES(c.blob)
		if err != nil {
			t.Fatal(err)
		}
		if got := field(d.Config().Termination); got != c.want {
			t.Errorf("a version-%d state decoded with %v, want %v", c.version, got, c.want)
		}
	}
}
