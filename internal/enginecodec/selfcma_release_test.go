package enginecodec

import (
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// testdata/selfcma/encoding5-n8.state was written by the code that introduced
// state encoding 5 and numerics version 3, so that later code keeps
// continuing it bit for bit: 12 generations on the ellipsoid of
// New(Config{CMA: cmaes.Config{X0: [1 … 1], Sigma0: 0.5, Seed: 17}}) (λ =
// 100, a kept step, the auxiliary CMA-ES under way). selfRelease5Continuation
// is selfContinueHash(s, 6) by that same code. SELFCMA_WRITE_FIXTURES=1 writes
// the fixture again and prints its hash: only for a new release's
// fixture, never to make a changed continuation pass.
const selfRelease5Continuation = "e2d6f3d25cf885113124bbee1a8753f9f4f63e41ed46a31319180ebcbeacf4bb"

const selfRelease5Fixture = "testdata/selfcma/encoding5-n8.state"

// testdata/selfcma/encoding6-n8.state: the same run written by the code that
// introduced state encoding 6 (the kept step first, the primary's C its
// replay, the step's μ points only); selfRelease6Continuation is
// selfContinueHash(s, 6) by that code.
const (
	selfRelease6Fixture      = "testdata/selfcma/encoding6-n8.state"
	selfRelease6Continuation = "e2d6f3d25cf885113124bbee1a8753f9f4f63e41ed46a31319180ebcbeacf4bb"
)

// testdata/selfcma/encoding7-n8.state: the same run written by the code that
// introduced state encoding 7 (cmaes's block of active CMA-ES and restarts
// in both CMA-ES, and the gate, whose default lets λ = 100 self-adapt at
// n = 8); selfRelease7Continuation is selfContinueHash(s, 6) by that code.
// The run names λ = PaperLambda, the default λ of the earlier versions.
const (
	selfRelease7Fixture      = "testdata/selfcma/encoding7-n8.state"
	selfRelease7Continuation = "e2d6f3d25cf885113124bbee1a8753f9f4f63e41ed46a31319180ebcbeacf4bb"
)

// releaseES is the run of the release fixtures.
func releaseES(t *testing.T) *selfcma.ES {
	t.Helper()
	x0 := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	s, err := selfcma.New(selfcma.Config{CMA: cmaes.Config{X0: x0, Sigma0: 0.5, Seed: 17, Lambda: selfcma.PaperLambda}})
	if err != nil {
		t.Fatal(err)
	}
	for range 12 {
		X := s.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = testfn.Ellipsoid(x)
		}
		if _, err := s.Tell(v); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestSelfCMAReleaseContinues checks that the fixtures of earlier releases decode
// and continue as the code that wrote them did, also after this code
// encodes them again; the current version's fixture encodes back to its
// bytes. SELFCMA_WRITE_FIXTURES=1 writes the current version's fixture
// (only when that version is new).
func TestSelfCMAReleaseContinues(t *testing.T) {
	if os.Getenv("SELFCMA_WRITE_FIXTURES") == "1" {
		blob, err := marshalSelf(releaseES(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(selfRelease7Fixture, blob, 0o644); err != nil {
			t.Fatal(err)
		}
		s2, _ := DecodeSelfCMA(blob)
		t.Logf("wrote %s (%d bytes); continuation %s", selfRelease7Fixture, len(blob), selfContinueHash(t, s2, 6))
		return
	}
	for _, f := range []struct {
		version            uint32
		path, continuation string
	}{
		{5, selfRelease5Fixture, selfRelease5Continuation},
		{6, selfRelease6Fixture, selfRelease6Continuation},
		{7, selfRelease7Fixture, selfRelease7Continuation},
	} {
		t.Run(f.path, func(t *testing.T) {
			blob, s := selfStateFixture(t, f.path, f.version)
			if s.Primary().Config().Numerics != cmaes.NumericsDC || !(s.State().Prev != nil) {
				t.Fatalf("the fixture: numerics %d, a kept step %v; want %d, true", s.Primary().Config().Numerics, (s.State().Prev != nil), cmaes.NumericsDC)
			}
			if again, _ := marshalSelf(s); f.version == selfcmaVersion && string(again) != string(blob) {
				t.Fatal("the fixture does not encode back to its bytes")
			}
			continuesAsWritten(t, s, f.continuation)
		})
	}
}

// continuesAsWritten checks that s, decoded from a fixture, continues
// (selfContinueHash over 6 generations) as the code that wrote it did, and so
// does s encoded again by this code and decoded. s has gone on 6
// generations then.
func continuesAsWritten(t *testing.T, s *selfcma.ES, want string) {
	t.Helper()
	again, _ := marshalSelf(s)
	s2, err := DecodeSelfCMA(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := selfContinueHash(t, s, 6); got != want {
		t.Fatalf("continuation %s, the writing code's %s", got, want)
	}
	if got := selfContinueHash(t, s2, 6); got != want {
		t.Fatalf("encoded again: continuation %s, the writing code's %s", got, want)
	}
}

// selfStateFixture reads the state written by an earlier version at path,
// checks that it has the given encoding version, and decodes it.
func selfStateFixture(t *testing.T, path string, version uint32) ([]byte, *selfcma.ES) {
	t.Helper()
	blob, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, v, err := binenc.NewReaderVersions(blob, selfcmaMagic, 1, selfcmaVersion); err != nil || v != version {
		t.Fatalf("%s has version %d (%v), want %d", path, v, err, version)
	}
	e, err := DecodeSelfCMA(blob)
	if err != nil {
		t.Fatal(err)
	}
	return blob, e
}
