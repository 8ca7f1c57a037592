package cmaes

// Lazy update of B and D (NumericsLazy). Hansen decomposes C only every
// λ/(c_1 + c_μ)/n/10 evaluations, which keeps the O(n³) decomposition at
// O(n²) per evaluation (Hansen's tutorial, arXiv:1604.00772v2, section B.2;
// pycma's lazy_update_gap). pycma 4.4.0 counts the gap in updates
// (GaussFullSampler.update_now): with g = 1/(c_1 + c_μ)/n/10, the update
// number k (counted from 1 in a run) decomposes C when k ≥ k_last + g, k_last
// being the number of the update that last decomposed it (0 at the start of
// a run, where B = I and D = 1). So does this package, with pycma's c_1 and
// c_μ (Params' defaults, also under self-CMA-ES's rates). For g ≤ 1, every
// update decomposes C, as NumericsDC does.

// lazyGap is g = 1/(c_1 + c_μ)/n/10 of p.
func lazyGap(p Params) float64 {
	return 1 / (p.C1 + p.CMu) / float64(p.N) / 10
}

// lazyGapLong is NumericsLazyLong's g = 0.5/(c_1 + c_μ)/n, purecma.py's
// lazy_gap_evals = 0.5·n·λ/(c_1 + c_μ)/n² evaluations counted in updates
// of λ evaluations. The rule that applies it is NumericsLazy's.
func lazyGapLong(p Params) float64 {
	return 0.5 / (p.C1 + p.CMu) / float64(p.N)
}

// decomposeNow reports whether the update that makes T = t+1 (t = State.T
// before it) decomposes C: always but for NumericsLazy, which decomposes
// when t+1 − State.EigenT ≥ lazyGap, and NumericsLazyLong, the same with
// lazyGapLong.
func (e *ES) decomposeNow() bool {
	switch e.s.Config.Numerics {
	case NumericsLazy:
		return float64(e.s.T+1-e.s.EigenT) >= lazyGap(e.p)
	case NumericsLazyLong:
		return float64(e.s.T+1-e.s.EigenT) >= lazyGapLong(e.p)
	}
	return true
}
