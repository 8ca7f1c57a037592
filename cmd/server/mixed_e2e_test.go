package main

// algMixed is the kill tests' mixed session: CatCMA with margin
// (algorithm catcma) on SphereIntCOM with three continuous coordinates in
// [−1, 5], three integer variables (−2 … 8, one of them discretised
// reals) and three categorical ones of 5 choices, from x0 = 3, to the
// target 1e-8 (every integer at 0, every category 0, Σx² ≤ 1e-8).
const algMixed = "catcma"

func mixedBody() map[string]any {
	ints := []float64{-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	return map[string]any{"x0": []float64{3, 3, 3}, "seed": 20140613,
		"bounds":      map[string]any{"lower": []float64{-1, -1, -1}, "upper": []float64{5, 5, 5}},
		"integers":    [][]float64{ints, ints, {-0.5, 0, 0.25, 0.5, 1}},
		"categories":  []int{5, 5, 5},
		"termination": map[string]any{"target_fitness": 1e-8}}
}

// mixedTellOf is the tell of a mixed batch: Σx² + Σz² + the number of
// categories not 0.
func mixedTellOf(b e2eBatch) map[string]any {
	f := make([]float64, len(b.Candidates))
	for k, x := range b.Candidates {
		for _, v := range x {
			f[k] += v * v
		}
		for _, v := range b.Z[k] {
			f[k] += v * v
		}
		for _, c := range b.C[k] {
			if c != 0 {
				f[k]++
			}
		}
	}
	return map[string]any{"generation": b.Generation, "fitness": f}
}

// points is the batch as the kill tests compare it: each candidate's x,
// then (a mixed session's) z and c.
func (b e2eBatch) points() [][]float64 {
	if b.Z == nil {
		return b.Candidates
	}
	out := make([][]float64, len(b.Candidates))
	for k, x := range b.Candidates {
		p := append(append([]float64(nil), x...), b.Z[k]...)
		for _, c := range b.C[k] {
			p = append(p, float64(c))
		}
		out[k] = p
	}
	return out
}
