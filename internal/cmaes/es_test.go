package cmaes

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Expected values computed independently (Python, double precision) from the
// formulas of Algorithm 1, line 1.
func TestNewParams(t *testing.T) {
	tests := []struct {
		n, lambda, mu                              int
		w1, muW, cSigma, dSigma, cc, c1, cMu, chiN float64
	}{
		{2, 6, 3, 0.6370425712412168, 2.0286114646100617, 0.5731731629916698, 1.5731731629916696, 0.6666666666666666, 0.1548153998964136, 0.057859085071916304, 1.254272742818995},
		// c_μ capped at 1 − c_1 (the formula gives 1.1638670900155934).
		{2, 100, 50, 0.0823582365646732, 26.96665506465105, 0.9061522078574489, 5.790216003642473, 0.6666666666666666, 0.05283086940947183, 1 - 0.05283086940947183, 1.254272742818995},
		{10, 10, 5, 0.45627264690340597, 3.1672992814107017, 0.3196142529106334, 1.3196142529106334, 0.2857142857142857, 0.015283824524751714, 0.02015428276120837, 3.0847265651690123},
		{10, 100, 50, 0.0823582365646732, 26.96665506465105, 0.7247705623048482, 2.797622661496977, 0.2857142857142857, 0.012931871565203196, 0.29249841601503435, 3.0847265651690123},
		{100, 17, 8, 0.3284362085152189, 4.840914500901174, 0.06343524192614304, 1.063435241926143, 0.038461538461538464, 0.0001948077706730627, 0.0005855574246988582, 9.97504761904762},
		{100, 100, 50, 0.0823582365646732, 26.96665506465105, 0.2228775915656349, 1.222877591565635, 0.038461538461538464, 0.0001943888368570924, 0.004794136291627254, 9.97504761904762},
	}
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-14*math.Abs(want) }
	for _, tt := range tests {
		lambdaArg := tt.lambda
		if tt.lambda != 100 {
			lambdaArg = 0 // the default
		}
		p, err := NewParams(tt.n, lambdaArg)
		if err != nil {
			t.Fatal(err)
		}
		if p.Lambda != tt.lambda || p.Mu != tt.mu || len(p.Weights) != tt.mu {
			t.Errorf("n=%d: λ, μ, len(w) = %d, %d, %d, want %d, %d, %d", tt.n, p.Lambda, p.Mu, len(p.Weights), tt.lambda, tt.mu, tt.mu)
		}
		var sum float64
		for i, w := range p.Weights {
			sum += w
			if i > 0 && !(w < p.Weights[i-1]) {
				t.Errorf("n=%d λ=%d: weights not decreasing at %d", tt.n, tt.lambda, i)
			}
		}
		if math.Abs(sum-1) > 1e-15 {
			t.Errorf("n=%d λ=%d: Σw = %v", tt.n, tt.lambda, sum)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"w1", p.Weights[0], tt.w1}, {"μ_w", p.MuW, tt.muW}, {"c_σ", p.CSigma, tt.cSigma}, {"d_σ", p.DSigma, tt.dSigma},
			{"c_c", p.Cc, tt.cc}, {"c_1", p.C1, tt.c1}, {"c_μ", p.CMu, tt.cMu}, {"E‖N‖", p.ChiN, tt.chiN},
		} {
			if !close(c.got, c.want) {
				t.Errorf("n=%d λ=%d: %s = %.17g, want %.17g", tt.n, tt.lambda, c.name, c.got, c.want)
			}
		}
	}
	if _, err := NewParams(0, 0); err == nil {
		t.Error("NewParams(0, 0): no error")
	}
	if _, err := NewParams(5, 1); err == nil {
		t.Error("NewParams(5, 1): no error")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := map[string]Config{
		"empty x0":          {Sigma0: 1},
		"nan x0":            {X0: []float64{0, math.NaN()}, Sigma0: 1},
		"inf x0":            {X0: []float64{math.Inf(1)}, Sigma0: 1},
		"zero sigma":        {X0: []float64{0}, Sigma0: 0},
		"negative sigma":    {X0: []float64{0}, Sigma0: -1},
		"inf sigma":         {X0: []float64{0}, Sigma0: math.Inf(1)},
		"lambda 1":          {X0: []float64{0}, Sigma0: 1, Lambda: 1},
		"bounds length":     {X0: []float64{0, 0}, Sigma0: 1, Bounds: &Bounds{Lower: []float64{-1}, Upper: []float64{1, 1}}},
		"bounds order":      {X0: []float64{0}, Sigma0: 1, Bounds: &Bounds{Lower: []float64{1}, Upper: []float64{1}}},
		"x0 outside bounds": {X0: []float64{2}, Sigma0: 1, Bounds: &Bounds{Lower: []float64{-1}, Upper: []float64{1}}},
		"negative restarts": {X0: []float64{0}, Sigma0: 1, Restarts: Restarts{IPOP: true, Max: -1}},
		"nan tolerance":     {X0: []float64{0}, Sigma0: 1, Termination: Termination{TolFun: math.NaN()}},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := New(cfg); err == nil {
				t.Error("New: no error")
			}
		})
	}
}

func TestAskIsStableUntilTold(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(5, 1), Sigma0: 0.5, Seed: 3})
	a, b := e.Ask(), e.Ask()
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Fatal("two asks before a tell differ")
	}
	a[0][0] = 1e300 // the caller's copy
	if e.Ask()[0][0] == 1e300 {
		t.Fatal("Ask returned the ES's own memory")
	}
	step(t, e, sphere)
	if c := e.Ask(); slices.EqualFunc(b, c, slices.Equal) {
		t.Fatal("the batch did not change after a tell")
	}
}

func TestTellWrongLengthChangesNothing(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(4, 1), Sigma0: 0.5, Seed: 3})
	before := stateBits(t, e)
	for _, n := range []int{0, e.Params().Lambda - 1, e.Params().Lambda + 1} {
		if _, err := e.Tell(make([]float64, n)); err == nil {
			t.Errorf("Tell with %d values: no error", n)
		}
	}
	after := stateBits(t, e)
	if !bytes.Equal(before, after) {
		t.Fatal("a rejected Tell changed the state")
	}
}

func TestSameSeedSameRun(t *testing.T) {
	run := func(seed uint64) [][]float64 {
		e := mustNew(t, Config{X0: constVec(6, 2), Sigma0: 1, Seed: seed})
		for range 20 {
			step(t, e, rosenbrock)
		}
		return e.Ask()
	}
	if !slices.EqualFunc(run(7), run(7), slices.Equal) {
		t.Fatal("same seed, different points")
	}
	if slices.EqualFunc(run(7), run(8), slices.Equal) {
		t.Fatal("different seeds, same points")
	}
}

// The replay of the last update with the rates it used reproduces C and p_c
// to the bit; other rates give another C.
func TestReplayReproducesUpdate(t *testing.T) {
	e := mustNew(t, Config{X0: uniformX0(1, 8), Sigma0: 2, Lambda: 20, Seed: 5})
	for g := range 40 {
		used := e.Hyper()
		step(t, e, ellipsoid)
		st := e.LastStep()
		if st == nil {
			t.Fatalf("generation %d: no step kept", g)
		}
		if st.Hyper != used {
			t.Fatalf("step hyper %+v, want %+v", st.Hyper, used)
		}
		pc := make([]float64, 8)
		c := e.C()
		st.Replay(used, pc, c)
		want := e.C()
		safeguarded := false
		for i := range 8 {
			for j := range 8 {
				if c.At(i, j) != want.At(i, j) {
					safeguarded = true
				}
			}
		}
		if safeguarded {
			t.Fatalf("generation %d: replayed C differs from C^{t+1}", g)
		}
		if !slices.Equal(pc, e.s.PC) {
			t.Fatalf("generation %d: replayed p_c differs", g)
		}
		other := used
		other.C1, other.CMu = 0.2, 0.3
		st.Replay(other, pc, c)
		if c.At(0, 0) == want.At(0, 0) {
			t.Fatalf("generation %d: other rates gave the same C", g)
		}
		// Alternate between the defaults and other rates.
		next := e.Params().Hyper()
		if g%2 == 0 {
			next = Hyper{C1: next.C1 * 1.5, CMu: next.CMu * 1.2, Cc: next.Cc * 0.7}
		}
		if err := e.SetHyper(next); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.SetHyper(Hyper{C1: 0.6, CMu: 0.6, Cc: 0.5}); err == nil {
		t.Fatal("SetHyper with c1 + cmu > 1: no error")
	}
}

func TestInvariantsInLongRuns(t *testing.T) {
	tests := []struct {
		name   string
		f      func([]float64) float64
		n, lam int
		gens   int
	}{
		{"ellipsoid n=10", ellipsoid, 10, 0, 1500},
		{"rosenbrock n=10 λ=100", rosenbrock, 10, 100, 400},
		{"sphere n=2 λ=100 (c_μ capped)", sphere, 2, 100, 300},
		{"ellipsoid n=30 λ=30", ellipsoid, 30, 30, 800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: uniformX0(2, tt.n), Sigma0: 2, Lambda: tt.lam, Seed: 11,
				Termination: Termination{TolFun: -1, TolX: -1, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true, ConditionCov: -1}})
			for range tt.gens {
				if e.Stopped() != nil {
					t.Fatalf("stopped: %v", e.Stopped())
				}
				step(t, e, tt.f)
				checkInvariants(t, e)
			}
		})
	}
}

func TestConvergence(t *testing.T) {
	tests := []struct {
		name     string
		f        func([]float64) float64
		n, lam   int
		maxEvals int
	}{
		{"sphere", sphere, 10, 0, 3000},
		{"ellipsoid", ellipsoid, 10, 0, 12000},
		{"rosenbrock", rosenbrock, 10, 0, 15000},
		{"sphere λ=100", sphere, 10, 100, 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(5) {
				e := mustNew(t, Config{X0: uniformX0(seed, tt.n), Sigma0: 2, Lambda: tt.lam, Seed: seed,
					Termination: Termination{HasTarget: true, TargetFitness: 1e-8, MaxEvaluations: 100000}})
				runToStop(t, e, tt.f, 100000)
				best, _ := e.Best()
				if _, ok := hasReason(e.Stopped(), StopTargetFitness); !ok || best.F > 1e-8 {
					t.Fatalf("seed %d: stopped by %v at f = %g", seed, e.Stopped(), best.F)
				}
				if e.Evaluations() > tt.maxEvals {
					t.Errorf("seed %d: %d evaluations, want at most %d", seed, e.Evaluations(), tt.maxEvals)
				}
			}
		})
	}
}

func TestSnapshotRestoreContinuesBitForBit(t *testing.T) {
	lower, upper := constVec(6, -1), constVec(6, 3)
	configs := map[string]Config{
		"plain": {X0: uniformX0(4, 6), Sigma0: 2, Seed: 9},
		"bounds, ipop": {X0: constVec(6, 2), Sigma0: 1, Seed: 9, Bounds: &Bounds{Lower: lower, Upper: upper},
			Restarts: Restarts{IPOP: true, Max: 3}, Termination: Termination{TolX: 0.05}},
	}
	// Failed evaluations every 7th generation exercise the NaN path.
	f := func(g int, x []float64) float64 {
		if g%7 == 3 && x[0] > 0 {
			return math.NaN()
		}
		return rosenbrock(x)
	}
	tell := func(e *ES) {
		X := e.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = f(e.Generation(), x)
		}
		if _, err := e.Tell(v); err != nil {
			t.Fatal(err)
		}
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			for _, at := range []int{0, 1, 5, 23, 60} {
				a := mustNew(t, cfg)
				for range at {
					tell(a)
				}
				b, err := restoreCopy(t, a)
				if err != nil {
					t.Fatalf("at %d: %v", at, err)
				}
				for g := range 50 {
					xa, xb := a.Ask(), b.Ask()
					for k := range xa {
						for i := range xa[k] {
							if math.Float64bits(xa[k][i]) != math.Float64bits(xb[k][i]) {
								t.Fatalf("snapshot at %d: generation +%d point %d differs", at, g, k)
							}
						}
					}
					if a.Stopped() != nil {
						break
					}
					tell(a)
					tell(b)
				}
				ba, bb := stateBits(t, a), stateBits(t, b)
				if !bytes.Equal(ba, bb) {
					t.Fatalf("snapshot at %d: states differ after 50 generations", at)
				}
				if cfg.Restarts.IPOP && at == 60 && a.Run() == 0 {
					t.Fatal("the IPOP case never restarted: it tests nothing of restarts")
				}
			}
		})
	}
}

func TestFailedEvaluations(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(4, 1), Sigma0: 0.5, Seed: 3})
	// Some failures: they rank worst.
	X := e.Ask()
	v := make([]float64, len(X))
	for k, x := range X {
		v[k] = sphere(x)
	}
	v[0], v[3] = math.NaN(), math.NaN()
	if _, err := e.Tell(v); err != nil {
		t.Fatal(err)
	}
	st := e.LastStep()
	if st == nil {
		t.Fatal("no update after a partly failed generation")
	}
	l := len(st.Order)
	if got := []int{st.Order[l-2], st.Order[l-1]}; got[0] != 0 || got[1] != 3 {
		t.Fatalf("failed points ranked %v last, want [0 3]", got)
	}
	// All failed: the distribution stays, the generation advances, the batch is new.
	mean, sigma, c := e.Mean(), e.Sigma(), e.C()
	gen, evals, batch := e.Generation(), e.Evaluations(), e.Ask()
	all := make([]float64, len(batch))
	for k := range all {
		all[k] = math.NaN()
	}
	rec, err := e.Tell(all)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(rec.Best) || !math.IsNaN(rec.Median) {
		t.Errorf("record best, median = %v, %v, want NaN", rec.Best, rec.Median)
	}
	if !slices.Equal(mean, e.Mean()) || sigma != e.Sigma() || !matEqual(c, e.C()) {
		t.Error("an all-failed generation moved the distribution")
	}
	if e.Generation() != gen+1 || e.Evaluations() != evals+len(batch) {
		t.Errorf("generation, evaluations = %d, %d, want %d, %d", e.Generation(), e.Evaluations(), gen+1, evals+len(batch))
	}
	if slices.EqualFunc(batch, e.Ask(), slices.Equal) {
		t.Error("an all-failed generation is not sampled anew")
	}
	if e.LastStep() != nil {
		t.Error("LastStep after an all-failed generation")
	}
}

func matEqual(a, b *mat.SymDense) bool {
	return mat.Equal(a, b)
}

// Allocations per generation do not grow with the generation count.
func TestAllocationsDoNotGrow(t *testing.T) {
	e := mustNew(t, Config{X0: uniformX0(1, 10), Sigma0: 1, Seed: 1, Termination: never})
	r := rand.New(rand.NewPCG(2, 2))
	f := make([]float64, e.Params().Lambda)
	gen := func() {
		for k := range f {
			f[k] = r.Float64()
		}
		if _, err := e.Tell(f); err != nil {
			t.Fatal(err)
		}
	}
	for range 200 {
		gen()
	}
	early := testing.AllocsPerRun(200, gen)
	for range 5000 {
		gen()
	}
	late := testing.AllocsPerRun(200, gen)
	if late > early+0.5 {
		t.Fatalf("allocations per generation grew from %.1f (generation 200) to %.1f (generation 5400)", early, late)
	}
}

func TestFailedGenerationsCountAgainstTheBudget(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Termination: Termination{MaxEvaluations: 20}})
	for range 10 {
		if e.Stopped() != nil {
			break
		}
		v := make([]float64, e.Params().Lambda)
		for k := range v {
			v[k] = math.NaN()
		}
		if _, err := e.Tell(v); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := hasReason(e.Stopped(), StopMaxEvaluations); !ok || e.Evaluations() != 21 {
		t.Fatalf("stopped by %v after %d evaluations, want max_evaluations after 21", reasonNames(e.Stopped()), e.Evaluations())
	}
}

// TestStds: the standard deviations are σ·√C_ii, bit for bit, through a
// run whose σ the safeguard may rescale.
func TestStds(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(4, 1), Sigma0: 0.3, Seed: 2})
	for g := range 30 {
		step(t, e, rosenbrock)
		c, s := e.C(), e.Sigma()
		for i, got := range e.Stds() {
			if want := s * math.Sqrt(c.At(i, i)); got != want {
				t.Fatalf("generation %d: stds[%d] = %v, want σ·√C_ii = %v", g, i, got, want)
			}
		}
	}
}
