package cmaes

import (
	"testing"

	"github.com/selfcma/selfcma/internal/testfn"
)

var symmetricPairs = testfn.MirroredPairs

// TestMirroredFirstRun: with MirroredFirstRun the first run's batches are
// ⌈λ/2⌉ points drawn as Algorithm 1's line 4 draws them (the same stream:
// the first generation's drawn points are an unmirrored ES's first ⌈λ/2⌉)
// and their mirrors about m; after a restart every point is drawn.
func TestMirroredFirstRun(t *testing.T) {
	for _, lambda := range []int{2, 9, 10} {
		cfg := Config{X0: constVec(5, 3), Sigma0: 2, Lambda: lambda, Seed: 11, Active: true,
			Restarts: Restarts{IPOP: true, Max: 2}}
		plain := mustNew(t, cfg)
		cfg.MirroredFirstRun = true
		e := mustNew(t, cfg)
		h := lambda - lambda/2
		if X, P := e.Ask(), plain.Ask(); !samePoints(X[:h], P[:h]) || samePoints(X, P) {
			t.Fatalf("λ = %d: the first batch's drawn points are not the unmirrored ES's first %d, or the batch is all of them", lambda, h)
		}
		for g := 0; e.State().Run == 0; g++ {
			if g > 3000 {
				t.Fatalf("λ = %d: the first run did not end", lambda)
			}
			if !symmetricPairs(e.Ask(), e.Mean()) {
				t.Fatalf("λ = %d, generation %d of the first run: the batch is not mirrored", lambda, g)
			}
			checkInvariants(t, e)
			step(t, e, rastrigin)
		}
		if e.Stopped() == nil && symmetricPairs(e.Ask(), e.Mean()) {
			t.Fatalf("λ = %d: the restart's batch is mirrored", lambda)
		}
	}
}

// TestMirroredSmallRuns: with MirroredSmallRuns BIPOP's small runs hand
// out mirrored batches and its large runs do not; without
// MirroredFirstRun the first run draws every point.
func TestMirroredSmallRuns(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(4, 3), Sigma0: 2, Seed: 12, Active: true, MirroredSmallRuns: true,
		Restarts: Restarts{BIPOP: true, Max: 4}})
	seen := map[string]bool{}
	for g := 0; e.Stopped() == nil && !(seen[RegimeSmall] && seen[RegimeLarge]); g++ {
		if g > 20000 {
			t.Fatal("no small and large runs within 20000 generations")
		}
		want := e.Regime() == RegimeSmall
		if got := symmetricPairs(e.Ask(), e.Mean()); got != want {
			t.Fatalf("generation %d, run %d (%s): batch mirrored %t, want %t", g, e.State().Run, e.Regime(), got, want)
		}
		seen[e.Regime()] = true
		step(t, e, rastrigin)
	}
	if !seen[RegimeSmall] || !seen[RegimeLarge] {
		t.Fatalf("the ES stopped (%v) before a small and a large run", reasonNames(e.Stopped()))
	}
}

// TestMirroredRestoresBitForBit: an ES restored in the middle of a
// mirrored first run hands out the same batches and continues as the
// original.
func TestMirroredRestoresBitForBit(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(6, 1), Sigma0: 1, Seed: 5, Active: true, MirroredFirstRun: true,
		Restarts: Restarts{BIPOP: true, Max: 2}})
	for range 30 {
		step(t, e, rastrigin)
	}
	r, err := restoreCopy(t, e)
	if err != nil {
		t.Fatal(err)
	}
	for g := range 400 {
		if e.Stopped() != nil {
			break
		}
		if !samePoints(e.Ask(), r.Ask()) {
			t.Fatalf("generation %d after the restore: the batches differ", g)
		}
		step(t, e, rastrigin)
		step(t, r, rastrigin)
	}
	if e.State().Run == 0 {
		t.Fatal("no restart within 430 generations: the test does not cross the first run's end")
	}
}

// TestMirroredConvergesFaster: on the sphere (n = 10, twenty seeds)
// mirrored sampling reaches f ≤ 10^-10 in every run, in fewer evaluations
// in all than independent sampling (docs/algorithm.md §1, "Mirrored
// sampling": 0.75 times on BBOB's f1).
func TestMirroredConvergesFaster(t *testing.T) {
	evals := func(mirrored bool) int {
		total := 0
		for seed := range uint64(20) {
			e := mustNew(t, Config{X0: constVec(10, 1), Sigma0: 1, Seed: seed + 1, Active: true, MirroredFirstRun: mirrored,
				Termination: Termination{TargetFitness: 1e-10, HasTarget: true}})
			runToStop(t, e, sphere, 5000)
			if _, ok := hasReason(e.Stopped(), StopTargetFitness); !ok {
				t.Fatalf("mirrored %t, seed %d: stopped on %v, not the target", mirrored, seed+1, reasonNames(e.Stopped()))
			}
			total += e.Evaluations()
		}
		return total
	}
	m, p := evals(true), evals(false)
	if m >= p {
		t.Fatalf("mirrored sampling took %d evaluations over 20 runs, independent sampling %d", m, p)
	}
	t.Logf("sphere, n = 10, 20 runs to 1e-10: mirrored %d, independent %d evaluations (%.2f)", m, p, float64(m)/float64(p))
}
