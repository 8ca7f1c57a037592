package enginecodec

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// TestLazyLongRoundTrip: an ES of numerics 6 (cmaes.NumericsLazyLong)
// encoded between two decompositions decodes with its version and
// continues bit for bit; an encoding older than 8 (no
// counter of the last decomposition) naming it is refused, as one naming
// numerics 4 is.
func TestLazyLongRoundTrip(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: constVec(50, 1), Sigma0: 0.5, Lambda: 4, Seed: 29, Active: true,
		Numerics: cmaes.NumericsLazyLong, Restarts: cmaes.Restarts{BIPOP: true, Max: 2}})
	for g := 0; g < 20 || e.State().EigenT == e.State().T; g++ {
		step(t, e, ellipsoid)
	}
	blob, _ := marshal(e)
	d, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatal(err)
	}
	if d.Config().Numerics != cmaes.NumericsLazyLong || d.State().EigenT != e.State().EigenT {
		t.Fatalf("decoded numerics %d, EigenT %d; want %d, %d", d.Config().Numerics, d.State().EigenT, cmaes.NumericsLazyLong, e.State().EigenT)
	}
	if got, want := continueHash(t, d, 60), continueHash(t, e, 60); got != want {
		t.Fatal("the decoded ES samples other points")
	}
	if _, err := DecodeCMAES(encodeAs(e, versionLazy-1)); err == nil {
		t.Fatalf("version %d with numerics %d decoded", versionLazy-1, cmaes.NumericsLazyLong)
	}
}
