package selfcma

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// liveHeap is the heap in use after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// HeldBytes bounds what a self-CMA-ES holds after a few generations,
// measured, within 30 % (plus 1 MB): at the default λ, a run that does not
// self-adapt, and at λ = 10n one that does (its step and workspaces).
func TestHeldBytes(t *testing.T) {
	for _, tc := range []struct {
		n, lambda int
		adapting  bool
	}{
		{n: 400},
		{n: 200, lambda: 2000, adapting: true},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			base := liveHeap()
			cfg := Config{CMA: cmaes.Config{X0: make([]float64, tc.n), Sigma0: 1, Lambda: tc.lambda, Seed: 1, Active: true}}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 3 {
				f := make([]float64, s.Primary().Params().Lambda)
				for i := range f {
					f[i] = r.Float64()
				}
				if _, err := s.Tell(f); err != nil {
					t.Fatal(err)
				}
			}
			held := liveHeap() - base
			got := s.HeldBytes()
			runtime.KeepAlive(s)
			t.Logf("HeldBytes %d, measured %d", got, held)
			if s.Adapting() != tc.adapting {
				t.Fatalf("adapting %v, want %v", s.Adapting(), tc.adapting)
			}
			if got != cfg.HeldBytes() {
				t.Errorf("ES.HeldBytes %d, Config.HeldBytes %d: want equal before a restart", got, cfg.HeldBytes())
			}
			if got < held || float64(got) > 1.3*float64(held)+1<<20 {
				t.Errorf("HeldBytes %d, measured %d: want at least it and at most 30 %% more", got, held)
			}
		})
	}
}
