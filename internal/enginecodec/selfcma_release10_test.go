package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// testdata/selfcma/encoding10-n8-snr.state was written by the code of
// selfcma encoding 10 (Termination.FlatFitness), the last whose
// signal-to-noise rule had its parameters as constants (α = 0.02, β =
// 0.03, η ∈ [1, 3], from η = 1, the first run only): 40 generations on the
// ellipsoid of selfcma.New(Config{CMA: cmaes.Config{X0: [1 … 1], Sigma0:
// 0.5, Seed: 19, Active: true, BIPOP restarts, FlatFitness}, SNR: true})
// (the rule under way, η above 1). selfRelease10Continuation is
// selfContinueHash(s, 6) by that code. SELFCMA_WRITE_FIXTURES=10 writes it
// again and prints its hash: only for this version's fixture, never to
// make a changed continuation pass.
const (
	selfRelease10Fixture      = "testdata/selfcma/encoding10-n8-snr.state"
	selfRelease10Continuation = "64442fc23fc171ea00e9702eb87336d631bbed6bf90b53fb92b5b60d55239959"
	versionFlatFitnessSelf    = 10
)

func release10ES(t *testing.T) *selfcma.ES {
	t.Helper()
	x0 := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	s, err := selfcma.New(selfcma.Config{CMA: cmaes.Config{X0: x0, Sigma0: 0.5, Seed: 19, Active: true,
		Restarts:    cmaes.Restarts{BIPOP: true},
		Termination: cmaes.Termination{FlatFitness: true}}, SNR: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		selfStep(t, s, testfn.Ellipsoid)
	}
	return s
}

// TestSelfCMARelease10Continues: the fixture of encoding 10 decodes with
// the rule under way at its parameters of then, and continues as the code
// that wrote it did, also encoded again in the current version.
func TestSelfCMARelease10Continues(t *testing.T) {
	if writeSelfFixture(t, "10", versionFlatFitnessSelf, selfRelease10Fixture, release10ES) {
		return
	}
	_, s := selfStateFixture(t, selfRelease10Fixture, versionFlatFitnessSelf)
	if on, eta := s.SNR(); !on || s.State().SNRRule == nil || eta <= 1 {
		t.Fatalf("the fixture: rule on %v, state %v, η %v; want on, under way, above 1", on, s.State().SNRRule != nil, eta)
	}
	if got := s.State().SNRParams; selfcmaVersion > versionFlatFitnessSelf && got != selfcma.SNRParamsV8 {
		t.Fatalf("the fixture decodes with the rule's parameters %+v, want those of then, %+v", got, selfcma.SNRParamsV8)
	}
	continuesAsWritten(t, s, selfRelease10Continuation)
}

// TestSelfCMASNRParamsEncoded: the rule's parameters, whatever they are,
// survive the encoding (version 11 on; the rates version 16 on), and the
// decoded ES continues as the original.
func TestSelfCMASNRParamsEncoded(t *testing.T) {
	for _, rates := range []selfcma.SNRRates{selfcma.SNRRatesBoth, selfcma.SNRRatesCMu} {
		snrParamsEncoded(t, selfcma.SNRParams{Alpha: 0.013, Beta: 0.05, EtaMax: 2.5, Eta0: 1.25, Rates: rates, RestartMaxLambda: 9, SmallRestarts: true})
	}
}

func snrParamsEncoded(t *testing.T, p selfcma.SNRParams) {
	t.Helper()
	s, err := selfcma.New(selfcma.Config{CMA: cmaes.Config{X0: []float64{1, 1, 1, 1, 1, 1}, Sigma0: 0.5, Seed: 3,
		Restarts: cmaes.Restarts{BIPOP: true}}, SNR: true, SNRParams: p})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		selfStep(t, s, testfn.Ellipsoid)
	}
	blob, _ := marshalSelf(s)
	d, err := DecodeSelfCMA(blob)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.State().SNRParams; got != p {
		t.Fatalf("decoded parameters %+v, want %+v", got, p)
	}
	if a, b := selfContinueHash(t, s, 6), selfContinueHash(t, d, 6); a != b {
		t.Fatal("the decoded ES continues otherwise")
	}
}
