package enginecodec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// testdata/selfcma/numerics1-n40.state was written by the code before numerics
// versions (state version 1, commit b8986da) after 4 generations of
// New(Config{CMA: cmaes.Config{X0: uniformX0(3, 40), Sigma0: 0.5, Seed: 7}})
// on the ellipsoid; selfNumerics1Continuation is selfContinueHash(s, 6) by that
// same code.
const selfNumerics1Continuation = "75cef85e2f0d3e16215fe9052b016bbe1f94ae23d177f3f73a4da6d06ee6d516"

// TestSelfCMAUpgradeKeepsNumerics1 checks that a self-CMA-ES encoded before
// numerics versions decodes with NumericsDsyev in both CMA-ES and
// continues bit for bit, also after an encoding by the new code.
func TestSelfCMAUpgradeKeepsNumerics1(t *testing.T) {
	blob, err := os.ReadFile("testdata/selfcma/numerics1-n40.state")
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeSelfCMA(blob)
	if err != nil {
		t.Fatal(err)
	}
	if p, a := s.Primary().Config().Numerics, s.State().Aux.Config.Numerics; p != cmaes.NumericsDsyev || a != cmaes.NumericsDsyev {
		t.Fatalf("numerics: primary %d, auxiliary %d, want %d", p, a, cmaes.NumericsDsyev)
	}
	again, err := marshalSelf(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := selfContinueHash(t, s, 6); got != selfNumerics1Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, selfNumerics1Continuation)
	}
	s2, err := DecodeSelfCMA(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := selfContinueHash(t, s2, 6); got != selfNumerics1Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, selfNumerics1Continuation)
	}
}

func TestSelfCMAEncodingVersions(t *testing.T) {
	if esEncoding[selfcmaVersion] != cmaesVersion {
		t.Fatalf("state version %d embeds cmaes encoding %d, the cmaes package writes %d",
			selfcmaVersion, esEncoding[selfcmaVersion], cmaesVersion)
	}
}

// TestSelfCMAGateOfOlderStates: a state written before the gate (version 6)
// decodes to the paper's Algorithm 2 in every run; its continuation, bit
// for bit that of the code that wrote it, is TestReleaseContinues's.
func TestSelfCMAGateOfOlderStates(t *testing.T) {
	_, s := selfStateFixture(t, selfRelease6Fixture, 6)
	if s.MinLambda() != selfcma.EveryLambda || !s.AdaptRestarts() || !s.Adapting() {
		t.Fatalf("version 6: MinLambda %d, AdaptRestarts %v, adapting %v; want %d, true, true",
			s.MinLambda(), s.AdaptRestarts(), s.Adapting(), selfcma.EveryLambda)
	}
}

// selfContinueHash runs gens generations on the ellipsoid and returns the
// SHA-256 of the bits of every point asked.
func selfContinueHash(tb testing.TB, s *selfcma.ES, gens int) string {
	tb.Helper()
	h := sha256.New()
	for range gens {
		X := s.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = testfn.Ellipsoid(x)
			for _, xi := range x {
				h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(xi)))
			}
		}
		if _, err := s.Tell(v); err != nil {
			tb.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
