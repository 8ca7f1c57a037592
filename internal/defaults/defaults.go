// Package defaults holds what a new session gets for each setting its
// create leaves out, per algorithm: the configuration measured best on BBOB
// (docs/algorithm.md, "Defaults"). The service (internal/session) and the
// measuring instrument (cmd/bench) both read it, so that cmd/bench without
// algorithm flags runs exactly what a new session runs.
package defaults

import "github.com/selfcma/selfcma/internal/cmaes"

// The algorithms, by the names the API and cmd/bench use.
const (
	CMAES     = "cma-es"
	SelfCMAES = "self-cma-es"
	SepCMAES  = "sep-cma-es" // diagonal C (internal/sepcma)
)

// Algorithm is what a create that names no algorithm gets: self-CMA-ES.
// At its default λ its first run adapts c_μ by the signal-to-noise rule
// (Settings.SNR; its parameters selfcma's defaults, recorded in each
// session's state), and so at λ ≥ 10n (the paper's h_t there measured
// worse against active CMA-ES; docs/algorithm.md §2, table 16); both
// sample their first run and BIPOP's small runs mirrored. On 60 fresh
// BBOB instances (5001–5030 and 9001–9030, none used for a choice) it needs fewer
// evaluations than pycma's BIPOP on 17 (n = 10) and 16 (n = 20) of 24
// functions and more on none, than CMA-ES on 9 and 10 and more on 2 and
// 0 (at n = 10 Weierstrass and Gallagher's 101 peaks, where CMA-ES's
// NBIPOP is strongest), and after 100·n evaluations it is ahead on the
// ill-conditioned functions (docs/algorithm.md §5, "Sparing the small run
// that holds the best point").
const Algorithm = SelfCMAES

// Restart strategies, by the names the API and cmd/bench use: NIPOP and
// NBIPOP are Loshchilov's variants of IPOP and BIPOP (cmaes's
// restart.go; docs/algorithm.md §1, "Restarts").
const (
	RestartsNone   = "none"
	RestartsIPOP   = "ipop"
	RestartsBIPOP  = "bipop"
	RestartsNIPOP  = "nipop"
	RestartsNBIPOP = "nbipop"
)

// RestartStrategies are the names of the restart strategies.
var RestartStrategies = []string{RestartsNone, RestartsIPOP, RestartsBIPOP, RestartsNIPOP, RestartsNBIPOP}

// Loshchilov's parameters of NIPOP and NBIPOP (PPSN 2012; CEC 2013): a
// large run's σ0 is divided by SigmaDec at each large restart, and the
// regime of the best point gets BudgetRatio times the other's budget.
const (
	SigmaDec    = 1.6 // ρ_σdec
	BudgetRatio = 2   // ρ_budget (NBIPOP)
)

// Restarts returns the cmaes.Restarts of strategy name (the zero value
// for none; Max, IncPopSize and Point left zero), false for a name not in
// RestartStrategies.
func Restarts(name string) (cmaes.Restarts, bool) {
	switch name {
	case RestartsNone:
		return cmaes.Restarts{}, true
	case RestartsIPOP:
		return cmaes.Restarts{IPOP: true}, true
	case RestartsBIPOP:
		return cmaes.Restarts{BIPOP: true}, true
	case RestartsNIPOP:
		return cmaes.Restarts{IPOP: true, SigmaDec: SigmaDec}, true
	case RestartsNBIPOP:
		return cmaes.Restarts{BIPOP: true, SigmaDec: SigmaDec, Budget: BudgetRatio}, true
	}
	return cmaes.Restarts{}, false
}

// RestartsName is the strategy name of r (Restarts' inverse; a
// SigmaDec or Budget other than Loshchilov's still names NIPOP or NBIPOP).
func RestartsName(r cmaes.Restarts) string {
	loshchilov := r.SigmaDec > 1 || r.Budget > 1
	switch {
	case r.BIPOP && loshchilov:
		return RestartsNBIPOP
	case r.BIPOP:
		return RestartsBIPOP
	case r.IPOP && loshchilov:
		return RestartsNIPOP
	case r.IPOP:
		return RestartsIPOP
	}
	return RestartsNone
}

// Restart points: every run from x0, or drawn uniformly in a region (the
// client's, else the bounds).
const (
	PointX0      = "x0"
	PointUniform = "uniform"
)

// Settings are the defaults of one algorithm.
type Settings struct {
	Active       bool    // active CMA-ES (cmaes.Config.Active)
	Restarts     string  // one of RestartStrategies
	MaxRestarts  int     // (large) restarts; cmaes.DefaultMaxRestarts
	IncPopSize   float64 // λ factor at a (large) restart
	RestartPoint string  // PointX0, or PointUniform where a region or bounds exist
	// SNR: self-CMA-ES's first run adapts a factor of c_μ by the
	// signal-to-noise rule at every λ (selfcma.Config.SNR with no
	// MinLambda; its parameters selfcma's defaults); false: h_t from
	// λ = 10n, the paper's.
	SNR bool
	// FlatFitness: a run ends on pycma's tolflatfitness instead of
	// cmaes.m's EqualFunValues (cmaes.Termination.FlatFitness).
	FlatFitness bool
	// UpSigmaMoved: TolUpSigma counts the scale the σ safeguard moved into
	// C (cmaes.Termination.UpSigmaMoved), as pycma's tolupsigma does.
	UpSigmaMoved bool
	// TolWorse: a restart that converges onto a point worse than an
	// earlier run's best ends (cmaes.Termination.TolWorse, its ε; 0: off).
	TolWorse float64
	// TolWorseDelta: δ of TolWorse (cmaes.Termination.TolWorseDelta; 0:
	// cmaes.DefaultTolWorseDelta).
	TolWorseDelta float64
	// SpareBestSmall: a small BIPOP run that found the best point so far
	// outlives its generation limit (cmaes.Restarts.SpareBestSmall; with
	// BIPOP and NBIPOP only).
	SpareBestSmall bool
	// MirroredFirstRun: the first run samples by mirrored sampling
	// (cmaes.Config.MirroredFirstRun).
	MirroredFirstRun bool
	// MirroredSmallRuns: so do BIPOP's small runs
	// (cmaes.Config.MirroredSmallRuns).
	MirroredSmallRuns bool
	// MeanRateSmallRuns, MeanRateLargeRuns: BIPOP's small runs, the
	// large restarts adapt the mean's learning rate
	// (cmaes.Config.MeanRateSmallRuns, MeanRateLargeRuns).
	MeanRateSmallRuns bool
	MeanRateLargeRuns bool
}

// For returns the defaults of algorithm alg (CMAES, SelfCMAES or
// SepCMAES; any other name gets CMAES's).
//
// Both get active CMA-ES (1.4–1.9× fewer evaluations than Algorithm 1 on
// f2, f10, f11, f13, f14), Loshchilov's NBIPOP restarts (BIPOP as pycma's
// fmin runs it, the large runs' σ0 divided by 1.6 at each, the best
// point's regime given twice the budget), and restart points drawn
// uniformly in the client's region or the bounds (x0 when neither is
// given), and mirrored sampling in the first run and BIPOP's small runs
// (mirroredFirstRun, mirroredSmallRuns). On
// BBOB's held-out instances (n = 10: 41–70, n = 20: 41–60)
// NBIPOP against pycma 4.4.0's BIPOP is better/tie/worse on 3/19/2 and
// 6/17/1 functions for CMA-ES, 8/15/1 and 6/16/2 for self-CMA-ES, where
// BIPOP was 2/18/4, 3/19/2, 6/16/2 and 3/17/4 (docs/algorithm.md §5,
// "NBIPOP", with the commands). Its shrinking σ0 costs where a landscape
// has no global structure: f21 (Gallagher's 101 peaks) at n = 10, 69.8 %
// successes against BIPOP's 73.8 % (docs/algorithm.md §5, "f21 at n = 10
// on 900 fresh instances").
//
// Self-CMA-ES's large restarts also adapt the mean's learning rate
// (cmaes.Config.MeanRateLargeRuns, LRA-CMA-ES's rule on the mean, α and
// the bound on η_m cmaes's defaults; docs/algorithm.md §2, table 19): on
// 60 held-out BBOB instances (§5, "The mean's rate in the large restarts,
// held out") Rastrigin (f15) is solved in 50 of 60 runs against CMA-ES's
// 30 at n = 10 and 44 against 6 at n = 20, Schaffers' functions take
// 0.67–0.84 of the evaluations; Weierstrass (f16) costs 1.04–1.30 on the
// held-out sets. CMA-ES keeps the mean's whole step: it is the algorithm
// with CMA-ES's fixed rates.
//
// Both end a restart that converges onto a point worse than an earlier
// run's best (tolWorse, cmaes.Termination.TolWorse; ours), and spare the
// small BIPOP run that holds the best point from its generation limit
// (spareBestSmall, cmaes.Restarts.SpareBestSmall; ours).
//
// sep-CMA-ES has no active update (CyberAgentAILab/cmaes's SepCMA, which it
// follows, has none) and BIPOP restarts: its restarts know neither of
// NBIPOP's rules.
func For(alg string) Settings {
	if alg == SepCMAES {
		return Settings{Restarts: RestartsBIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: PointUniform}
	}
	return Settings{Active: true, Restarts: RestartsNBIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: PointUniform,
		SNR: alg == SelfCMAES, FlatFitness: flatFitness, UpSigmaMoved: upSigmaMoved, TolWorse: tolWorse, SpareBestSmall: spareBestSmall,
		MirroredFirstRun: mirroredFirstRun, MirroredSmallRuns: mirroredSmallRuns,
		MeanRateLargeRuns: alg == SelfCMAES}
}

// Numerics is the numerics version of a new session of algorithm alg and
// dimension n: for CMA-ES cmaes.DefaultNumerics(n) (the lazy update of B
// and D from cmaes.LazyMinDimension on: docs/performance.md), for the
// others 0 (the engine's latest; self-CMA-ES decomposes C at every update).
func Numerics(alg string, n int) int {
	if alg == CMAES {
		return cmaes.DefaultNumerics(n)
	}
	return 0
}

// flatFitness is Settings.FlatFitness of CMA-ES and self-CMA-ES: pycma's
// tolflatfitness ends a run on the step ellipsoid's plateaus after two
// flat generations, where EqualFunValues waited for 10 + n of 3(10 + n)
// and the run shrank onto the plateau until TolFun ended it. On BBOB f7,
// instances 1–40 (docs/algorithm.md §5, "What was measured on the way"),
// ERT 0.85× (n = 20) and 0.99× (n = 10) of EqualFunValues' for CMA-ES,
// 0.95× and 0.83× for self-CMA-ES: pycma's 0.98–1.04×; the other
// functions within noise.
const flatFitness = true

// upSigmaMoved is Settings.UpSigmaMoved of CMA-ES and self-CMA-ES. Without
// it TolUpSigma never fired: the σ safeguard moves the scale from σ into C
// once σ > 10^10 max(D), long before σ/σ0 reaches 10^20 max(D). A first
// run that creeps (σ grows, C shrinks, the best value still falls by
// 10^-9 every ten generations, so Stagnation cannot end it) then runs to
// BIPOP's maxiter0, 78 % of a 10^4·n budget at n = 10; pycma's tolupsigma,
// which it divides where it moves the scale, ends such runs after 60,000
// to 65,000 evaluations. On BBOB f18, n = 10, instances 1001–2000
// (docs/algorithm.md §5, "TolUpSigma across the σ safeguard"), CMA-ES
// solves 988 of 1,000 instead of 985 (pycma 990): the three creeping runs;
// on 40 instances of all 24 functions no ERT and no success changed.
const upSigmaMoved = true

// mirroredFirstRun is Settings.MirroredFirstRun of CMA-ES and self-CMA-ES.
// On BBOB (docs/algorithm.md §5, "Mirrored sampling in the first run") it
// saves a quarter of the evaluations on the sphere and 10–25 % on the
// attractive sector, Rosenbrock and the bent cigar in both dimensions, and
// costs the discus 3–8 %; the multimodal functions, where restarts decide,
// move within chance. On 30 instances held out from the choice, against
// pycma 4.4.0's BIPOP, CMA-ES goes from 5/17/2 to 7/15/2 better/tie/worse
// at n = 10 and from 3/17/4 to 8/14/2 at n = 20, self-CMA-ES from 6/16/2
// to 13/10/1 and from 8/14/2 to 11/11/2.
const mirroredFirstRun = true

// mirroredSmallRuns is Settings.MirroredSmallRuns of CMA-ES and
// self-CMA-ES: BIPOP's small runs are local searches too (small σ0), and
// mirrored they find the global optimum of the rugged functions more
// often within the budget. BBOB, successes with and without
// (docs/algorithm.md §5, "Mirrored small runs"): n = 10, CMA-ES on 400
// instances f21 307 against 279, f22 234 against 199, f15 217 against
// 200, f23 91 against 110 (Katsuura, the one loss); n = 20, 100
// instances, CMA-ES 366 against 312 and self-CMA-ES 356 against 349 of
// 700 runs of f15–f18 and f21–f23.
const mirroredSmallRuns = true

// tolWorse is Settings.TolWorse of CMA-ES and self-CMA-ES: a restart whose
// recent values lie above an earlier run's best and within 0.3 times their
// distance to it of each other (cmaes.Termination.TolWorse, with
// δ) ends, where TolFun waited until the range fell below
// 10^-12: a restart converging onto a worse local optimum cannot give a
// better point, and the evaluations go to the next run. On BBOB's
// multimodal functions (tuning instances, docs/algorithm.md §5, "Ending
// restarts that converge onto a worse point") CMA-ES solved Katsuura (f23)
// in 67 of 200 runs instead of 41 at n = 10, Gallagher's 21 peaks (f22) in
// 148 instead of 120, at n = 20 Rastrigin (f15) in 21 of 100 instead of 12
// and f22 in 26 instead of 8; the sharp ridge (f13), whose restarts stall
// far below where they began, is left as it was by δ.
const tolWorse = 0.3

// spareBestSmall is Settings.SpareBestSmall of CMA-ES and self-CMA-ES: a
// small BIPOP run that has found the best point so far is not ended by its
// generation limit, min(maxiter0, ½·(the large runs' evaluations)/λ),
// which cut Katsuura's converging small runs (f23 at n = 20: 115 of the
// 176 small runs that came within 10^-2 of f_opt ended on it). BBOB,
// fresh instances (docs/algorithm.md §5, "Sparing the small run that
// holds the best point"): CMA-ES solved f23 in 20 of 1,000 runs instead
// of 2 at n = 20 and in 133 of 400 instead of 123 at n = 10, self-CMA-ES
// in 73 of 200 instead of 48 at n = 10; the other multimodal functions
// within a few runs either way.
const spareBestSmall = true
