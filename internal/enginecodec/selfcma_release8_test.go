package enginecodec

import (
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// testdata/selfcma/encoding8-n8-snr.state was written by the code that
// introduced selfcma encoding 8 (Config.SNR and the signal-to-noise
// rule's state): 40 generations on the ellipsoid of
// selfcma.New(Config{CMA: cmaes.Config{X0: [1 … 1], Sigma0: 0.5, Seed:
// 18}, SNR: true}) (the default λ, below MinLambda: the rule under way, η
// above 1). selfRelease8Continuation is selfContinueHash(s, 6) by that
// code. SELFCMA_WRITE_FIXTURES=8 writes it again and prints its hash: only
// for this version's fixture, never to make a changed continuation pass.
const (
	selfRelease8Fixture      = "testdata/selfcma/encoding8-n8-snr.state"
	selfRelease8Continuation = "4e5e287426ca68e23edc9c397e3cff70678bd8bc885ab086fafede75e35fac8d"
)

func release8ES(t *testing.T) *selfcma.ES {
	t.Helper()
	x0 := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	s, err := selfcma.New(selfcma.Config{CMA: cmaes.Config{X0: x0, Sigma0: 0.5, Seed: 18}, SNR: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		selfStep(t, s, testfn.Ellipsoid)
	}
	return s
}

// TestSelfCMARelease8Continues: the fixture of encoding 8 decodes with the
// rule under way, encodes back to its bytes while 8 is the current
// version, and continues as the code that wrote it did.
func TestSelfCMARelease8Continues(t *testing.T) {
	if writeSelfFixture(t, "8", versionSNR, selfRelease8Fixture, release8ES) {
		return
	}
	blob, s := selfStateFixture(t, selfRelease8Fixture, 8)
	if on, eta := s.SNR(); !on || s.State().SNRRule == nil || eta <= 1 {
		t.Fatalf("the fixture: rule on %v, state %v, η %v; want on, under way, above 1", on, s.State().SNRRule != nil, eta)
	}
	if again, _ := marshalSelf(s); selfcmaVersion == 8 && string(again) != string(blob) {
		t.Fatal("the fixture does not encode back to its bytes")
	}
	continuesAsWritten(t, s, selfRelease8Continuation)
}

// writeSelfFixture writes the self-CMA-ES release fixture path, of the ES
// build makes, when SELFCMA_WRITE_FIXTURES is name (only by the code of
// that version), and logs its continuation hash (selfContinueHash, 6
// generations); it reports whether it wrote: the test then ends.
func writeSelfFixture(t *testing.T, name string, version uint32, path string, build func(*testing.T) *selfcma.ES) bool {
	t.Helper()
	if os.Getenv("SELFCMA_WRITE_FIXTURES") != name {
		return false
	}
	if selfcmaVersion != version {
		t.Fatalf("the fixture of version %d is written by the code of that version, not %d", version, selfcmaVersion)
	}
	blob, _ := marshalSelf(build(t))
	if err := os.WriteFile(path, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, _ := DecodeSelfCMA(blob)
	t.Logf("wrote %s (%d bytes); continuation %s", path, len(blob), selfContinueHash(t, s2, 6))
	return true
}
