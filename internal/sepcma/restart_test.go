package sepcma

import (
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// runRastrigin runs cfg on Rastrigin until it stops for good.
func runRastrigin(t *testing.T, cfg Config) *ES {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for len(e.Stopped()) == 0 {
		if _, err := e.Tell(evalAll(rastrigin, e.Ask())); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestIPOP(t *testing.T) {
	e := runRastrigin(t, Config{X0: fill(5, 3), Sigma0: 2, Seed: 4, Restarts: cmaes.Restarts{IPOP: true, Max: 4},
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: -1}})
	ends := e.RunEnds()
	if len(ends) != 4 {
		t.Fatalf("%d restarts, want 4: %v", len(ends), e.Stopped())
	}
	l0 := DefaultLambda(5)
	for k, r := range ends {
		if want := l0 << k; r.Lambda != want || r.Regime != map[bool]string{true: cmaes.RegimeDefault, false: cmaes.RegimeLarge}[k == 0] {
			t.Errorf("run %d: λ = %d, regime %s; want %d", k, r.Lambda, r.Regime, want)
		}
	}
	if got, want := e.Params().Lambda, l0<<4; got != want {
		t.Errorf("last run λ = %d, want %d", got, want)
	}
	if got := (Config{X0: fill(5, 3), Restarts: cmaes.Restarts{IPOP: true, Max: 4}}).MaxLambda(); got != l0<<4 {
		t.Errorf("MaxLambda = %d, want %d", got, l0<<4)
	}
}

// TestBIPOP: small runs alternate with large ones so that the small runs'
// evaluations keep up with the large runs' (cmaes's rule, pycma's fmin).
func TestBIPOP(t *testing.T) {
	e := runRastrigin(t, Config{X0: fill(5, 3), Sigma0: 2, Seed: 4, Restarts: cmaes.Restarts{BIPOP: true, Max: 3},
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: -1}})
	ends := e.RunEnds()
	large, small := 0, 0
	for _, r := range ends {
		switch r.Regime {
		case cmaes.RegimeLarge:
			large++
		case cmaes.RegimeSmall:
			small++
			if r.Sigma0 > 2 || r.Sigma0 < 0.02 {
				t.Errorf("small run σ0 = %v, want in [0.02, 2]", r.Sigma0)
			}
		}
	}
	if large+boolInt(e.Regime() == cmaes.RegimeLarge) != 3 || small == 0 {
		t.Errorf("%d large and %d small runs, want 3 large and some small: %+v", large, small, ends)
	}
	if got, want := (Config{X0: fill(5, 3), Restarts: cmaes.Restarts{BIPOP: true, Max: 3}}).MaxLambda(), 70; got != want {
		t.Errorf("MaxLambda = %d, want %d", got, want)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestNoRestartOnTarget: reaching the target ends an IPOP ES.
func TestNoRestartOnTarget(t *testing.T) {
	e, _ := New(Config{X0: fill(4, 1), Sigma0: 1, Restarts: cmaes.Restarts{IPOP: true},
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-8}})
	for len(e.Stopped()) == 0 {
		e.Tell(evalAll(sphere, e.Ask()))
	}
	if e.Run() != 0 || e.Stopped()[0].Name != cmaes.StopTargetFitness {
		t.Errorf("run %d, stop %v", e.Run(), e.Stopped())
	}
}

// TestMemoryLinear: MemoryBytes is linear in n and λn, and an ES at
// n = 10^5 holds it without an n×n anywhere.
func TestMemoryLinear(t *testing.T) {
	n := 100000
	l := DefaultLambda(n)
	m1, m2 := MemoryBytes(n, l), MemoryBytes(2*n, l)
	if m2 > 2*m1 || m2 < m1 {
		t.Errorf("MemoryBytes(%d, %d) = %d, MemoryBytes(2n) = %d: not linear", n, l, m1, m2)
	}
	if m1 > 8*int64(l+13)*int64(n)+1<<20 {
		t.Errorf("MemoryBytes(%d, %d) = %d, want about 8(λ + 13)n", n, l, m1)
	}
	e, err := New(Config{X0: make([]float64, n), Sigma0: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e.MemoryBytes() != m1 {
		t.Errorf("ES.MemoryBytes = %d, want %d", e.MemoryBytes(), m1)
	}
	held := 8 * int64(len(e.x)+len(e.d)+6*len(e.sc.yw)+len(e.s.Mean)+len(e.s.C)+len(e.s.PSigma)+len(e.s.PC)+n)
	if held > m1 {
		t.Errorf("the ES holds %d bytes of vectors, more than MemoryBytes %d", held, m1)
	}
	if _, err := e.Tell(evalAll(sphere, e.Ask())); err != nil {
		t.Fatal(err)
	}
}
