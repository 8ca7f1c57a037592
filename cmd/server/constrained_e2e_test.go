package main

import (
	"encoding/json"
	"math"
	"testing"
)

// algConstrained is the kill tests' constrained session: CMA-ES on the
// 10-D sphere from x = 3 subject to x_0 + 1 ≤ 0 (active at the optimum,
// x = (−1, 0, …), f = 1) and Σx² ≤ 100, with unknown constraint values
// (null) in some generations, stopped by max_evaluations (target_fitness
// does not go with constraints).
const algConstrained = "cma-es+constraints"

// constrainedEvaluations is its budget: the seeded run's best feasible f
// is within 1e-8 of 1 well before (reference checks it).
const constrainedEvaluations = 3000

func constrainedBody() map[string]any {
	x0 := make([]float64, 10)
	for i := range x0 {
		x0[i] = 3
	}
	return map[string]any{"x0": x0, "sigma0": 2, "algorithm": "cma-es", "seed": 20140613,
		"constraints": map[string]any{"count": 2}, "termination": map[string]any{"max_evaluations": constrainedEvaluations}}
}

// tellFor is the tell of batch b for a session of the kill tests' kind
// alg: tellOf's, with constraint values for algConstrained (candidate 1's
// second one unknown every fifth generation, candidate 3's row every
// seventh).
func tellFor(alg string, b e2eBatch) map[string]any {
	if alg == algMixed {
		return mixedTellOf(b)
	}
	tell := tellOf(b)
	if alg != algConstrained {
		return tell
	}
	g := make([]any, len(b.Candidates))
	for k, x := range b.Candidates {
		s := 0.0
		for _, v := range x {
			s += v * v
		}
		row := []any{x[0] + 1, s - 100}
		switch {
		case k == 1 && b.Generation%5 == 0:
			row[1] = nil
		case k == 3 && b.Generation%7 == 0:
			continue // g[k] null
		}
		g[k] = row
	}
	tell["constraint_values"] = g
	return tell
}

// partFor is the partial tell of candidates from to to−1 of tell.
func partFor(tell map[string]any, from, to int) map[string]any {
	p := partOf(tell["generation"].(int), tell["fitness"].([]float64), from, to)
	if g, ok := tell["constraint_values"].([]any); ok {
		p["constraint_values"] = g[from:to]
	}
	return p
}

// checkConstrainedReference checks the end of the uninterrupted
// constrained run, the session's answer b: stopped by max_evaluations, its
// best feasible point within 1e-8 of the optimum and feasible.
func checkConstrainedReference(t *testing.T, b []byte) {
	t.Helper()
	var s struct {
		StopReasons []struct {
			Name string `json:"name"`
		} `json:"stop_reasons"`
		BestFeasible *struct {
			X []float64 `json:"x"`
			F float64   `json:"f"`
			G []float64 `json:"g"`
		} `json:"best_feasible"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	bf := s.BestFeasible
	if len(s.StopReasons) != 1 || s.StopReasons[0].Name != "max_evaluations" || bf == nil || !(math.Abs(bf.F-1) <= 1e-8) ||
		bf.X[0]+1 > 0 || bf.G[0] > 0 || bf.G[1] > 0 {
		t.Fatalf("%s: the uninterrupted run ended %s, want stopped by max_evaluations with a feasible point within 1e-8 of f = 1", algConstrained, b)
	}
}
