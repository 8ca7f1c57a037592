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

// releasePair is a cmaes fixture and a selfcma fixture written by the code
// that introduced their encodings, with the hashes of their continuations
// by that code: runEndsHash and selfRunEndsHash of gens generations on f.
// Releases 10, 11 and 12 keep one each (release10_test.go …
// release12_test.go).
type releasePair struct {
	name                           string // SELFCMA_WRITE_FIXTURES=name writes both again
	fixture, selfFixture           string
	version, selfVersion           uint32
	continuation, selfContinuation string
	f                              func([]float64) float64
	gens                           int
	// fixtureWrong says what is wrong with a decoded fixture's primary
	// CMA-ES, "" if nothing.
	fixtureWrong func(*cmaes.ES) string
	// continuedWrong says what is wrong with a primary continued through
	// restarts restarts, "" if nothing.
	continuedWrong func(e *cmaes.ES, restarts int) string
	// states makes the states the fixtures hold (by the code of their
	// versions only).
	states func(*testing.T) (*cmaes.ES, *selfcma.ES)
}

// check decodes both fixtures, checks them with fixtureWrong, checks that
// they encode back to their bytes while their versions are the current
// ones, and that they, and their encodings decoded again, continue as the
// code that wrote them did. Under SELFCMA_WRITE_FIXTURES=name it writes
// them instead: only for these versions' fixtures, never to make a
// changed continuation pass.
func (p releasePair) check(t *testing.T) {
	t.Helper()
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == p.name {
		p.write(t)
		return
	}
	blob, e := stateFixture(t, p.fixture, p.version)
	sblob, s := selfStateFixture(t, p.selfFixture, p.selfVersion)
	for _, d := range []*cmaes.ES{e, s.Primary()} {
		if msg := p.fixtureWrong(d); msg != "" {
			t.Fatalf("the fixture: %s", msg)
		}
	}
	if again, _ := marshal(e); cmaesVersion == p.version && string(again) != string(blob) {
		t.Fatal("the cmaes fixture does not encode back to its bytes")
	}
	if again, _ := marshalSelf(s); selfcmaVersion == p.selfVersion && string(again) != string(sblob) {
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
		got, restarts := runEndsHash(t, d, p.gens, p.f)
		if got != p.continuation {
			t.Fatalf("cmaes: continuation %s through %d restarts, the writing code's %s", got, restarts, p.continuation)
		}
		if msg := p.continuedWrong(d, restarts); msg != "" {
			t.Fatalf("cmaes, continued: %s", msg)
		}
	}
	for _, d := range []*selfcma.ES{s, s2} {
		got, restarts := selfRunEndsHash(t, d, p.gens, p.f)
		if got != p.selfContinuation {
			t.Fatalf("selfcma: continuation %s through %d restarts, the writing code's %s", got, restarts, p.selfContinuation)
		}
		if msg := p.continuedWrong(d.Primary(), restarts); msg != "" {
			t.Fatalf("selfcma, continued: %s", msg)
		}
	}
}

func (p releasePair) write(t *testing.T) {
	if cmaesVersion != p.version || selfcmaVersion != p.selfVersion {
		t.Fatalf("the fixtures of versions %d and %d are written by the code of those versions", p.version, p.selfVersion)
	}
	es, ses := p.states(t)
	blob, _ := marshal(es)
	sblob, _ := marshalSelf(ses)
	for path, b := range map[string][]byte{p.fixture: blob, p.selfFixture: sblob} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := DecodeCMAES(blob)
	s, _ := DecodeSelfCMA(sblob)
	h, r := runEndsHash(t, e, p.gens, p.f)
	sh, sr := selfRunEndsHash(t, s, p.gens, p.f)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts", p.fixture, len(blob), h, r)
	t.Logf("wrote %s (%d bytes): continuation %q through %d restarts", p.selfFixture, len(sblob), sh, sr)
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
