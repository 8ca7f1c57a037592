package selfcma

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/testfn"
)

// continueHash runs gens generations on the ellipsoid and returns the
// SHA-256 of the bits of every point asked.
func continueHash(tb testing.TB, s *ES, gens int) string {
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

// testdata/numerics1-n40.state was written by the code before numerics
// versions (state version 1, commit b8986da) after 4 generations of
// New(Config{CMA: cmaes.Config{X0: uniformX0(3, 40), Sigma0: 0.5, Seed: 7}})
// on the ellipsoid; numerics1Continuation is continueHash(s, 6) by that
// same code.
const numerics1Continuation = "75cef85e2f0d3e16215fe9052b016bbe1f94ae23d177f3f73a4da6d06ee6d516"

// TestUpgradeKeepsNumerics1 checks that a self-CMA-ES encoded before
// numerics versions decodes with NumericsDsyev in both CMA-ES and
// continues bit for bit, also after an encoding by the new code.
func TestUpgradeKeepsNumerics1(t *testing.T) {
	blob, err := os.ReadFile("testdata/numerics1-n40.state")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Unmarshal(blob)
	if err != nil {
		t.Fatal(err)
	}
	if p, a := s.Primary().Config().Numerics, s.aux.Config().Numerics; p != cmaes.NumericsDsyev || a != cmaes.NumericsDsyev {
		t.Fatalf("numerics: primary %d, auxiliary %d, want %d", p, a, cmaes.NumericsDsyev)
	}
	again, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, s, 6); got != numerics1Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, numerics1Continuation)
	}
	s2, err := Unmarshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, s2, 6); got != numerics1Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, numerics1Continuation)
	}
}

// TestNumericsOfAux checks that the auxiliary CMA-ES takes the primary's
// numerics, also when it restarts with the primary.
func TestNumericsOfAux(t *testing.T) {
	for _, v := range []int{0, cmaes.NumericsDsyev, cmaes.NumericsBlocked, cmaes.NumericsDC} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, 4), Sigma0: 1, Seed: 1, Numerics: v,
			Restarts: cmaes.Restarts{IPOP: true, Max: 1}}})
		want := v
		if v == 0 {
			want = cmaes.NumericsLatest
		}
		for range 1000 {
			if s.aux.Config().Numerics != want || s.Primary().Config().Numerics != want {
				t.Fatalf("Numerics %d: primary %d, auxiliary %d", v, s.Primary().Config().Numerics, s.aux.Config().Numerics)
			}
			if s.Primary().Stopped() != nil {
				break
			}
			step(t, s, sphere)
		}
		if s.auxRuns < 2 {
			t.Fatalf("Numerics %d: the auxiliary never restarted", v)
		}
	}
}

func TestEncodingVersions(t *testing.T) {
	if esEncoding[stateVersion] != cmaes.EncodingVersion {
		t.Fatalf("state version %d embeds cmaes encoding %d, the cmaes package writes %d",
			stateVersion, esEncoding[stateVersion], cmaes.EncodingVersion)
	}
}
