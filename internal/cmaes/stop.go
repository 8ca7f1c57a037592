package cmaes

import "math"

// stagMax bounds the stagnation histories (BIPOP-CMA-ES: at most 20000
// generations).
const stagMax = 20000

// checkStop appends every termination criterion that fires after a told
// generation (docs/algorithm.md §1) to e.s.Stop, each with its value, in
// a fixed order (the stop reasons are persisted in it).
func (e *ES) checkStop(fitness []float64, order []int, best, median float64) {
	if e.s.T == 1 {
		e.s.RunStartF = best // TolWorse's reference
	}
	e.recordHistories(best, median)
	e.stopLimits()
	e.stopTolFun(fitness, order)
	e.stopTolX()
	e.stopNoEffectAxis()
	e.stopNoEffectCoord()
	if t := e.term; t.ConditionCov > 0 && e.s.EigenT == e.s.T {
		// ConditionCov: condition number of C (before the safeguard's fix),
		// known after an update that decomposed C (NumericsLazy: lazy.go).
		if cond := e.conditionBeforeFix(); cond > t.ConditionCov {
			e.addStop(StopConditionCov, cond)
		}
	}
	e.stopStagnation()
	e.stopEqualFunValues(fitness, order)
	e.stopTolUpSigma()
}

// stopTolUpSigma: σ/σ0 > TolUpSigma · √(max eigenvalue of C), σ0 the σ the
// run started with (pycma's es.sigma0: a small BIPOP run's own). With
// UpSigmaMoved, σ/σ0 · s² for the scale s the safeguard moved into C in the
// run (σ s / (max D / s): the ratio had the scale stayed in σ), compared in
// logarithms, since s² can overflow.
func (e *ES) stopTolUpSigma() {
	t := e.term
	if !(t.TolUpSigma > 0) {
		return
	}
	r := e.s.Sigma / e.s.RunSigma0
	if !t.UpSigmaMoved {
		if r > t.TolUpSigma*e.s.D[e.p.N-1] {
			e.addStop(StopTolUpSigma, r)
		}
		return
	}
	if lr := math.Log(r) + e.s.RunMovedScale; lr > math.Log(t.TolUpSigma*e.s.D[e.p.N-1]) {
		e.addStop(StopTolUpSigma, math.Exp(lr))
	}
}

func (e *ES) addStop(name string, v float64) {
	e.s.Stop = append(e.s.Stop, StopReason{Name: name, Value: v})
}

// recordHistories adds the generation's best and median to the histories
// of TolFun and Stagnation.
func (e *ES) recordHistories(best, median float64) {
	e.s.FunHist[e.s.FunPos] = best
	e.s.FunPos = (e.s.FunPos + 1) % len(e.s.FunHist)
	if e.s.FunN < len(e.s.FunHist) {
		e.s.FunN++
	}
	// Keep only what the Stagnation window can still reach: the last
	// max(120 + 30n/λ, 0.2t) values, at most stagMax. The state stays small
	// (it is persisted every generation) and the criterion is unchanged.
	keep := min(stagMax, max(stagMinLen(e.p.N, e.p.Lambda), int(0.2*float64(e.s.T))+1)) - 1
	if drop := len(e.s.StagBest) - keep; drop > 0 {
		copy(e.s.StagBest, e.s.StagBest[drop:])
		copy(e.s.StagMed, e.s.StagMed[drop:])
		e.s.StagBest, e.s.StagMed = e.s.StagBest[:keep], e.s.StagMed[:keep]
	}
	e.s.StagBest = append(e.s.StagBest, best)
	e.s.StagMed = append(e.s.StagMed, median)
}

// stopLimits: MaxEvaluations, TargetFitness and the run's generation limit
// (BIPOP, restart.go: pycma's maxiter, countiter ≥ maxiter), which spares
// a small run that found the best point with Restarts.SpareBestSmall.
func (e *ES) stopLimits() {
	t := e.term
	if t.MaxEvaluations > 0 && e.s.Evaluations >= t.MaxEvaluations {
		e.addStop(StopMaxEvaluations, float64(e.s.Evaluations))
	}
	if t.HasTarget && e.s.HasBest && e.s.Best.F <= t.TargetFitness {
		e.addStop(StopTargetFitness, e.s.Best.F)
	}
	if e.s.GenLimit > 0 && e.s.T >= e.s.GenLimit && !e.spareBestSmall() {
		e.addStop(StopMaxIter, float64(e.s.T))
	}
}

// spareBestSmall reports whether Restarts.SpareBestSmall keeps a small
// run past its generation limit: it found the best point so far, and
// maxiter0, the large runs' limit, is not reached.
func (e *ES) spareBestSmall() bool {
	return e.s.Config.Restarts.SpareBestSmall && e.s.Regime == RegimeSmall && e.s.HasBest && !e.bestOfEarlierRun() &&
		e.s.T < maxIter0(e.p.N, e.popsize0())
}

// stopTolFun: range of the best values of the last 10 + ⌈30n/λ⌉
// generations and of all finite values of this one below TolFun; and
// TolWorse, which reads the same values.
func (e *ES) stopTolFun(fitness []float64, order []int) {
	t := e.term
	if !((t.TolFun > 0 || t.TolWorse > 0) && e.s.FunN == len(e.s.FunHist)) {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range e.s.FunHist {
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
	if t.TolWorse > 0 && e.bestOfEarlierRun() && lo > e.s.Best.F && hi-lo < t.TolWorse*(lo-e.s.Best.F) &&
		lo-e.s.Best.F >= t.TolWorseDelta*(e.s.RunStartF-e.s.Best.F) {
		e.addStop(StopTolWorse, (hi-lo)/(lo-e.s.Best.F))
	}
}

// bestOfEarlierRun reports whether the best point so far was told before
// the current run began.
func (e *ES) bestOfEarlierRun() bool {
	ends := e.s.RunEnds
	return e.s.HasBest && len(ends) > 0 && e.s.Best.Generation <= ends[len(ends)-1].Generation
}

// stopTolX: σ√C_ii and σ|p_c,i| below TolX for every i.
func (e *ES) stopTolX() {
	if !(e.term.TolX > 0) {
		return
	}
	var worst float64
	for i := range e.p.N {
		worst = math.Max(worst, e.s.Sigma*math.Max(math.Sqrt(e.s.C.At(i, i)), math.Abs(e.s.PC[i])))
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
	i := e.s.T % n
	for j := range n {
		if e.s.Mean[j]+0.1*e.s.Sigma*e.s.D[i]*e.s.B.At(j, i) != e.s.Mean[j] {
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
		if e.s.Mean[i]+0.2*e.s.Sigma*math.Sqrt(e.s.C.At(i, i)) == e.s.Mean[i] {
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
	h := len(e.s.StagBest)
	if h < minLen {
		return
	}
	l := max(minLen, min(h, int(0.2*float64(e.s.T))))
	k := int(0.3 * float64(l))
	bb, mm := e.s.StagBest[h-l:], e.s.StagMed[h-l:]
	buf := &e.scratch.sorted
	if medianOf(bb[l-k:], buf) >= medianOf(bb[:k], buf) && medianOf(mm[l-k:], buf) >= medianOf(mm[:k], buf) {
		e.addStop(StopStagnation, float64(l))
	}
}

// stopEqualFunValues (cmaes.m): the best and the ⌈0.1 + λ/4⌉-th value were
// equal in 10 + n of the last 3(10 + n) generations. With
// Termination.FlatFitness, pycma's tolflatfitness instead: the best and
// the value of rank ⌊0.75λ⌋ (from 0) were equal in this generation and the
// one before (pycma: flatfit_iterations > tolflatfitness = 1). Both keep
// the flat generations t of the run in the ring FlatGens.
func (e *ES) stopEqualFunValues(fitness []float64, order []int) {
	if e.term.NoEqualFunVal {
		return
	}
	k := int(math.Ceil(0.1+float64(e.p.Lambda)/4)) - 1
	if e.term.FlatFitness {
		k = int(0.75 * float64(e.p.Lambda))
	}
	if fitness[order[k]] != fitness[order[0]] {
		return
	}
	ring := e.s.FlatGens
	prev := ring[(e.s.FlatPos+len(ring)-1)%len(ring)] // the last flat generation before this one
	hadPrev := e.s.FlatN > 0
	ring[e.s.FlatPos] = e.s.T
	e.s.FlatPos = (e.s.FlatPos + 1) % len(ring)
	if e.s.FlatN < len(ring) {
		e.s.FlatN++
	}
	if e.term.FlatFitness {
		if hadPrev && prev == e.s.T-1 {
			e.addStop(StopTolFlatFitness, 2)
		}
		return
	}
	oldest := ring[e.s.FlatPos%len(ring)]
	if e.s.FlatN == len(ring) && oldest > e.s.T-3*len(ring) {
		e.addStop(StopEqualFunValues, float64(e.s.T-oldest))
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
	e.s.FailedGenerations++
	if t := e.term; t.MaxEvaluations > 0 && e.s.Evaluations >= t.MaxEvaluations {
		e.s.Stop = append(e.s.Stop, StopReason{Name: StopMaxEvaluations, Value: float64(e.s.Evaluations)})
	}
	if t := e.term; t.MaxFailedGenerations > 0 && e.s.FailedGenerations >= t.MaxFailedGenerations {
		e.s.Stop = append(e.s.Stop, StopReason{Name: StopFailedEvaluations, Value: float64(e.s.FailedGenerations)})
	}
}
