package cmaes

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// liveHeap is the heap in use after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// HeldBytes bounds what an ES holds after a few generations, measured,
// within 30 % (plus 1 MB for the runtime's rounding at small sizes).
func TestHeldBytes(t *testing.T) {
	for _, tc := range []struct {
		n, lambda, numerics int
		active, bounded     bool
	}{
		{n: 400, numerics: NumericsDC, active: true},
		{n: 400, numerics: NumericsDsyev},
		{n: 200, lambda: 2000, numerics: NumericsDC, active: true, bounded: true},
		{n: 200, lambda: 2000, numerics: NumericsBlocked},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			base := liveHeap()
			cfg := Config{X0: make([]float64, tc.n), Sigma0: 1, Lambda: tc.lambda, Seed: 1, Active: tc.active, Numerics: tc.numerics}
			if tc.bounded {
				cfg.Bounds = &Bounds{Lower: constVec(tc.n, -5), Upper: constVec(tc.n, 5)}
			}
			e := mustNew(t, cfg)
			r := rand.New(rand.NewPCG(1, 2))
			for range 3 {
				f := make([]float64, e.Params().Lambda)
				for i := range f {
					f[i] = r.Float64()
				}
				if _, err := e.Tell(f); err != nil {
					t.Fatal(err)
				}
			}
			held := liveHeap() - base
			got := e.HeldBytes()
			runtime.KeepAlive(e)
			t.Logf("HeldBytes %d, measured %d", got, held)
			if got != cfg.HeldBytes() {
				t.Errorf("ES.HeldBytes %d, Config.HeldBytes %d: want equal before a restart", got, cfg.HeldBytes())
			}
			if got < held || float64(got) > 1.3*float64(held)+1<<20 {
				t.Errorf("HeldBytes %d, measured %d: want at least it and at most 30 %% more", got, held)
			}
		})
	}
}

// MaxLambda is the λ of the last large run the schedule reaches.
func TestMaxLambda(t *testing.T) {
	x0 := constVec(10, 0)
	for _, tc := range []struct {
		cfg  Config
		want int
	}{
		{Config{X0: x0}, 10},
		{Config{X0: x0, Lambda: 7}, 7},
		{Config{X0: x0, Restarts: Restarts{IPOP: true, Max: 3}}, 80},
		{Config{X0: x0, Lambda: 10, Restarts: Restarts{BIPOP: true, Max: 3}}, 80},
		// BIPOP from the default λ: pycma's popsize0 = 4 + 3 ln 10.
		{Config{X0: x0, Restarts: Restarts{BIPOP: true, Max: 3}}, 87},
		{Config{X0: x0, Restarts: Restarts{IPOP: true, Max: 2, IncPopSize: 3}}, 90},
		{Config{X0: x0, Restarts: Restarts{IPOP: true}}, 10 << DefaultMaxRestarts},
		// λn is bounded by maxRestartValues: the last restart that fits.
		{Config{X0: x0, Restarts: Restarts{IPOP: true, Max: 30}}, 10 << 17},
	} {
		if got := tc.cfg.MaxLambda(); got != tc.want {
			t.Errorf("%+v: MaxLambda %d, want %d", tc.cfg.Restarts, got, tc.want)
		}
	}
}
