package cmaes

import "math"

// Restarts (docs/algorithm.md §1, "Restarts"): IPOP (Auger and Hansen,
// CEC 2005) and BIPOP (N. Hansen, "Benchmarking a BI-population CMA-ES on
// the BBOB-2009 function testbed", GECCO 2009), the latter as pycma 4.4.0's
// fmin runs it (cma/evolution_strategy.py, the restart loop of fmin): where
// the two differ we follow pycma, the peer we are measured against, and
// say so below.
//
// NIPOP and NBIPOP (I. Loshchilov, M. Schoenauer, M. Sebag, "Alternative
// restart strategies for CMA-ES", PPSN 2012, and "Black-box optimization
// benchmarking of NIPOP-aCMA-ES and NBIPOP-aCMA-ES on the BBOB-2012
// noiseless testbed", GECCO 2012; I. Loshchilov, "CMA-ES with restarts
// for solving CEC 2013 benchmark problems", CEC 2013) change two rules of
// IPOP and BIPOP, Restarts.SigmaDec and Restarts.Budget:
//   - the k-th large run starts from σ0/ρ_σdec^k, ρ_σdec = 1.6: λ doubles
//     and σ0 shrinks at each large restart (NIPOP; NBIPOP's large regime);
//   - NBIPOP: the regime (small or large) of the run that found the best
//     point so far gets ρ_budget = 2 times the evaluations of the other
//     one before the other runs again; BIPOP's equal budgets otherwise.
// The rules and constants are also those of a public implementation
// citing these papers (M. Gimelfarb's bipop_cmaes.cpp). The rest is our
// BIPOP (pycma's): the small regime's draws, the generation limits, the
// first run's evaluations counted as small; so a best point of the first
// run makes the small regime the better one (that implementation credits
// it to the large one).
//
// Restarts.SpareBestSmall (ours; docs/algorithm.md §5, "Sparing the small
// run that holds the best point"): a small run that found the best point
// so far outlives its generation limit, up to maxiter0 (stop.go).

// The regimes of a run, as RunEnd.Regime, Record.Regime and ES.Regime
// report them.
const (
	RegimeDefault = "default" // the first run: the Config's λ (λ0), σ0 and X0
	RegimeLarge   = "large"   // an IPOP restart, or a large BIPOP restart: λ0·IncPopSize^k, σ0
	RegimeSmall   = "small"   // a small BIPOP run: smaller λ and σ, a generation limit
)

// regime is a run's regime, by number (the State names it).
type regime uint8

const (
	regimeDefault regime = iota
	regimeLarge
	regimeSmall
	regimeCount
)

var regimeNames = [regimeCount]string{RegimeDefault, RegimeLarge, RegimeSmall}

func (r regime) String() string { return regimeNames[r] }

// regimeOf is the regime named s (RegimeDefault for a name it does not
// know: RunEnds are made only by this file).
func regimeOf(s string) regime {
	for r, name := range regimeNames {
		if name == s {
			return regime(r)
		}
	}
	return regimeDefault
}

// maxRestartValues bounds λn of a restart's population: a restart that
// would need more ends the ES instead (its λ×n matrices would not fit in
// memory; λ0 = 10 doubled 20 times at n = 16 is there).
const maxRestartValues = 1 << 24

// lambda0 is λ of the first run.
func (e *ES) lambda0() int {
	if e.s.Config.Lambda != 0 {
		return e.s.Config.Lambda
	}
	return DefaultLambda(len(e.s.Config.X0))
}

// popsize0 is pycma's popsize0, the base of BIPOP's populations and of
// maxiter0: the unrounded 4 + 3 ln n of pycma's default popsize option
// when the first run has the default λ (10.9 at n = 10, so the large runs
// have λ = 21, 43, 87, …), else λ0. Measured at n = 20 (f15, f16, f18,
// 10 instances), the integer λ0 (20, 40, 80, …) solved 7 of 30 runs and
// this one 14. IPOP multiplies λ0 itself, as before IncPopSize and BIPOP
// existed, so that an IPOP session doubles λ exactly as it always did.
func (e *ES) popsize0() float64 {
	if e.s.Config.Restarts.BIPOP && e.s.Config.Lambda == 0 {
		return 4 + 3*math.Log(float64(len(e.s.Config.X0)))
	}
	return float64(e.lambda0())
}

// incPopSize is Restarts.IncPopSize with its default.
func (e *ES) incPopSize() float64 {
	if v := e.s.Config.Restarts.IncPopSize; v != 0 {
		return v
	}
	return DefaultIncPopSize
}

// largeLambda is λ of the k-th large run, ⌊λ0·inc^k⌋ (pycma: popsize0 ·
// incpopsize**(irun − runs_with_small)); false if λn would exceed
// maxRestartValues.
func largeLambda(lambda0 float64, inc float64, k, n int) (int, bool) {
	l := lambda0 * math.Pow(inc, float64(k))
	if !(l*float64(n) <= maxRestartValues) {
		return 0, false
	}
	return int(l), true
}

// maxIter0 is the generation limit of BIPOP's first and large runs:
// pycma's default maxiter, 100 + 150(n + 3)² // √λ0, with Python's floor
// division of floats (popsize0: pycma evaluates the option with it).
func maxIter0(n int, popsize0 float64) int {
	a := 150 * float64(n+3) * float64(n+3)
	return 100 + int(pyFloorDiv(a, math.Sqrt(popsize0)))
}

// pyFloorDiv is Python's a // b for floats a ≥ 0, b > 0 (float_floor_div:
// fmod, then floor with its correction).
func pyFloorDiv(a, b float64) float64 {
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if div == 0 {
		return 0
	}
	fd := math.Floor(div)
	if div-fd > 0.5 {
		fd++
	}
	return fd
}

// mayRestart reports whether the criteria that stopped the run start a new
// one: restarts configured, fewer than Max (large) restarts so far, no
// criterion that a restart does not mend, and the next large λ in memory.
func (e *ES) mayRestart() bool {
	rs := e.s.Config.Restarts
	if !rs.IPOP && !rs.BIPOP || e.largeRuns >= rs.Max {
		return false
	}
	for _, r := range e.s.Stop {
		switch r.Name {
		case StopMaxEvaluations, StopTargetFitness, StopNumerical, StopFailedEvaluations:
			return false
		}
	}
	_, ok := largeLambda(e.popsize0(), e.incPopSize(), e.largeRuns+1, e.p.N)
	return ok
}

// restart ends the current run, which stopped in generation gen, and
// starts the next one (mayRestart said so). Its random draws come from the
// ES's stream in this order: for a small BIPOP run U for σ, then U for λ
// (pycma's order); then, with Point.Uniform, the n coordinates of the
// mean.
func (e *ES) restart(gen int) error {
	// The run's evaluations count as small (the first run too, as in
	// pycma) or large.
	evals := e.s.Evaluations - e.smallEvals - e.largeEvals
	if e.s.Regime == RegimeLarge {
		e.largeEvals += evals
	} else {
		e.smallEvals += evals
	}
	e.s.RunEnds = append(e.s.RunEnds, RunEnd{Generation: gen, Lambda: e.p.Lambda, Reasons: e.s.Stop,
		Regime: e.s.Regime, Sigma0: e.s.RunSigma0})
	e.s.Stop = nil
	e.s.Run++

	rs, n := e.s.Config.Restarts, len(e.s.Config.X0)
	inc := e.incPopSize()
	next, sigma0, limit := regimeLarge, e.s.Config.Sigma0, 0
	if rs.BIPOP && e.smallFirst() {
		next = regimeSmall
	}
	var lambda int
	switch next {
	case regimeSmall:
		// pycma: sigma_factor = 0.01**U; popsize = int(popsize0 ·
		// (incpopsize**k)**(U²)) with k the large runs so far; maxiter =
		// min(maxiter0, 0.5·sum(large_i)/popsize). Hansen's paper draws
		// λ_s = ⌊λ_def(½λ_l/λ_def)^{U²}⌋ from half the next large λ and
		// bounds the small runs' budget by the large runs' alone; pycma
		// takes the last large run's λ, as we do.
		uSigma := e.rnd.Float64()
		uLambda := e.rnd.Float64()
		sigma0 = math.Pow(0.01, uSigma) * e.s.Config.Sigma0
		mult := math.Pow(inc, float64(e.largeRuns))
		lambda = max(2, int(e.popsize0()*math.Pow(mult, uLambda*uLambda)))
		maxIter := math.Min(float64(maxIter0(n, e.popsize0())), 0.5*float64(e.largeEvals)/float64(lambda))
		limit = max(1, int(math.Ceil(maxIter))) // pycma stops once countiter ≥ maxiter
	default:
		e.largeRuns++
		lambda, _ = largeLambda(e.popsize0(), inc, e.largeRuns, n)
		if d := rs.SigmaDec; d > 1 {
			sigma0 /= math.Pow(d, float64(e.largeRuns)) // NIPOP, NBIPOP
		}
		if rs.BIPOP {
			limit = maxIter0(n, e.popsize0()) // pycma: maxiter = maxiter0
		}
	}
	if err := e.startRun(lambda); err != nil {
		return err
	}
	e.s.Regime, e.s.RunSigma0, e.s.GenLimit = next.String(), sigma0, limit
	if e.meanRateUsed() {
		e.s.MeanRate = newMeanRate(n)
	}
	e.s.Sigma = sigma0
	if rs.Point.Uniform {
		region := rs.Point.Region
		if region == nil {
			region = e.s.Config.Bounds
		}
		for i := range e.s.Mean {
			lo, up := region.Lower[i], region.Upper[i]
			e.s.Mean[i] = lo + (up-lo)*e.rnd.Float64()
		}
	}
	return nil
}

// smallFirst reports whether BIPOP's next run is small: pycma's
// sum(small_i) < bipop · max(1, sum(large_i)), bipop = 1; NBIPOP weighs
// the budgets by ρ_budget in favour of the regime of the best point.
func (e *ES) smallFirst() bool {
	small, large := float64(e.smallEvals), float64(max(1, e.largeEvals))
	if b := e.s.Config.Restarts.Budget; b > 1 {
		switch e.bestRegime() {
		case regimeLarge:
			small *= b
		case regimeSmall:
			large *= b
		}
	}
	return small < large
}

// bestRegime is the budget regime of the run that found the best point
// so far: regimeLarge or regimeSmall (the first run's evaluations count
// as small, so its regime does too), regimeDefault without a best point.
// Run i ended in generation RunEnds[i].Generation; the best point has the
// generation it was told in.
func (e *ES) bestRegime() regime {
	if !e.s.HasBest {
		return regimeDefault
	}
	g := e.s.Best.Generation
	for _, r := range e.s.RunEnds {
		if g <= r.Generation {
			if regimeOf(r.Regime) == regimeLarge {
				return regimeLarge
			}
			return regimeSmall
		}
	}
	if e.s.Regime == RegimeLarge {
		return regimeLarge
	}
	return regimeSmall
}

// tallyRuns sets the bookkeeping of restarts from the run ends and the
// current run's regime: the evaluations of the ended runs counted as small
// and as large, and the large runs so far (a decoder's; restart keeps
// them up to date). Every generation of a run has its λ, so run i had
// (Generation_i − Generation_{i−1})·Lambda_i evaluations.
func (e *ES) tallyRuns() {
	e.smallEvals, e.largeEvals, e.largeRuns = 0, 0, 0
	prev := -1
	for _, r := range e.s.RunEnds {
		evals := (r.Generation - prev) * r.Lambda
		prev = r.Generation
		if regimeOf(r.Regime) == regimeLarge {
			e.largeEvals += evals
			e.largeRuns++
		} else {
			e.smallEvals += evals
		}
	}
	if e.s.Regime == RegimeLarge {
		e.largeRuns++
	}
}
