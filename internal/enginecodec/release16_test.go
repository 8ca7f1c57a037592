package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/selfcma"
)

// testdata/selfcma/encoding16-snr-cmu-n6.state was written by the code
// that introduced selfcma encoding 16 (SNRParams.Rates: the
// signal-to-noise rule on c_μ alone, the default of new sessions since):
// a self-CMA-ES as a new session's (NBIPOP, active, mirrored first and
// small runs, the rule at its defaults) on Rastrigin from X0 = (3, …, 3),
// σ0 = 2, seed 61, told 30 generations of the first run.
// selfRelease16Continuation is selfRunEndsHash over 600 generations by
// that code, through the first run's end and restarts at the defaults.
// SELFCMA_WRITE_FIXTURES=16 writes it again: only for this version's
// fixture, never to make a changed continuation pass.
const (
	selfRelease16Fixture      = "testdata/selfcma/encoding16-snr-cmu-n6.state"
	selfRelease16Continuation = "26f2d753eef14abaec460a16743ac9e8dfa7513afefbb00aa1a3aa89e3bd9ae7"
)

func release16ES(t *testing.T) *selfcma.ES {
	t.Helper()
	cfg := mirroredConfig()
	cfg.X0, cfg.Seed = constVec(6, 3), 61
	s := selfMustNew(t, selfcma.Config{CMA: cfg, MinLambda: 60, SNR: true})
	for range 30 {
		selfStep(t, s, rastrigin)
	}
	if s.Primary().State().Run != 0 || s.Primary().Stopped() != nil {
		t.Fatal("the first run ended within 30 generations")
	}
	return s
}

// TestSelfCMARelease16Continues: the fixture of encoding 16 decodes with
// the rule on c_μ alone (c_1 at its default, c_μ η times its default),
// encodes back to its bytes while 16 is the current version, and, with
// its encoding decoded again, continues as the code that wrote it did.
func TestSelfCMARelease16Continues(t *testing.T) {
	if writeSelfFixture(t, "16", versionSNRRates, selfRelease16Fixture, release16ES) {
		s := release16ES(t)
		h, r := selfRunEndsHash(t, s, 600, rastrigin)
		t.Logf("continuation %q through %d restarts", h, r)
		return
	}
	blob, s := selfStateFixture(t, selfRelease16Fixture, versionSNRRates)
	on, eta := s.SNR()
	d, h := s.Primary().Params().Hyper(), s.Primary().Hyper()
	if p := s.State().SNRParams; !on || p.Rates != selfcma.SNRRatesCMu || eta <= 1 || h.C1 != d.C1 || h.CMu != eta*d.CMu {
		t.Fatalf("the fixture: rule %v on %v, η %v, rates %+v (defaults %+v); want the rule on c_μ alone at η > 1", on, p.Rates, eta, h, d)
	}
	if again, _ := marshalSelf(s); selfcmaVersion == versionSNRRates && string(again) != string(blob) {
		t.Fatal("the fixture does not encode back to its bytes")
	}
	again, _ := marshalSelf(s)
	s2, err := DecodeSelfCMA(again)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*selfcma.ES{s, s2} {
		got, restarts := selfRunEndsHash(t, e, 600, rastrigin)
		if got != selfRelease16Continuation {
			t.Fatalf("continuation %s through %d restarts, the writing code's %s", got, restarts, selfRelease16Continuation)
		}
		if restarts == 0 || e.Primary().Hyper() != e.Primary().Params().Hyper() {
			t.Fatalf("%d restarts, rates after them %+v; want restarts at the defaults", restarts, e.Primary().Hyper())
		}
	}
}

// TestVersion15DecodesRatesBoth: the last state of encoding 15 decodes
// with the rule on c_1 and c_μ, as it ran (its continuation is
// TestReleaseMirroredContinues').
func TestVersion15DecodesRatesBoth(t *testing.T) {
	_, s := selfStateFixture(t, selfReleaseMirroredFixture, versionMirroredSelf)
	if p := s.State().SNRParams; p.Rates != selfcma.SNRRatesBoth {
		t.Fatalf("rates %v, want %v", p.Rates, selfcma.SNRRatesBoth)
	}
	on, eta := s.SNR()
	d, h := s.Primary().Params().Hyper(), s.Primary().Hyper()
	if !on || h.C1 != eta*d.C1 || h.CMu != eta*d.CMu {
		t.Fatalf("rule %v at η %v: rates %+v, want η times both defaults %+v", on, eta, h, d)
	}
}
