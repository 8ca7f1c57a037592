package sepcma

import (
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// stagMax bounds the stagnation histories, as cmaes's (BIPOP-CMA-ES: at
// most 20000 generations).
const stagMax = 20000

// checkStop appends every termination criterion that fires after a told
// generation to the stop reasons: cmaes's criteria (docs/algorithm.md §1),
// where C's principal axes are the coordinate axes and its eigenvalues
// the C_ii.
func (e *ES) checkStop(fitness []float64, order []int, best, median float64) {
	s, n := &e.s, e.p.N

	s.FunHist[s.FunPos] = best
	s.FunPos = (s.FunPos + 1) % len(s.FunHist)
	s.FunN = min(s.FunN+1, len(s.FunHist))
	keep := min(stagMax, max(stagMinLen(n, e.p.Lambda), int(0.2*float64(s.T))+1)) - 1
	if drop := len(s.StagBest) - keep; drop > 0 {
		s.StagBest = append(s.StagBest[:0], s.StagBest[drop:]...)
		s.StagMed = append(s.StagMed[:0], s.StagMed[drop:]...)
	}
	s.StagBest = append(s.StagBest, best)
	s.StagMed = append(s.StagMed, median)

	e.checkBudget()
	e.checkTolerances(fitness, order)
	e.checkNoEffect()
	e.checkHistory(fitness, order)
}

// checkBudget: MaxEvaluations, TargetFitness, MaxIter.
func (e *ES) checkBudget() {
	s, t := &e.s, e.term
	if t.MaxEvaluations > 0 && s.Evaluations >= t.MaxEvaluations {
		e.addStop(cmaes.StopMaxEvaluations, float64(s.Evaluations))
	}
	if t.HasTarget && s.HasBest && s.Best.F <= t.TargetFitness {
		e.addStop(cmaes.StopTargetFitness, s.Best.F)
	}
	if s.GenLimit > 0 && s.T >= s.GenLimit {
		e.addStop(cmaes.StopMaxIter, float64(s.T))
	}
}

// checkTolerances: TolFun and TolX.
func (e *ES) checkTolerances(fitness []float64, order []int) {
	s, t, n := &e.s, e.term, e.p.N

	// TolFun: range of the recent bests and of this generation's values.
	if t.TolFun > 0 && s.FunN == len(s.FunHist) {
		lo, hi := minOf(s.FunHist), maxOf(s.FunHist)
		for _, k := range order {
			if v := fitness[k]; !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if hi-lo < t.TolFun {
			e.addStop(cmaes.StopTolFun, hi-lo)
		}
	}

	// TolX: σ√C_ii and σ|p_c,i| below TolX for every i.
	if t.TolX > 0 {
		var worst float64
		for i := range n {
			worst = math.Max(worst, s.Sigma*math.Max(e.d[i], math.Abs(s.PC[i])))
		}
		if worst < t.TolX {
			e.addStop(cmaes.StopTolX, worst)
		}
	}
}

// checkNoEffect: NoEffectAxis, NoEffectCoord, ConditionCov.
func (e *ES) checkNoEffect() {
	s, t, n := &e.s, e.term, e.p.N

	// NoEffectAxis: adding 0.1σ times the principal axis t mod n, here
	// √C_ii e_i, leaves m unchanged.
	if !t.NoEffectAxis {
		if i := s.T % n; s.Mean[i]+0.1*s.Sigma*e.d[i] == s.Mean[i] {
			e.addStop(cmaes.StopNoEffectAxis, float64(i))
		}
	}

	// NoEffectCoord: adding 0.2σ√C_ii to m_i leaves it unchanged.
	if !t.NoEffectCoord {
		for i := range n {
			if s.Mean[i]+0.2*s.Sigma*e.d[i] == s.Mean[i] {
				e.addStop(cmaes.StopNoEffectCoord, float64(i))
				break
			}
		}
	}

	// ConditionCov: max C_ii / min C_ii.
	if t.ConditionCov > 0 {
		if cond := e.condition(); cond > t.ConditionCov {
			e.addStop(cmaes.StopConditionCov, cond)
		}
	}
}

// checkHistory: Stagnation, EqualFunValues, TolUpSigma.
func (e *ES) checkHistory(fitness []float64, order []int) {
	s, t, n := &e.s, e.term, e.p.N

	// Stagnation (BIPOP-CMA-ES), as cmaes's.
	if !t.NoStagnation {
		minLen := stagMinLen(n, e.p.Lambda)
		if h := len(s.StagBest); h >= minLen {
			l := max(minLen, min(h, int(0.2*float64(s.T))))
			k := int(0.3 * float64(l))
			bb, mm := s.StagBest[h-l:], s.StagMed[h-l:]
			buf := &e.sc.sorted
			if median3(bb[l-k:], buf) >= median3(bb[:k], buf) && median3(mm[l-k:], buf) >= median3(mm[:k], buf) {
				e.addStop(cmaes.StopStagnation, float64(l))
			}
		}
	}

	// EqualFunValues (cmaes.m): the best and the ⌈0.1 + λ/4⌉-th value were
	// equal in 10 + n of the last 3(10 + n) generations.
	if !t.NoEqualFunVal {
		k := int(math.Ceil(0.1+float64(e.p.Lambda)/4)) - 1
		if fitness[order[k]] == fitness[order[0]] {
			s.FlatGens[s.FlatPos] = s.T
			s.FlatPos = (s.FlatPos + 1) % len(s.FlatGens)
			s.FlatN = min(s.FlatN+1, len(s.FlatGens))
			oldest := s.FlatGens[s.FlatPos]
			if s.FlatN == len(s.FlatGens) && oldest > s.T-3*len(s.FlatGens) {
				e.addStop(cmaes.StopEqualFunValues, float64(s.T-oldest))
			}
		}
	}

	// TolUpSigma: σ/σ0 > TolUpSigma · max √C_ii, σ0 the run's.
	if t.TolUpSigma > 0 {
		if r := s.Sigma / s.RunSigma0; r > t.TolUpSigma*maxOf(e.d) {
			e.addStop(cmaes.StopTolUpSigma, r)
		}
	}
}

// condition is max C_ii / min C_ii (+Inf when some C_ii ≤ 0).
func (e *ES) condition() float64 {
	lo := minOf(e.s.C)
	if lo <= 0 {
		return math.Inf(1)
	}
	return maxOf(e.s.C) / lo
}

// stagMinLen is the shortest Stagnation window, 120 + ⌈30n/λ⌉ generations.
func stagMinLen(n, lambda int) int { return 120 + int(math.Ceil(30*float64(n)/float64(lambda))) }

// median3 is the median of v, using buf as scratch (v is not changed):
// O(len(v)) by selection, as cmaes's medianOf, since the windows grow to
// 0.3·stagMax values and are checked every generation.
func median3(v []float64, buf *[]float64) float64 {
	s := append((*buf)[:0], v...)
	*buf = s
	m := len(s) / 2
	hi := selectK(s, m)
	if len(s)%2 == 1 {
		return hi
	}
	return (slices.Max(s[:m]) + hi) / 2 // s[:m] holds the m smallest values
}

// selectK reorders s so that s[k] is its k-th smallest value, those before
// it no larger and those after no smaller (Hoare's selection with a
// median-of-three pivot), and returns s[k].
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
// every evaluation failed, as cmaes's.
func (e *ES) checkFailedStop() {
	s, t := &e.s, e.term
	s.FailedGens++
	if t.MaxEvaluations > 0 && s.Evaluations >= t.MaxEvaluations {
		e.addStop(cmaes.StopMaxEvaluations, float64(s.Evaluations))
	}
	if t.MaxFailedGenerations > 0 && s.FailedGens >= t.MaxFailedGenerations {
		e.addStop(cmaes.StopFailedEvaluations, float64(s.FailedGens))
	}
}
