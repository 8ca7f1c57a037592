package cmaes

import "math"

// stagMax bounds the stagnation histories (BIPOP-CMA-ES: at most 20000
// generations).
const stagMax = 20000

// checkStop appends every termination criterion that fires after a told
// generation (docs/algorithm.md §1) to e.stopWhy, each with its value, in
// a fixed order (the stop reasons are persisted in it).
func (e *ES) checkStop(fitness []float64, order []int, best, median float64) {
	e.recordHistories(best, median)
	e.stopLimits()
	e.stopTolFun(fitness, order)
	e.stopTolX()
	e.stopNoEffectAxis()
	e.stopNoEffectCoord()
	if t := e.term; t.ConditionCov > 0 {
		// ConditionCov: condition number of C (before the safeguard's fix).
		if cond := e.conditionBeforeFix(); cond > t.ConditionCov {
			e.addStop(StopConditionCov, cond)
		}
	}
	e.stopStagnation()
	e.stopEqualFunValues(fitness, order)
	// TolUpSigma: σ/σ0 > TolUpSigma · √(max eigenvalue of C), σ0 the σ the
	// run started with (pycma's es.sigma0: a small BIPOP run's own).
	if t := e.term; t.TolUpSigma > 0 {
		if r := e.sigma / e.runSigma0; r > t.TolUpSigma*e.d[e.p.N-1] {
			e.addStop(StopTolUpSigma, r)
		}
	}
}

func (e *ES) addStop(name string, v float64) {
	e.stopWhy = append(e.stopWhy, StopReason{Name: name, Value: v})
}

// recordHistories adds the generation's best and median to the histories
// of TolFun and Stagnation.
func (e *ES) recordHistories(best, median float64) {
	e.funHist[e.funPos] = best
	e.funPos = (e.funPos + 1) % len(e.funHist)
	if e.funN < len(e.funHist) {
		e.funN++
	}
	// Keep only what the Stagnation window can still reach: the last
	// max(120 + 30n/λ, 0.2t) values, at most stagMax. The state stays small
	// (it is persisted every generation) and the criterion is unchanged.
	keep := min(stagMax, max(stagMinLen(e.p.N, e.p.Lambda), int(0.2*float64(e.t))+1)) - 1
	if drop := len(e.stagBest) - keep; drop > 0 {
		copy(e.stagBest, e.stagBest[drop:])
		copy(e.stagMed, e.stagMed[drop:])
		e.stagBest, e.stagMed = e.stagBest[:keep], e.stagMed[:keep]
	}
	e.stagBest = append(e.stagBest, best)
	e.stagMed = append(e.stagMed, median)
}

// stopLimits: MaxEvaluations, TargetFitness and the run's generation limit
// (BIPOP, restart.go: pycma's maxiter, countiter ≥ maxiter).
func (e *ES) stopLimits() {
	t := e.term
	if t.MaxEvaluations > 0 && e.evaluations >= t.MaxEvaluations {
		e.addStop(StopMaxEvaluations, float64(e.evaluations))
	}
	if t.HasTarget && e.hasBest && e.best.F <= t.TargetFitness {
		e.addStop(StopTargetFitness, e.best.F)
	}
	if e.genLimit > 0 && e.t >= e.genLimit {
		e.addStop(StopMaxIter, float64(e.t))
	}
}

// stopTolFun: range of the best values of the last 10 + ⌈30n/λ⌉
// generations and of all finite values of this one.
func (e *ES) stopTolFun(fitness []float64, order []int) {
	t := e.term
	if !(t.TolFun > 0 && e.funN == len(e.funHist)) {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range e.funHist {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, k := range order {
		if v := fitness[k]; !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi-lo < t.TolFun {
		e.addStop(StopTolFun, hi-lo)
	}
}

// stopTolX: σ√C_ii and σ|p_c,i| below TolX for every i.
func (e *ES) stopTolX() {
	if !(e.term.TolX > 0) {
		return
	}
	var worst float64
	for i := range e.p.N {
		worst = math.Max(worst, e.sigma*math.Max(math.Sqrt(e.c.At(i, i)), math.Abs(e.pc[i])))
	}
	if worst < e.term.TolX {
		e.addStop(StopTolX, worst)
	}
}

// stopNoEffectAxis: adding 0.1σ times the principal axis t mod n leaves m
// unchanged.
func (e *ES) stopNoEffectAxis() {
	if e.term.NoEffectAxis {
		return
	}
	n := e.p.N
	i := e.t % n
	for j := range n {
		if e.mean[j]+0.1*e.sigma*e.d[i]*e.b.At(j, i) != e.mean[j] {
			return
		}
	}
	e.addStop(StopNoEffectAxis, float64(i))
}

// stopNoEffectCoord: adding 0.2σ√C_ii to m_i leaves it unchanged.
func (e *ES) stopNoEffectCoord() {
	if e.term.NoEffectCoord {
		return
	}
	for i := range e.p.N {
		if e.mean[i]+0.2*e.sigma*math.Sqrt(e.c.At(i, i)) == e.mean[i] {
			e.addStop(StopNoEffectCoord, float64(i))
			return
		}
	}
}

// stopStagnation (BIPOP-CMA-ES): over the last max(120 + 30n/λ, 0.2t)
// generations, the median of the newest 30 % of the best and of the
// median values is no better than that of the oldest 30 %.
func (e *ES) stopStagnation() {
	if e.term.NoStagnation {
		return
	}
	minLen := stagMinLen(e.p.N, e.p.Lambda)
	h := len(e.stagBest)
	if h < minLen {
		return
	}
	l := max(minLen, min(h, int(0.2*float64(e.t))))
	k := int(0.3 * float64(l))
	bb, mm := e.stagBest[h-l:], e.stagMed[h-l:]
	buf := &e.scratch.sorted
	if medianOf(bb[l-k:], buf) >= medianOf(bb[:k], buf) && medianOf(mm[l-k:], buf) >= medianOf(mm[:k], buf) {
		e.addStop(StopStagnation, float64(l))
	}
}

// stopEqualFunValues (cmaes.m): the best and the ⌈0.1 + λ/4⌉-th value were
// equal in 10 + n of the last 3(10 + n) generations.
func (e *ES) stopEqualFunValues(fitness []float64, order []int) {
	if e.term.NoEqualFunVal {
		return
	}
	k := int(math.Ceil(0.1+float64(e.p.Lambda)/4)) - 1
	if fitness[order[k]] != fitness[order[0]] {
		return
	}
	e.flatGens[e.flatPos] = e.t
	e.flatPos = (e.flatPos + 1) % len(e.flatGens)
	if e.flatN < len(e.flatGens) {
		e.flatN++
	}
	oldest := e.flatGens[e.flatPos%len(e.flatGens)]
	if e.flatN == len(e.flatGens) && oldest > e.t-3*len(e.flatGens) {
		e.addStop(StopEqualFunValues, float64(e.t-oldest))
	}
}

// stagMinLen is the shortest Stagnation window, 120 + ⌈30n/λ⌉ generations.
func stagMinLen(n, lambda int) int { return 120 + int(math.Ceil(30*float64(n)/float64(lambda))) }

// conditionBeforeFix is the condition number of C as the update produced it,
// from the eigenvalues of the last decomposition.
func (e *ES) conditionBeforeFix() float64 {
	vals := e.scratch.eigVals
	lo, hi := vals[0], vals[len(vals)-1]
	if lo <= 0 {
		return math.Inf(1)
	}
	return hi / lo
}

// medianOf returns the median of v in O(len(v)), using buf as scratch.
func medianOf(v []float64, buf *[]float64) float64 {
	s := append((*buf)[:0], v...)
	*buf = s
	m := len(s) / 2
	hi := selectK(s, m)
	if len(s)%2 == 1 {
		return hi
	}
	lo := s[0] // after selectK, s[:m] holds the m smallest values
	for _, x := range s[1:m] {
		lo = math.Max(lo, x)
	}
	return (lo + hi) / 2
}

// selectK reorders s so that s[k] is its k-th smallest value, the values
// before it no larger and those after it no smaller (Hoare's selection with
// a median-of-three pivot), and returns s[k].
func selectK(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for s[j] > pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// checkFailedStop checks the criteria that apply after a generation whose
// every evaluation failed: the budget (failed evaluations count against it)
// and MaxFailedGenerations. Restarting would not help an objective that
// always fails, so StopFailedEvaluations stops an IPOP run too.
func (e *ES) checkFailedStop() {
	e.failedGens++
	if t := e.term; t.MaxEvaluations > 0 && e.evaluations >= t.MaxEvaluations {
		e.stopWhy = append(e.stopWhy, StopReason{Name: StopMaxEvaluations, Value: float64(e.evaluations)})
	}
	if t := e.term; t.MaxFailedGenerations > 0 && e.failedGens >= t.MaxFailedGenerations {
		e.stopWhy = append(e.stopWhy, StopReason{Name: StopFailedEvaluations, Value: float64(e.failedGens)})
	}
}
