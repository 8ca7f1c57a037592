package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// testdata/cmaes/encoding15-tolworsedelta-n4.state and
// testdata/selfcma/encoding19-tolworsedelta-n4.state were written by the
// code that introduced cmaes encoding 15 and selfcma encoding 19
// (Termination.TolWorseDelta): tolWorseConfig with seed 1 and δ = 0.03,
// on Rastrigin, told until the fifth generation of its first small run.
// The continuations are runEndsHash and selfRunEndsHash over 1500
// generations by that code, through runs that end on tol_worse
// (releasePair; SELFCMA_WRITE_FIXTURES=tolworsedelta writes both again).
// Both differ from the continuations with δ = 10^-3, the default (at n = 4
// on Rastrigin δ = 3·10^-4 changes no run of seeds 1 to 40): they read
// the δ decoded.
const (
	releaseTolWorseDeltaFixture          = "testdata/cmaes/encoding15-tolworsedelta-n4.state"
	releaseTolWorseDeltaContinuation     = "a26fd1cde2df236fa4d85db5a958bddb8d5425605ab74bd3957926c9df136722"
	selfReleaseTolWorseDeltaFixture      = "testdata/selfcma/encoding19-tolworsedelta-n4.state"
	selfReleaseTolWorseDeltaContinuation = "8283ce8da24cdc3ad269ae95184d28d14bd7f475969f56bc246c3051b2ec0c92"
)

func tolWorseDeltaConfig() cmaes.Config {
	c := tolWorseConfig()
	c.Seed, c.Termination.TolWorseDelta = 1, 0.03
	return c
}

var releaseTolWorseDelta = releasePair{
	name:    "tolworsedelta",
	fixture: releaseTolWorseDeltaFixture, selfFixture: selfReleaseTolWorseDeltaFixture,
	version: versionTolWorseDelta, selfVersion: versionTolWorseDeltaSelf,
	continuation: releaseTolWorseDeltaContinuation, selfContinuation: selfReleaseTolWorseDeltaContinuation,
	f: rastrigin, gens: 1500,
	fixtureWrong: func(d *cmaes.ES) string {
		if d.Config().Termination.TolWorseDelta != 0.03 || d.Regime() != cmaes.RegimeSmall || d.State().RunStartF == 0 {
			return "want TolWorseDelta 0.03 in a small run with its first generation's best"
		}
		return ""
	},
	continuedWrong: noRunEndedOnTolWorse,
	states:         tolWorseStates(tolWorseDeltaConfig),
}

// TestReleaseTolWorseDeltaContinues checks the fixtures of cmaes encoding
// 15 and selfcma encoding 19 by releasePair.check.
func TestReleaseTolWorseDeltaContinues(t *testing.T) { releaseTolWorseDelta.check(t) }

// A state of version 14 decodes with no δ set (cmaes's default, 10^-3, as
// it ran) and TolWorse kept, whatever the ES had; the current version
// keeps both.
func TestVersion14DecodesWithDefaultDelta(t *testing.T) {
	checkTerminationByVersion(t, tolWorseDeltaConfig(), versionTolWorse, func(t cmaes.Termination) [2]float64 { return [2]float64{t.TolWorse, t.TolWorseDelta} },
		[2]float64{0.3, 0.03}, [2]float64{0.3, 0})
}
