package enginecodec

import (
	"fmt"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// testdata/cmaes/encoding12-mirrored-n4.state and
// testdata/selfcma/encoding15-mirrored-n4.state were written by the code
// that introduced cmaes encoding 12 and selfcma encoding 15
// (Config.MirroredFirstRun, MirroredSmallRuns): NBIPOP, active, with
// mirrored sampling in the first run and in the small runs, on Rastrigin from X0 = (3, 3, 3, 3), σ0 = 2, seed 53, told 25
// generations of the first run, a mirrored batch pending (the self-CMA-ES
// below its gate, by the signal-to-noise rule, as a new session's). The
// continuations are runEndsHash and selfRunEndsHash on Rastrigin over
// 1500 generations by that code, through the first run's end and the
// restarts, small (mirrored) and large (every point drawn) (releasePair;
// SELFCMA_WRITE_FIXTURES=mirrored writes both again).
const (
	releaseMirroredFixture          = "testdata/cmaes/encoding12-mirrored-n4.state"
	releaseMirroredContinuation     = "126702037e633d628fde385fab7200477d15316d00fad25da8471195cc4803e6"
	selfReleaseMirroredFixture      = "testdata/selfcma/encoding15-mirrored-n4.state"
	selfReleaseMirroredContinuation = "012ef3a89c3aca3064449f450c90c89a36a50450f50a306530f41d6edf29caef"
)

func mirroredConfig() cmaes.Config {
	return cmaes.Config{X0: constVec(4, 3), Sigma0: 2, Seed: 53, Active: true, MirroredFirstRun: true, MirroredSmallRuns: true,
		Termination: cmaes.Termination{FlatFitness: true, UpSigmaMoved: true},
		Restarts:    cmaes.Restarts{BIPOP: true, Max: 3, SigmaDec: 1.6, Budget: 2}}
}

func releaseMirroredES(t *testing.T) *cmaes.ES {
	t.Helper()
	e := mustNew(t, mirroredConfig())
	for range 25 {
		step(t, e, rastrigin)
	}
	e.Ask() // the next batch, mirrored, pending
	if e.State().Run != 0 || e.Stopped() != nil {
		t.Fatal("the first run ended within 25 generations")
	}
	return e
}

func releaseSelfMirroredES(t *testing.T) *selfcma.ES {
	t.Helper()
	s := selfMustNew(t, selfcma.Config{CMA: mirroredConfig(), MinLambda: 40, SNR: true})
	for range 25 {
		selfStep(t, s, rastrigin)
	}
	s.Ask()
	if s.Primary().State().Run != 0 || s.Primary().Stopped() != nil {
		t.Fatal("the first run ended within 25 generations")
	}
	return s
}

// mirroredPending reports whether e's pending batch is mirrored about the
// mean (testfn.MirroredPairs).
func mirroredPending(e *cmaes.ES) bool {
	X := e.Ask()
	return len(X) >= 2 && testfn.MirroredPairs(X, e.Mean())
}

// smallAndLarge reports whether e has ended a small run and a large one.
func smallAndLarge(e *cmaes.ES) bool {
	var small, large bool
	for _, r := range e.RunEnds() {
		small = small || r.Regime == cmaes.RegimeSmall
		large = large || r.Regime == cmaes.RegimeLarge
	}
	return small && large
}

// releaseMirrored: the fixtures decode with both mirror flags, in the
// first run with a mirrored batch pending, and continue through the first
// run's end and restarts, small and large.
var releaseMirrored = releasePair{
	name:    "mirrored",
	fixture: releaseMirroredFixture, selfFixture: selfReleaseMirroredFixture,
	version: versionMirrored, selfVersion: versionMirroredSelf,
	continuation: releaseMirroredContinuation, selfContinuation: selfReleaseMirroredContinuation,
	f: rastrigin, gens: 1500,
	fixtureWrong: func(d *cmaes.ES) string {
		if c := d.Config(); !c.MirroredFirstRun || !c.MirroredSmallRuns || d.State().Run != 0 || !mirroredPending(d) {
			return fmt.Sprintf("mirrored first run %t, small runs %t, in run %d, batch mirrored %t; want true, true, 0, true",
				c.MirroredFirstRun, c.MirroredSmallRuns, d.State().Run, mirroredPending(d))
		}
		return ""
	},
	continuedWrong: func(d *cmaes.ES, _ int) string {
		if !smallAndLarge(d) {
			return "no small run and large run ended"
		}
		return ""
	},
	states: func(t *testing.T) (*cmaes.ES, *selfcma.ES) { return releaseMirroredES(t), releaseSelfMirroredES(t) },
}

// TestReleaseMirroredContinues checks the fixtures of cmaes encoding 12
// and selfcma encoding 15 by releasePair.check.
func TestReleaseMirroredContinues(t *testing.T) { releaseMirrored.check(t) }

// A state of version 11 (selfcma 14) decodes with MirroredFirstRun and
// MirroredSmallRuns false, whatever the ES had: they are version 12's.
// (Written in a large run: with a mirrored batch pending, version 11's
// decoder samples another batch and refuses the state as foreign.)
func TestVersion11DecodesUnmirrored(t *testing.T) {
	e := mustNew(t, mirroredConfig())
	for g := 0; e.Regime() != cmaes.RegimeLarge; g++ {
		if g > 5000 {
			t.Fatal("no large run within 5000 generations")
		}
		step(t, e, rastrigin)
	}
	if _, err := DecodeCMAES(encodeAs(releaseMirroredES(t), versionUpSigma)); err == nil {
		t.Error("a version-11 blob of a mirrored pending batch decoded")
	}
	d, err := DecodeCMAES(encodeAs(e, versionUpSigma))
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Config(); c.MirroredFirstRun || c.MirroredSmallRuns {
		t.Fatal("a version-11 state decoded mirrored")
	}
	cur, _ := marshal(e)
	if d, err = DecodeCMAES(cur); err != nil || !d.Config().MirroredFirstRun || !d.Config().MirroredSmallRuns {
		t.Fatalf("the current version: decoded %v, %v; want both flags", d != nil && d.Config().MirroredFirstRun, err)
	}
}
