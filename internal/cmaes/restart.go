package cmaes

import "math"

// Restarts (docs/algorithm.md §1, "Restarts"): IPOP (Auger and Hansen,
// CEC 2005) and BIPOP (N. Hansen, "Benchmarking a BI-population CMA-ES on
// the BBOB-2009 function testbed", GECCO 2009), the latter as pycma 4.4.0's
// fmin runs it (cma/evolution_strategy.py, the restart loop of fmin): where
// the two differ we follow pycma, the peer we are measured against, and
// say so below.

// The regimes of a run, as RunEnd.Regime, Record.Regime and ES.Regime
// report them.
const (
	RegimeDefault = "default" // the first run: the Config's λ (λ0), σ0 and X0
	RegimeLarge   = "large"   // an IPOP restart, or a large BIPOP restart: λ0·IncPopSize^k, σ0
	RegimeSmall   = "small"   // a small BIPOP run: smaller λ and σ, a generation limit
)

// regime is a run's regime as the state holds it (the encoding writes its
// number).
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

// lambda0 is λ of the first run: pycma's popsize0 for BIPOP. pycma keeps
// the unrounded 4 + 3 ln n of its default popsize option there (10.9 at
// n = 10, so its large runs have λ = 21, 43, 87, …); we keep the first
// run's λ, an integer, as Hansen's paper does (20, 40, 80, …), so that an
// IPOP restart doubles λ exactly as before IncPopSize existed.
func (e *ES) lambda0() int {
	if e.cfg.Lambda != 0 {
		return e.cfg.Lambda
	}
	return DefaultLambda(len(e.cfg.X0))
}

// incPopSize is Restarts.IncPopSize with its default.
func (e *ES) incPopSize() float64 {
	if v := e.cfg.Restarts.IncPopSize; v != 0 {
		return v
	}
	return DefaultIncPopSize
}

// largeLambda is λ of the k-th large run, ⌊λ0·inc^k⌋ (pycma: popsize0 ·
// incpopsize**(irun − runs_with_small)); false if λn would exceed
// maxRestartValues.
func largeLambda(lambda0 int, inc float64, k, n int) (int, bool) {
	l := float64(lambda0) * math.Pow(inc, float64(k))
	if !(l*float64(n) <= maxRestartValues) {
		return 0, false
	}
	return int(l), true
}

// maxIter0 is the generation limit of BIPOP's first and large runs:
// pycma's default maxiter, 100 + 150(n + 3)² // √λ0, with Python's floor
// division of floats (λ0 the first run's λ, see lambda0).
func maxIter0(n, lambda0 int) int {
	a := 150 * float64(n+3) * float64(n+3)
	return 100 + int(pyFloorDiv(a, math.Sqrt(float64(lambda0))))
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
	rs := e.cfg.Restarts
	if !rs.IPOP && !rs.BIPOP || e.largeRuns >= rs.Max {
		return false
	}
	for _, r := range e.stopWhy {
		switch r.Name {
		case StopMaxEvaluations, StopTargetFitness, StopNumerical, StopFailedEvaluations:
			return false
		}
	}
	_, ok := largeLambda(e.lambda0(), e.incPopSize(), e.largeRuns+1, e.p.N)
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
	evals := e.evaluations - e.smallEvals - e.largeEvals
	if e.regime == regimeLarge {
		e.largeEvals += evals
	} else {
		e.smallEvals += evals
	}
	e.runEnds = append(e.runEnds, RunEnd{Generation: gen, Lambda: e.p.Lambda, Reasons: e.stopWhy,
		Regime: e.regime.String(), Sigma0: e.runSigma0})
	e.stopWhy = nil
	e.run++

	rs, n := e.cfg.Restarts, len(e.cfg.X0)
	lambda0, inc := e.lambda0(), e.incPopSize()
	next, sigma0, limit := regimeLarge, e.cfg.Sigma0, 0
	// pycma: sum(small_i) < bipop · max(1, sum(large_i)), bipop = 1.
	if rs.BIPOP && e.smallEvals < max(1, e.largeEvals) {
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
		sigma0 = math.Pow(0.01, uSigma) * e.cfg.Sigma0
		mult := math.Pow(inc, float64(e.largeRuns))
		lambda = max(2, int(float64(lambda0)*math.Pow(mult, uLambda*uLambda)))
		maxIter := math.Min(float64(maxIter0(n, lambda0)), 0.5*float64(e.largeEvals)/float64(lambda))
		limit = max(1, int(math.Ceil(maxIter))) // pycma stops once countiter ≥ maxiter
	default:
		e.largeRuns++
		lambda, _ = largeLambda(lambda0, inc, e.largeRuns, n)
		if rs.BIPOP {
			limit = maxIter0(n, lambda0) // pycma: maxiter = maxiter0
		}
	}
	if err := e.startRun(lambda); err != nil {
		return err
	}
	e.regime, e.runSigma0, e.genLimit = next, sigma0, limit
	e.sigma = sigma0
	if rs.Point.Uniform {
		region := rs.Point.Region
		if region == nil {
			region = e.cfg.Bounds
		}
		for i := range e.mean {
			lo, up := region.Lower[i], region.Upper[i]
			e.mean[i] = lo + (up-lo)*e.rnd.Float64()
		}
	}
	return nil
}

// tallyRuns sets the bookkeeping of restarts from the run ends and the
// current run's regime: the evaluations of the ended runs counted as small
// and as large, and the large runs so far (a decoder's; restart keeps
// them up to date). Every generation of a run has its λ, so run i had
// (Generation_i − Generation_{i−1})·Lambda_i evaluations.
func (e *ES) tallyRuns() {
	e.smallEvals, e.largeEvals, e.largeRuns = 0, 0, 0
	prev := -1
	for _, r := range e.runEnds {
		evals := (r.Generation - prev) * r.Lambda
		prev = r.Generation
		if regimeOf(r.Regime) == regimeLarge {
			e.largeEvals += evals
			e.largeRuns++
		} else {
			e.smallEvals += evals
		}
	}
	if e.regime == regimeLarge {
		e.largeRuns++
	}
}
