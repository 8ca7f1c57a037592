package cmaes

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// Each criterion fires on a case built for it, with the others that could
// fire first disabled.
func TestTerminationCriteria(t *testing.T) {
	only := func(t Termination) Termination {
		// Disable all but what the case sets.
		if t.TolFun == 0 {
			t.TolFun = -1
		}
		if t.TolX == 0 {
			t.TolX = -1
		}
		if t.ConditionCov == 0 {
			t.ConditionCov = -1
		}
		if t.TolUpSigma == 0 {
			t.TolUpSigma = -1
		}
		return t
	}
	noise := rand.New(rand.NewPCG(1, 1))
	tests := []struct {
		name   string
		cfg    Config
		f      func([]float64) float64
		want   string
		check  func(r StopReason, e *ES) bool
		maxGen int
	}{
		{
			name: "max evaluations",
			cfg:  Config{X0: constVec(5, 1), Sigma0: 1, Termination: only(Termination{MaxEvaluations: 55, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true})},
			f:    sphere, want: StopMaxEvaluations, maxGen: 100,
			check: func(r StopReason, e *ES) bool { return r.Value == 56 && e.Evaluations() == 56 }, // λ = 8: 7 generations
		},
		{
			name: "target fitness",
			cfg:  Config{X0: constVec(5, 1), Sigma0: 1, Termination: Termination{HasTarget: true, TargetFitness: 1e-3}},
			f:    sphere, want: StopTargetFitness, maxGen: 1000,
			check: func(r StopReason, e *ES) bool { return r.Value <= 1e-3 },
		},
		{
			name: "tol fun",
			cfg:  Config{X0: constVec(5, 1), Sigma0: 1, Termination: only(Termination{TolFun: 1e-9, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true})},
			f:    sphere, want: StopTolFun, maxGen: 2000,
			check: func(r StopReason, e *ES) bool { return r.Value < 1e-9 },
		},
		{
			name: "tol x",
			cfg:  Config{X0: constVec(5, 1), Sigma0: 1, Termination: only(Termination{TolX: 1e-6, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true})},
			f:    sphere, want: StopTolX, maxGen: 2000,
			check: func(r StopReason, e *ES) bool { return r.Value < 1e-6 },
		},
		{
			name: "no effect coord",
			cfg:  Config{X0: constVec(3, 1e20), Sigma0: 1, Termination: only(Termination{NoEffectAxis: true, NoStagnation: true, NoEqualFunVal: true})},
			f:    sphere, want: StopNoEffectCoord, maxGen: 5,
		},
		{
			name: "no effect axis",
			cfg:  Config{X0: constVec(3, 1e20), Sigma0: 1, Termination: only(Termination{NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true})},
			f:    sphere, want: StopNoEffectAxis, maxGen: 5,
		},
		{
			// Condition 1e12 of the Hessian; the threshold at 1e8.
			name: "condition cov",
			cfg:  Config{X0: constVec(4, 1), Sigma0: 1, Termination: only(Termination{ConditionCov: 1e8, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true})},
			f: func(x []float64) float64 {
				var s float64
				for i, v := range x {
					s += math.Pow(1e4, float64(i)) * v * v
				}
				return s
			},
			want: StopConditionCov, maxGen: 5000,
			check: func(r StopReason, e *ES) bool { return r.Value > 1e8 },
		},
		{
			name: "stagnation",
			cfg:  Config{X0: constVec(3, 1), Sigma0: 1, Termination: only(Termination{NoEffectAxis: true, NoEffectCoord: true, NoEqualFunVal: true})},
			f:    func([]float64) float64 { return noise.Float64() },
			want: StopStagnation, maxGen: 5000,
			check: func(r StopReason, e *ES) bool { return r.Value >= 120 },
		},
		{
			name: "equal fun values",
			cfg:  Config{X0: constVec(3, 1), Sigma0: 1, Termination: only(Termination{NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true})},
			f:    func([]float64) float64 { return 1 },
			want: StopEqualFunValues, maxGen: 100,
			check: func(r StopReason, e *ES) bool { return e.Generation() == 13 }, // 10 + n flat generations
		},
		{
			name: "tol up sigma",
			cfg:  Config{X0: constVec(3, 1), Sigma0: 1, Termination: only(Termination{TolUpSigma: 1e3, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true})},
			f:    func(x []float64) float64 { return -sphere(x) },
			want: StopTolUpSigma, maxGen: 2000,
			check: func(r StopReason, e *ES) bool { return r.Value > 1e3 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustNew(t, tt.cfg)
			runToStop(t, e, tt.f, tt.maxGen)
			got := e.Stopped()
			r, ok := hasReason(got, tt.want)
			if !ok {
				t.Fatalf("stopped by %v after %d generations, want %s", reasonNames(got), e.Generation(), tt.want)
			}
			if tt.check != nil && !tt.check(r, e) {
				t.Fatalf("%s fired with value %g at generation %d (evaluations %d, σ %g)", r.Name, r.Value, e.Generation(), e.Evaluations(), e.Sigma())
			}
			if _, err := e.Tell(make([]float64, e.Params().Lambda)); err != ErrStopped {
				t.Fatalf("Tell after stop: %v, want ErrStopped", err)
			}
		})
	}
}

// With every criterion off, a diverging run keeps a valid state (the σ
// safeguard moves the scale into C; values beyond the float range rank
// equal and stop the drift).
func TestDivergingRunKeepsInvariants(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Seed: 2,
		Termination: Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
			NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
	for range 3000 {
		step(t, e, func(x []float64) float64 { return -sphere(x) })
		checkInvariants(t, e)
	}
}

// TolUpSigma at its default, 10^20: the σ safeguard moves the scale into
// C once σ > 10^10 max(D), so σ/σ0 alone never gets there; with
// UpSigmaMoved the scale moved counts (σ/σ0 · s², s² the factor of C), and
// the diverging run ends on it.
func TestTolUpSigmaCountsTheMovedScale(t *testing.T) {
	diverge := func(x []float64) float64 { return -sphere(x) }
	for _, moved := range []bool{false, true} {
		e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Seed: 2,
			Termination: Termination{TolFun: -1, TolX: -1, ConditionCov: -1, UpSigmaMoved: moved,
				NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
		for g := 0; g < 3000 && e.Stopped() == nil; g++ {
			step(t, e, diverge)
			checkInvariants(t, e)
		}
		r, fired := hasReason(e.Stopped(), StopTolUpSigma)
		if !moved {
			if fired || e.State().RunMovedScale <= 0 {
				t.Fatalf("without UpSigmaMoved: stopped by %v, moved scale %g; want no tol_up_sigma after the safeguard moved the scale",
					reasonNames(e.Stopped()), e.State().RunMovedScale)
			}
			continue
		}
		st := e.State()
		if !fired || st.RunMovedScale <= 0 {
			t.Fatalf("with UpSigmaMoved: stopped by %v after %d generations, moved scale %g; want tol_up_sigma after a move",
				reasonNames(e.Stopped()), e.Generation(), st.RunMovedScale)
		}
		want := st.Sigma / st.RunSigma0 * math.Exp(st.RunMovedScale)
		if math.Abs(r.Value-want) > 1e-9*want || !(r.Value > 1e20*st.D[len(st.D)-1]) {
			t.Fatalf("tol_up_sigma %g, want σ/σ0·s² = %g above 1e20·max(D) = %g", r.Value, want, 1e20*st.D[len(st.D)-1])
		}
	}
	// A restart starts its run with no scale moved.
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Seed: 2, Restarts: Restarts{IPOP: true, Max: 1},
		Termination: Termination{TolFun: -1, TolX: -1, ConditionCov: -1, UpSigmaMoved: true,
			NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
	for g := 0; g < 3000 && e.State().Run == 0; g++ {
		step(t, e, diverge)
	}
	if st := e.State(); st.Run != 1 || st.RunMovedScale != 0 || st.RunEnds[0].Reasons[0].Name != StopTolUpSigma {
		t.Fatalf("run %d after %v: moved scale %g, want 0 in the restart after tol_up_sigma", st.Run, st.RunEnds, st.RunMovedScale)
	}
}

// A point beyond the float range cannot enter the state: the update is
// refused whole and the ES stops with numerical_error.
func TestNumericalGuard(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 0), Sigma0: 1, Seed: 2})
	e.s.Sigma = 1e200
	for i := range e.s.D {
		e.s.D[i] = 1e200 // D is not C's here: the test forces overflowing points
	}
	e.sample()
	mean, c := e.Mean(), e.C()
	rec := step(t, e, sphere)
	if _, ok := hasReason(rec.Stop, StopNumerical); !ok {
		t.Fatalf("stopped by %v, want %s", reasonNames(rec.Stop), StopNumerical)
	}
	if !equal(mean, e.Mean()) || !matEqual(c, e.C()) || e.Sigma() != 1e200 {
		t.Fatal("the refused update changed the distribution")
	}
}

func TestIPOPRestarts(t *testing.T) {
	// Rastrigin in 5-D: small populations stop in local minima.
	rastrigin := func(x []float64) float64 {
		s := 10 * float64(len(x))
		for _, v := range x {
			s += v*v - 10*math.Cos(2*math.Pi*v)
		}
		return s
	}
	e := mustNew(t, Config{X0: constVec(5, 3), Sigma0: 2, Seed: 4, Restarts: Restarts{IPOP: true, Max: 3},
		Termination: Termination{TolFun: 1e-8, HasTarget: true, TargetFitness: -1}})
	lambda0 := e.Params().Lambda
	bestSoFar := math.Inf(1)
	for e.Stopped() == nil {
		before := e.Params().Lambda
		rec := step(t, e, rastrigin)
		if rec.BestSoFar > bestSoFar {
			t.Fatalf("best so far worsened from %g to %g", bestSoFar, rec.BestSoFar)
		}
		bestSoFar = rec.BestSoFar
		if rec.Restarted {
			if e.Params().Lambda != 2*before {
				t.Fatalf("λ after restart %d, want %d", e.Params().Lambda, 2*before)
			}
			if e.Sigma() != 2 || !equal(e.Mean(), constVec(5, 3)) {
				t.Fatal("restart did not start from x0 and σ0")
			}
		}
	}
	if e.Run() != 3 || len(e.RunEnds()) != 3 {
		t.Fatalf("runs %d, run ends %d, want 3 restarts", e.Run(), len(e.RunEnds()))
	}
	if e.Params().Lambda != lambda0*8 {
		t.Fatalf("final λ %d, want %d", e.Params().Lambda, lambda0*8)
	}
	for _, end := range e.RunEnds() {
		if len(end.Reasons) == 0 {
			t.Fatal("a run ended without a reason")
		}
	}
	best, _ := e.Best()
	if best.F != bestSoFar || rastrigin(best.X) != best.F {
		t.Fatalf("best %g (f(x) = %g), want %g", best.F, rastrigin(best.X), bestSoFar)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBounds(t *testing.T) {
	lower := []float64{-1, 0, 2, -10, 5}
	upper := []float64{1, 0.001, 3, 10, 1e6}
	x0 := []float64{0.5, 0.0005, 2, 9, 5}
	// The optimum of the unconstrained function lies outside; the bounded
	// optimum is at the nearest corner.
	target := []float64{5, -3, 2.5, 20, 0}
	f := func(x []float64) float64 {
		var s float64
		for i, v := range x {
			s += (v - target[i]) * (v - target[i])
		}
		return s
	}
	e := mustNew(t, Config{X0: x0, Sigma0: 3, Seed: 8, Bounds: &Bounds{Lower: lower, Upper: upper},
		Termination: Termination{MaxEvaluations: 20000}})
	for e.Stopped() == nil {
		for k, x := range e.Ask() {
			for i, v := range x {
				if v < lower[i] || v > upper[i] || math.IsNaN(v) {
					t.Fatalf("generation %d point %d: x[%d] = %v outside [%v, %v]", e.Generation(), k, i, v, lower[i], upper[i])
				}
			}
		}
		step(t, e, f)
	}
	best, _ := e.Best()
	want := []float64{1, 0, 2.5, 10, 5}
	for i := range want {
		if math.Abs(best.X[i]-want[i]) > 1e-4*(1+math.Abs(want[i])) {
			t.Fatalf("best x = %v, want %v", best.X, want)
		}
	}
}

func TestTransformIsOntoAndIdentityInside(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 10000 {
		lo := -5 + 10*r.Float64()
		up := lo + math.Exp(-5+10*r.Float64())
		x := lo + (up-lo)*(-20+41*r.Float64())
		y := transform1(x, lo, up)
		if y < lo || y > up {
			t.Fatalf("transform(%v) in [%v, %v] = %v", x, lo, up, y)
		}
		al, au := margins(lo, up)
		if mid := lo + al + (up-au-lo-al)*r.Float64(); transform1(mid, lo, up) != mid {
			t.Fatalf("transform is not the identity at %v inside [%v, %v]", mid, lo+al, up-au)
		}
	}
}

// Stagnation keeps a trimmed history; it must fire exactly when the rule
// applied to the full history of the run says so. A slow 30-D Rosenbrock
// run with a noise floor improves for thousands of generations (so the
// trimming acts) and then stagnates.
func TestStagnationMatchesFullHistory(t *testing.T) {
	noise := rand.New(rand.NewPCG(5, 5))
	f := func(x []float64) float64 { return rosenbrock(x) + 1e-6*noise.Float64() }
	e := mustNew(t, Config{X0: constVec(30, 0), Sigma0: 0.5, Seed: 3, Termination: Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
		NoEffectAxis: true, NoEffectCoord: true, NoEqualFunVal: true}})
	var best, med []float64
	minLen := stagMinLen(30, e.Params().Lambda)
	for e.Stopped() == nil && e.Generation() < 20000 {
		rec := step(t, e, f)
		best, med = append(best, rec.Best), append(med, rec.Median)
		h := len(best)
		want := false
		if h >= minLen {
			l := max(minLen, min(h, int(0.2*float64(h))))
			k := int(0.3 * float64(l))
			var buf []float64
			bb, mm := best[h-l:], med[h-l:]
			want = medianOf(bb[l-k:], &buf) >= medianOf(bb[:k], &buf) && medianOf(mm[l-k:], &buf) >= medianOf(mm[:k], &buf)
		}
		_, got := hasReason(e.Stopped(), StopStagnation)
		if got != want {
			t.Fatalf("generation %d: stagnation %v, the full history says %v", h, got, want)
		}
		if len(e.s.StagBest) > max(minLen, h/5+1) {
			t.Fatalf("generation %d: %d values kept", h, len(e.s.StagBest))
		}
	}
	if e.Stopped() == nil || len(best) < 6*minLen {
		t.Fatalf("stopped by %v after %d generations: the trimming was not exercised", reasonNames(e.Stopped()), len(best))
	}
}

// StopNow stops a run at the caller's request, with the generations told
// as its value: no restart follows (IPOP configured), Tell refuses, a second
// StopNow or one on a stopped ES changes nothing, and the reason persists.
func TestStopNow(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 0.5, Seed: 2, Restarts: Restarts{IPOP: true, Max: 3}})
	for range 4 {
		step(t, e, sphere)
	}
	e.StopNow()
	e.StopNow()
	want := []StopReason{{Name: StopRequested, Value: 4}}
	if got := e.Stopped(); !reflect.DeepEqual(got, want) || e.Run() != 0 {
		t.Fatalf("after StopNow: stopped %v, run %d; want %v, run 0", got, e.Run(), want)
	}
	if _, err := e.Tell(make([]float64, e.Params().Lambda)); !errors.Is(err, ErrStopped) {
		t.Fatalf("Tell after StopNow: %v", err)
	}
	back, err := restoreCopy(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Stopped(), want) {
		t.Fatalf("restored: stopped %v", back.Stopped())
	}

	// On a run a criterion stopped, StopNow adds nothing.
	f := mustNew(t, Config{X0: constVec(2, 1), Sigma0: 0.5, Seed: 2, Termination: Termination{MaxEvaluations: 12}})
	runToStop(t, f, sphere, 100)
	why := f.Stopped()
	f.StopNow()
	if !reflect.DeepEqual(f.Stopped(), why) || why[0].Name == StopRequested {
		t.Fatalf("StopNow on a stopped ES: %v, before %v", f.Stopped(), why)
	}
}
