package selfcma

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

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

// TestNumericsLazyRefused checks that self-CMA-ES refuses the lazy update
// (its signal-to-noise rule reads C^t from the primary's B and D), also in
// a restored state.
func TestNumericsLazyRefused(t *testing.T) {
	for _, v := range []int{cmaes.NumericsLazy, cmaes.NumericsLazyLong} {
		cfg := Config{CMA: cmaes.Config{X0: uniformX0(1, 4), Sigma0: 1, Seed: 1, Numerics: v}}
		if _, err := New(cfg); err == nil {
			t.Fatalf("New accepted numerics %d", v)
		}
	}
	ok := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, 4), Sigma0: 1, Seed: 1}})
	if _, err := Restore(ok.State()); err != nil {
		t.Fatalf("the unchanged state: %v", err)
	}
	for _, v := range []int{cmaes.NumericsLazy, cmaes.NumericsLazyLong} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, 4), Sigma0: 1, Seed: 1}})
		st := s.State()
		p := st.Primary.Clone()
		p.Config.Numerics = v
		st.Primary = p
		if _, err := Restore(st); err == nil {
			t.Fatalf("Restore accepted a primary with numerics %d", v)
		}
	}
}
