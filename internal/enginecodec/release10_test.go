package enginecodec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
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
// continuations are nbipopHash and selfNBIPOPHash over 1500 generations
// by that code, through the restarts that follow.
// SELFCMA_WRITE_FIXTURES=nbipop writes both again and prints the hashes:
// only for these versions' fixtures, never to make a changed
// continuation pass.
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

// nbipopHash is runEndsHash on Rastrigin.
func nbipopHash(tb testing.TB, e *cmaes.ES, gens int) (string, int) {
	return runEndsHash(tb, e, gens, rastrigin)
}

// selfNBIPOPHash is selfRunEndsHash on Rastrigin.
func selfNBIPOPHash(tb testing.TB, s *selfcma.ES, gens int) (string, int) {
	return selfRunEndsHash(tb, s, gens, rastrigin)
}

// runEndsHash is runHash on f with the stop reasons, hashed with the run
// ends (their regimes and σ0).
func runEndsHash(tb testing.TB, e *cmaes.ES, gens int, f func([]float64) float64) (string, int) {
	tb.Helper()
	h, restarts := runHash(tb, e, gens, f, true)
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %v", h, e.RunEnds()))
	return hex.EncodeToString(sum[:]), restarts
}

// selfRunEndsHash hashes the points, regimes and stop reasons of gens
// generations of s on f (fewer if it stops) and the run ends (their
// regimes and σ0).
func selfRunEndsHash(tb testing.TB, s *selfcma.ES, gens int, f func([]float64) float64) (string, int) {
	tb.Helper()
	h := sha256.New()
	tell := func(v []float64) (cmaes.Record, error) {
		rec, err := s.Tell(v)
		return rec.Record, err
	}
	restarts := hashSteps(tb, h, s.Ask, tell, func() bool { return s.Primary().Stopped() != nil }, gens, f, true)
	fmt.Fprintf(h, "%v", s.Primary().RunEnds())
	return hex.EncodeToString(h.Sum(nil)), restarts
}

// TestReleaseNBIPOPContinues checks that the NBIPOP fixtures (cmaes
// encoding 10, selfcma encoding 13) decode with SigmaDec and Budget,
// encode back to their bytes while those are the current versions, and
// continue through their restarts as the code that wrote them did, also
// encoded again and decoded.
func TestReleaseNBIPOPContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "nbipop" {
		writeNBIPOPFixtures(t)
		return
	}
	blob, e := stateFixture(t, releaseNBIPOPFixture, versionLoshchilov)
	sblob, s := selfStateFixture(t, selfReleaseNBIPOPFixture, versionLoshchilovSelf)
	for _, d := range []*cmaes.ES{e, s.Primary()} {
		if rs := d.Config().Restarts; rs.SigmaDec != 1.6 || rs.Budget != 2 || !rs.BIPOP || d.Regime() != cmaes.RegimeSmall {
			t.Fatalf("the fixture: restarts %+v, regime %s; want NBIPOP in a small run", rs, d.Regime())
		}
	}
	if again, _ := marshal(e); cmaesVersion == versionLoshchilov && string(again) != string(blob) {
		t.Fatal("the cmaes fixture does not encode back to its bytes")
	}
	if again, _ := marshalSelf(s); selfcmaVersion == versionLoshchilovSelf && string(again) != string(sblob) {
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
		if got, restarts := nbipopHash(t, d, 1500); got != releaseNBIPOPContinuation || restarts < 2 {
			t.Fatalf("cmaes: continuation %s through %d restarts, the writing code's %s", got, restarts, releaseNBIPOPContinuation)
		}
	}
	for _, d := range []*selfcma.ES{s, s2} {
		if got, restarts := selfNBIPOPHash(t, d, 1500); got != selfReleaseNBIPOPContinuation || restarts < 2 {
			t.Fatalf("selfcma: continuation %s through %d restarts, the writing code's %s", got, restarts, selfReleaseNBIPOPContinuation)
		}
	}
}

func writeNBIPOPFixtures(t *testing.T) {
	if cmaesVersion != versionLoshchilov || selfcmaVersion != versionLoshchilovSelf {
		t.Fatalf("the fixtures of versions %d and %d are written by the code of those versions", versionLoshchilov, versionLoshchilovSelf)
	}
	blob, _ := marshal(releaseNBIPOPES(t))
	sblob, _ := marshalSelf(releaseSelfNBIPOPES(t))
	for path, b := range map[string][]byte{releaseNBIPOPFixture: blob, selfReleaseNBIPOPFixture: sblob} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := DecodeCMAES(blob)
	s, _ := DecodeSelfCMA(sblob)
	h, r := nbipopHash(t, e, 1500)
	sh, sr := selfNBIPOPHash(t, s, 1500)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts", releaseNBIPOPFixture, len(blob), h, r)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts", selfReleaseNBIPOPFixture, len(sblob), sh, sr)
}

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
