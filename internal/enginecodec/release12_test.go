package enginecodec

import (
	"os"
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
// continuations are mirroredHash and selfMirroredHash over 1500
// generations by that code, through the first run's end and the restarts,
// small (mirrored) and large (every point drawn). SELFCMA_WRITE_FIXTURES=mirrored writes both
// again and prints the hashes: only for these versions' fixtures, never to
// make a changed continuation pass.
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

// TestReleaseMirroredContinues checks that the fixtures of cmaes encoding
// 12 and selfcma encoding 15 decode with MirroredFirstRun and a mirrored
// batch pending, encode back to their bytes while those are the current
// versions, and continue as the code that wrote them did (the first run's
// end, then restarts), also encoded again and decoded.
func TestReleaseMirroredContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "mirrored" {
		writeMirroredFixtures(t)
		return
	}
	blob, e := stateFixture(t, releaseMirroredFixture, versionMirrored)
	sblob, s := selfStateFixture(t, selfReleaseMirroredFixture, versionMirroredSelf)
	for _, d := range []*cmaes.ES{e, s.Primary()} {
		if c := d.Config(); !c.MirroredFirstRun || !c.MirroredSmallRuns || d.State().Run != 0 || !mirroredPending(d) {
			t.Fatalf("the fixture: mirrored first run %t, small runs %t, in run %d, batch mirrored %t; want true, true, 0, true",
				c.MirroredFirstRun, c.MirroredSmallRuns, d.State().Run, mirroredPending(d))
		}
	}
	if again, _ := marshal(e); cmaesVersion == versionMirrored && string(again) != string(blob) {
		t.Fatal("the cmaes fixture does not encode back to its bytes")
	}
	if again, _ := marshalSelf(s); selfcmaVersion == versionMirroredSelf && string(again) != string(sblob) {
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
		if got, restarts := runEndsHash(t, d, 1500, rastrigin); got != releaseMirroredContinuation || !smallAndLarge(d) {
			t.Fatalf("cmaes: continuation %s through %d restarts (small and large: %t), the writing code's %s", got, restarts, smallAndLarge(d), releaseMirroredContinuation)
		}
	}
	for _, d := range []*selfcma.ES{s, s2} {
		if got, restarts := selfRunEndsHash(t, d, 1500, rastrigin); got != selfReleaseMirroredContinuation || !smallAndLarge(d.Primary()) {
			t.Fatalf("selfcma: continuation %s through %d restarts (small and large: %t), the writing code's %s", got, restarts, smallAndLarge(d.Primary()), selfReleaseMirroredContinuation)
		}
	}
}

func writeMirroredFixtures(t *testing.T) {
	if cmaesVersion != versionMirrored || selfcmaVersion != versionMirroredSelf {
		t.Fatalf("the fixtures of versions %d and %d are written by the code of those versions", versionMirrored, versionMirroredSelf)
	}
	blob, _ := marshal(releaseMirroredES(t))
	sblob, _ := marshalSelf(releaseSelfMirroredES(t))
	for path, b := range map[string][]byte{releaseMirroredFixture: blob, selfReleaseMirroredFixture: sblob} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := DecodeCMAES(blob)
	s, _ := DecodeSelfCMA(sblob)
	h, r := runEndsHash(t, e, 1500, rastrigin)
	sh, sr := selfRunEndsHash(t, s, 1500, rastrigin)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts", releaseMirroredFixture, len(blob), h, r)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts", selfReleaseMirroredFixture, len(sblob), sh, sr)
}

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
