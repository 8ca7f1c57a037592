package sepcma

import (
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Restarts: IPOP and BIPOP with cmaes.Restarts's semantics, which are
// pycma 4.4.0's fmin (internal/cmaes/restart.go, docs/algorithm.md §1).
// The schedule, the random draws and their order are cmaes's.

// lambda0 is λ of the first run.
func (e *ES) lambda0() int {
	if l := e.s.Config.Lambda; l != 0 {
		return l
	}
	return DefaultLambda(len(e.s.Config.X0))
}

// popsize0 is the base of BIPOP's populations: pycma's unrounded
// 4 + 3 ln n when the first run has the default λ, else λ0 (cmaes's).
func (e *ES) popsize0() float64 {
	if e.s.Config.Restarts.BIPOP && e.s.Config.Lambda == 0 {
		return 4 + 3*math.Log(float64(len(e.s.Config.X0)))
	}
	return float64(e.lambda0())
}

// largeRuns counts the large runs so far, the current one included.
func (e *ES) largeRuns() int {
	k := 0
	for _, r := range e.s.RunEnds {
		if r.Regime == cmaes.RegimeLarge {
			k++
		}
	}
	if e.s.Regime == cmaes.RegimeLarge {
		k++
	}
	return k
}

// regimeEvals returns the evaluations of the ended runs counted as small
// (the first run included) and as large.
func (e *ES) regimeEvals() (small, large int) {
	prev := -1
	for _, r := range e.s.RunEnds {
		evals := (r.Generation - prev) * r.Lambda
		prev = r.Generation
		if r.Regime == cmaes.RegimeLarge {
			large += evals
		} else {
			small += evals
		}
	}
	return small, large
}

// mayRestart reports whether the criteria that stopped the run start a new
// one (cmaes's rule).
func (e *ES) mayRestart() bool {
	rs := e.s.Config.Restarts
	if !rs.IPOP && !rs.BIPOP || e.largeRuns() >= rs.Max {
		return false
	}
	for _, r := range e.s.Stop {
		switch r.Name {
		case cmaes.StopMaxEvaluations, cmaes.StopTargetFitness, cmaes.StopNumerical, cmaes.StopFailedEvaluations, cmaes.StopRequested:
			return false
		}
	}
	_, ok := cmaes.LargeLambda(e.popsize0(), rs.IncPopSize, e.largeRuns()+1, e.p.N)
	return ok
}

// restart ends the current run, stopped in generation gen, and starts the
// next: a large run (λ0·inc^k, σ0), or with BIPOP a small one while the
// small runs spent fewer evaluations than the large ones. Draws, in order:
// for a small run U for σ, then U for λ; then with Point.Uniform the n
// coordinates of the mean.
func (e *ES) restart(gen int) error {
	s := &e.s
	largeRuns := e.largeRuns() // the ended run included
	s.RunEnds = append(s.RunEnds, cmaes.RunEnd{Generation: gen, Lambda: e.p.Lambda, Reasons: s.Stop,
		Regime: s.Regime, Sigma0: s.RunSigma0})
	s.Stop = nil
	s.Run++
	small, large := e.regimeEvals()
	rs, n := s.Config.Restarts, len(s.Config.X0)
	next, sigma0, limit := cmaes.RegimeLarge, s.Config.Sigma0, 0
	if rs.BIPOP && small < max(1, large) {
		next = cmaes.RegimeSmall
	}
	var lambda int
	if next == cmaes.RegimeSmall {
		uSigma, uLambda := e.rnd.Float64(), e.rnd.Float64()
		sigma0 = math.Pow(0.01, uSigma) * s.Config.Sigma0
		mult := math.Pow(rs.IncPopSize, float64(largeRuns))
		lambda = max(2, int(e.popsize0()*math.Pow(mult, uLambda*uLambda)))
		maxIter := math.Min(float64(cmaes.MaxIter0(n, e.popsize0())), 0.5*float64(large)/float64(lambda))
		limit = max(1, int(math.Ceil(maxIter)))
	} else {
		lambda, _ = cmaes.LargeLambda(e.popsize0(), rs.IncPopSize, largeRuns+1, n)
		if rs.BIPOP {
			limit = cmaes.MaxIter0(n, e.popsize0())
		}
	}
	if err := e.startRun(lambda); err != nil {
		return err
	}
	s.Regime, s.RunSigma0, s.GenLimit = next, sigma0, limit
	s.Sigma = sigma0
	e.term = s.Config.Termination.Resolved(s.Config.Sigma0)
	if rs.Point.Uniform {
		r := rs.Point.Region
		if r == nil {
			r = s.Config.Bounds
		}
		for i := range s.Mean {
			s.Mean[i] = r.Lower[i] + (r.Upper[i]-r.Lower[i])*e.rnd.Float64()
		}
	}
	return nil
}

// MaxLambda is the largest population a run of cfg can reach: λ0 without
// restarts, else that of the last large restart allowed (a small BIPOP
// run's is smaller).
func (cfg Config) MaxLambda() int {
	n := len(cfg.X0)
	l0 := cfg.Lambda
	if l0 == 0 {
		l0 = DefaultLambda(n)
	}
	rs := cfg.resolved().Restarts
	if !rs.IPOP && !rs.BIPOP {
		return l0
	}
	base := float64(l0)
	if rs.BIPOP && cfg.Lambda == 0 {
		base = 4 + 3*math.Log(float64(n))
	}
	best := l0
	for k := 1; k <= rs.Max; k++ {
		l, ok := cmaes.LargeLambda(base, rs.IncPopSize, k, n)
		if !ok {
			break
		}
		best = max(best, l)
	}
	return best
}
