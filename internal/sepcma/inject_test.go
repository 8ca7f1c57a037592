package sepcma

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// TestBounds: every point handed out lies in the box, the best point is
// one of them, and a bounded run converges to the optimum on the bound.
func TestBounds(t *testing.T) {
	n := 8
	b := &cmaes.Bounds{Lower: fill(n, 1), Upper: fill(n, 4)}
	e, err := New(Config{X0: fill(n, 3), Sigma0: 1, Seed: 3, Bounds: b,
		Restarts: cmaes.Restarts{IPOP: true, Max: 2, Point: cmaes.RestartPoint{Uniform: true}}})
	if err != nil {
		t.Fatal(err)
	}
	for len(e.Stopped()) == 0 {
		xs := e.Ask()
		for k, x := range xs {
			for i, v := range x {
				if v < b.Lower[i] || v > b.Upper[i] {
					t.Fatalf("generation %d: candidate %d: x[%d] = %v is outside [1, 4]", e.Generation(), k, i, v)
				}
			}
		}
		if _, err := e.Tell(evalAll(sphere, xs)); err != nil {
			t.Fatal(err)
		}
	}
	best, _ := e.Best()
	if got := sphere(best.X); math.Abs(got-float64(n)) > 1e-6 {
		t.Errorf("best f = %v, want %v (every x_i = 1)", got, n)
	}
	if _, err := New(Config{X0: fill(n, 5), Sigma0: 1, Bounds: b}); err == nil {
		t.Error("x0 outside the bounds was accepted")
	}
}

// TestInject: an injected point is handed out as given, as candidate 0 of
// the next batch; a clipped far point moves the mean by a bounded step;
// bad points are refused and queue nothing.
func TestInject(t *testing.T) {
	n := 10
	b := &cmaes.Bounds{Lower: fill(n, -100), Upper: fill(n, 100)}
	e, err := New(Config{X0: fill(n, 1), Sigma0: 0.5, Seed: 2, Bounds: b})
	if err != nil {
		t.Fatal(err)
	}
	far := fill(n, 90)
	near := fill(n, 0.9)
	if err := e.Inject([][]float64{far, near}, true); err != nil {
		t.Fatal(err)
	}
	if e.Injected() != 2 || e.InjectedInBatch() != 0 {
		t.Fatalf("waiting %d, in batch %d; want 2, 0", e.Injected(), e.InjectedInBatch())
	}
	for name, pts := range map[string][][]float64{
		"dimension":      {fill(n-1, 0)},
		"not finite":     {append(fill(n-1, 0), math.NaN())},
		"outside bounds": {fill(n, 101)},
		"too many":       slices.Repeat([][]float64{near}, e.Params().Lambda),
	} {
		if err := e.Inject(pts, true); !errors.Is(err, cmaes.ErrInvalidInjection) {
			t.Errorf("%s: err %v, want ErrInvalidInjection", name, err)
		}
	}
	m0 := e.Mean()
	if _, err := e.Tell(evalAll(sphere, e.Ask())); err != nil {
		t.Fatal(err)
	}
	xs := e.Ask()
	if !bitsEqual(xs[0], far) || !bitsEqual(xs[1], near) || e.InjectedInBatch() != 2 || e.Injected() != 0 {
		t.Fatalf("candidates 0, 1 = %v, %v (in batch %d); want the injected points", xs[0][:2], xs[1][:2], e.InjectedInBatch())
	}
	f := evalAll(sphere, xs)
	f[0] = -1 // the far point ranks first
	m1 := e.Mean()
	sigma, d := e.Sigma(), e.Stds()
	rec, err := e.Tell(f)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Injected != 2 {
		t.Errorf("record: %d injected, want 2", rec.Injected)
	}
	// The mean moves by σ·y_w, |y_w|_D ≤ Σ w_i c_y-ish: far below the 89
	// of the raw step.
	var step float64
	for i, v := range e.Mean() {
		step = math.Max(step, math.Abs(v-m1[i])/d[i]*sigma)
	}
	if step > 2*cmaes.ClipLength(n) {
		t.Errorf("the mean moved %v standard deviations: the step was not clipped", step)
	}
	_ = m0
}

// TestRoundTripInjectBounds: with bounds and injected points waiting and
// in the batch, an ES encoded and restored every generation continues bit
// for bit.
func TestRoundTripInjectBounds(t *testing.T) {
	n := 6
	cfg := Config{X0: fill(n, 3), Sigma0: 2, Seed: 11, Bounds: &cmaes.Bounds{Lower: fill(n, -5), Upper: fill(n, 5)},
		Restarts: cmaes.Restarts{BIPOP: true, Max: 2, Point: cmaes.RestartPoint{Uniform: true}},
		Inject:   [][]float64{fill(n, 0.5)}, Termination: cmaes.Termination{MaxEvaluations: 6000}}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := roundTrip(t, a)
	for g := 0; len(a.Stopped()) == 0; g++ {
		if g%3 == 0 {
			p := [][]float64{fill(n, float64(g%5)-2)}
			if errA, errB := a.Inject(p, g%2 == 0), b.Inject(p, g%2 == 0); errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			b = roundTrip(t, b)
		}
		xa, xb := a.Ask(), b.Ask()
		if !slices.EqualFunc(xa, xb, bitsEqual) {
			t.Fatalf("generation %d: the restored ES asks other points", g)
		}
		f := evalAll(rastrigin, xa)
		ra, errA := a.Tell(f)
		rb, errB := b.Tell(f)
		if errA != nil || errB != nil || !recordsEqual(ra, rb) {
			t.Fatalf("generation %d: %v, %v, records %+v, %+v", g, errA, errB, ra, rb)
		}
		if len(ra.Stop) == 0 {
			b = roundTrip(t, b)
		}
	}
	if len(a.RunEnds()) == 0 {
		t.Error("no restart: the test does not cover them")
	}
}

// liveHeap is the heap in use after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestHeldBytes: HeldBytes bounds what an ES and the copy of its batch
// that a service keeps hold after a few generations, measured, within
// 30 % (plus 1 MB), at n = 10^4 and 10^5.
func TestHeldBytes(t *testing.T) {
	for _, tc := range []struct {
		n       int
		bounded bool
	}{{10000, false}, {10000, true}, {100000, false}, {100000, true}} {
		cfg := Config{X0: make([]float64, tc.n), Sigma0: 1, Seed: 1}
		if tc.bounded {
			cfg.Bounds = &cmaes.Bounds{Lower: fill(tc.n, -5), Upper: fill(tc.n, 5)}
		}
		base := liveHeap()
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var kept [][]float64
		for range 3 {
			kept = e.Ask()
			if _, err := e.Tell(evalAll(sphere, kept)); err != nil {
				t.Fatal(err)
			}
		}
		kept = e.Ask()
		held := liveHeap() - base
		got := e.HeldBytes()
		runtime.KeepAlive(e)
		runtime.KeepAlive(kept)
		t.Logf("n = %d, bounds %v: HeldBytes %d, measured %d", tc.n, tc.bounded, got, held)
		if got != cfg.HeldBytes() {
			t.Errorf("ES.HeldBytes %d, Config.HeldBytes %d: want equal before a restart", got, cfg.HeldBytes())
		}
		if got < held || float64(got) > 1.3*float64(held)+1<<20 {
			t.Errorf("n = %d: HeldBytes %d, measured %d: want at least it and at most 30 %% more", tc.n, got, held)
		}
	}
}
