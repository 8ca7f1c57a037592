package sepcma

import (
	"math"

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
	keep := min(stagMax, max(cmaes.StagnationMinLength(n, e.p.Lambda), int(0.2*float64(s.T))+1)) - 1
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
		minLen := cmaes.StagnationMinLength(n, e.p.Lambda)
		if h := len(s.StagBest); h >= minLen {
			l := max(minLen, min(h, int(0.2*float64(s.T))))
			k := int(0.3 * float64(l))
			bb, mm := s.StagBest[h-l:], s.StagMed[h-l:]
			buf := &e.sc.sorted
			if cmaes.Median(bb[l-k:], buf) >= cmaes.Median(bb[:k], buf) && cmaes.Median(mm[l-k:], buf) >= cmaes.Median(mm[:k], buf) {
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
