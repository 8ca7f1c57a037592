package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// testdata/selfcma/encoding12-n8-woodbury.state was written by the code
// that introduced selfcma encoding 12 (State.Woodbury) and numerics
// selfcma.NumericsWoodbury: 12 generations on the ellipsoid of
// selfcma.New(Config{CMA: cmaes.Config{X0: [1 … 1], Sigma0: 0.5, Seed:
// 19, Lambda: 100, Numerics: NumericsWoodbury}}) (h_t by the Woodbury
// identity, a kept step). selfRelease12Continuation is
// selfContinueHash(s, 6) by that code. SELFCMA_WRITE_FIXTURES=12 writes it
// again and prints its hash: only for this version's fixture, never to
// make a changed continuation pass.
const (
	selfRelease12Fixture      = "testdata/selfcma/encoding12-n8-woodbury.state"
	selfRelease12Continuation = "8ab0f5e07b40aa28d827e77825c559791a6b907afab708f19739bcd85573c86a"
)

func release12ES(t *testing.T) *selfcma.ES {
	t.Helper()
	x0 := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	s, err := selfcma.New(selfcma.Config{CMA: cmaes.Config{X0: x0, Sigma0: 0.5, Seed: 19, Lambda: selfcma.PaperLambda,
		Numerics: selfcma.NumericsWoodbury}})
	if err != nil {
		t.Fatal(err)
	}
	for range 12 {
		selfStep(t, s, testfn.Ellipsoid)
	}
	return s
}

// TestSelfCMARelease12Continues: the fixture of encoding 12 decodes with
// h_t by the Woodbury identity, encodes back to its bytes while 12 is the
// current version, and continues as the code that wrote it did.
func TestSelfCMARelease12Continues(t *testing.T) {
	if writeSelfFixture(t, "12", versionWoodbury, selfRelease12Fixture, release12ES) {
		return
	}
	blob, s := selfStateFixture(t, selfRelease12Fixture, versionWoodbury)
	if s.Numerics() != selfcma.NumericsWoodbury || !s.State().Woodbury || s.State().Prev == nil {
		t.Fatalf("the fixture: numerics %d, kept step %v; want %d and a step", s.Numerics(), s.State().Prev != nil, selfcma.NumericsWoodbury)
	}
	if again, _ := marshalSelf(s); selfcmaVersion == versionWoodbury && string(again) != string(blob) {
		t.Fatal("the fixture does not encode back to its bytes")
	}
	continuesAsWritten(t, s, selfRelease12Continuation)
}

// TestSelfCMAWoodburyRoundTrip: a session at NumericsWoodbury, active and
// not, encoded and decoded after every generation, continues as the one
// never encoded, bit for bit; a state of an older version decodes with
// Woodbury false.
func TestSelfCMAWoodburyRoundTrip(t *testing.T) {
	for _, active := range []bool{false, true} {
		cfg := selfcma.Config{CMA: cmaes.Config{X0: testfn.UniformX0(5, 6), Sigma0: 1, Seed: 23, Lambda: 60,
			Active: active, Numerics: selfcma.NumericsWoodbury}}
		a, err := selfcma.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := selfcma.New(cfg)
		for g := range 25 {
			selfStep(t, a, testfn.Rosenbrock)
			selfStep(t, b, testfn.Rosenbrock)
			blob, _ := marshalSelf(b)
			if b, err = DecodeSelfCMA(blob); err != nil {
				t.Fatalf("active=%v g=%d: %v", active, g, err)
			}
			if b.Numerics() != selfcma.NumericsWoodbury {
				t.Fatalf("active=%v g=%d: decoded numerics %d", active, g, b.Numerics())
			}
			ma, mb := a.Primary().Mean(), b.Primary().Mean()
			am, _ := a.AuxMean()
			bm, _ := b.AuxMean()
			for i := range ma {
				if ma[i] != mb[i] {
					t.Fatalf("active=%v g=%d: mean %v, after the round trip %v", active, g, ma, mb)
				}
			}
			for i := range am {
				if am[i] != bm[i] {
					t.Fatalf("active=%v g=%d: auxiliary mean %v, after the round trip %v", active, g, am, bm)
				}
			}
		}
	}
	_, old := selfStateFixture(t, selfRelease8Fixture, 8)
	if old.State().Woodbury || old.Numerics() == selfcma.NumericsWoodbury {
		t.Fatal("a version 8 state decodes with Woodbury")
	}
}
