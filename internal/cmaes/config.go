package cmaes

import (
	"fmt"
	"math"
)

// Config says how an ES starts and when it stops. The zero value of every
// optional field selects its documented default.
type Config struct {
	X0     []float64 // initial mean m^0 (required); inside Bounds when set
	Sigma0 float64   // initial step size σ^0 > 0 (required)
	Lambda int       // population size λ ≥ 2; 0 = DefaultLambda(n)
	Seed   uint64    // seed of the random stream; the run is a pure function of it and the told values

	// Bounds, when not nil, keeps every candidate handed out inside
	// [Lower, Upper] by pycma's piecewise linear-quadratic transformation;
	// the update uses the untransformed points (see bounds.go).
	Bounds *Bounds

	Termination Termination
	Restarts    Restarts

	// Active selects active CMA-ES (Jastrebski and Arnold 2006; Hansen's
	// tutorial arXiv:1604.00772, its default parameter table): negative
	// recombination weights for the λ − μ worst points in the covariance
	// update, and that table's c_1, c_μ, c_c, c_σ and d_σ. false is
	// Algorithm 1 of the paper exactly (docs/algorithm.md §1).
	Active bool

	// MirroredFirstRun: the first run samples by mirrored sampling
	// (Brockhoff, Auger, Hansen, Arnold, Hohm, PPSN 2010; pycma's
	// CMA_mirrors = 0.5 with CMA_mirrormethod = 0): of each batch, the
	// first ⌈λ/2⌉ z_k are drawn and the other ⌊λ/2⌋ are their mirrors,
	// z_{⌈λ/2⌉+j} = −z_j. Restarts draw every point independently. false
	// is Algorithm 1's line 4 in every run (docs/algorithm.md §1).
	MirroredFirstRun bool
	// MirroredSmallRuns: BIPOP's small runs (Restarts.BIPOP, regime
	// RegimeSmall) sample as MirroredFirstRun's first run does; large
	// runs draw every point.
	MirroredSmallRuns bool

	// MeanRateSmallRuns: BIPOP's small runs (regime RegimeSmall) adapt
	// the mean's learning rate by LRA-CMA-ES's signal-to-noise rule
	// (meanrate.go), each from η_m = 1; MeanRateLargeRuns: so do the large
	// runs (IPOP's and BIPOP's restarts, RegimeLarge). The first run never
	// does. false: the mean moves by its whole update, Algorithm 1's line 8.
	MeanRateSmallRuns bool
	MeanRateLargeRuns bool
	// MeanRateAlpha is the rule's α, the target of SNR/η_m, and
	// MeanRateEtaMin the smallest η_m, in (0, 1]; 0 = DefaultMeanRateAlpha,
	// DefaultMeanRateEtaMin, which New resolves (Config() reports them)
	// where either flag is set. Measuring knobs.
	MeanRateAlpha  float64
	MeanRateEtaMin float64

	// Inject, when not empty, holds at most λ points (inside Bounds when
	// set) that replace candidates 0, 1, ... of the first batch, as if
	// passed to ES.Inject(Inject, true) before it was sampled: a warm start
	// from points known to be good. New consumes it: the points are part of
	// the state from then on, and Config() reports Inject as nil.
	Inject [][]float64

	// Numerics is the version of the eigendecomposition (numerics.go):
	// 0 = NumericsLatest; New resolves it, so Config() reports the version.
	Numerics int
}

// Restarts configures restarts (docs/algorithm.md §1, restart.go): on any
// termination criterion but MaxEvaluations, TargetFitness, a numerical
// error or failed evaluations, the ES starts a new run with C = I and zero
// paths, keeping the best point found.
//
//   - IPOP: the k-th restart has λ = ⌊λ0·IncPopSize^k⌋ (λ0 the first run's
//     λ) and starts from σ0.
//   - BIPOP (Hansen, GECCO 2009, as pycma's fmin runs it): the first run is
//     λ0; each restart is a large run (λ0·IncPopSize^k after k large runs,
//     σ0) while the evaluations spent in small runs (the first run counted
//     among them) are at least those spent in large ones, else a small
//     run: λ = ⌊λ0·(λ_large/λ0)^{U²}⌋ with λ_large the last large run's λ
//     (λ0 before any), σ = σ0·0.01^U, U uniform in [0, 1) (two draws), and
//     at most min(maxiter0, ½·(large runs' evaluations)/λ) generations
//     (StopMaxIter), maxiter0 = 100 + ⌊150(n + 3)²/√λ0⌋ being the limit of
//     the first and the large runs.
//
// Max counts the restarts (for BIPOP, the large ones only: small runs are
// interleaved between them, as in pycma).
//
// SigmaDec and Budget are Loshchilov's NIPOP and NBIPOP (restart.go):
// IPOP with SigmaDec = 1.6 is NIPOP-aCMA-ES's schedule, BIPOP with
// SigmaDec = 1.6 and Budget = 2 NBIPOP-aCMA-ES's.
type Restarts struct {
	IPOP  bool // restart with λ multiplied by IncPopSize
	BIPOP bool // BIPOP restarts (IPOP must then be false)
	Max   int  // at most this many (large) restarts; 0 with IPOP or BIPOP = 9

	// IncPopSize multiplies λ at each (large) restart: 0 or ≥ 1; 0 = 2
	// (New reports it resolved when IPOP or BIPOP is set).
	IncPopSize float64

	// SigmaDec (ρ_σdec of NIPOP and NBIPOP): the k-th large run starts
	// from σ0/SigmaDec^k. 0 or ≥ 1; 0 and 1 keep σ0 (IPOP, BIPOP).
	SigmaDec float64
	// Budget (ρ_budget of NBIPOP; BIPOP only): the regime of the run that
	// found the best point so far may spend Budget times the evaluations
	// of the other before the other runs. 0 or ≥ 1; 0 and 1 are BIPOP's
	// equal budgets.
	Budget float64
	// SpareBestSmall (BIPOP only; ours): a small run that found the best
	// point so far is not ended by its generation limit, min(maxiter0,
	// ½·(the large runs' evaluations)/λ), only by maxiter0, the large
	// runs' limit, and the other criteria (restart.go).
	SpareBestSmall bool

	// Point is where each restart's mean starts; the zero value is X0.
	Point RestartPoint
}

// RestartPoint says where a restart's mean m starts. Every point drawn
// comes from the ES's own random stream, so a restored ES draws the same.
type RestartPoint struct {
	// Uniform draws m uniformly in Region, or in Config.Bounds when Region
	// is nil, at every restart (the first run starts from X0); false
	// starts every run from X0.
	Uniform bool
	// Region, when not nil, has n finite values lower < upper and lies
	// inside Config.Bounds when they are set.
	Region *Bounds
}

// DefaultMaxRestarts is the number of (large) restarts when Restarts.Max
// is 0.
const DefaultMaxRestarts = 9

// DefaultIncPopSize is the factor of λ at an IPOP or large BIPOP restart
// when Restarts.IncPopSize is 0.
const DefaultIncPopSize = 2

// Termination holds the criteria of docs/algorithm.md §1 (defaults of
// the BIPOP-CMA-ES paper and pycma). For the tolerances, 0 selects the
// default and a negative value disables the criterion.
type Termination struct {
	MaxEvaluations int     // stop once this many points were told; 0 = no limit
	HasTarget      bool    // TargetFitness is set
	TargetFitness  float64 // stop once the best told value is ≤ this

	TolFun        float64 // range of the recent best values and of the current generation; default 1e-12
	TolX          float64 // all σ√C_ii and σ|p_c,i| below it; default 1e-12·σ0
	ConditionCov  float64 // condition number of C above it; default 1e14
	TolUpSigma    float64 // σ/σ0 above it times √(max eigenvalue of C); default 1e20
	NoEffectAxis  bool    // set to disable NoEffectAxis
	NoEffectCoord bool    // set to disable NoEffectCoord
	NoStagnation  bool    // set to disable Stagnation
	NoEqualFunVal bool    // set to disable EqualFunValues (or TolFlatFitness in its place)

	// FlatFitness selects pycma's tolflatfitness in place of cmaes.m's
	// EqualFunValues (NoEqualFunVal disables either): the run ends after
	// two consecutive generations whose best value equals the value of
	// rank ⌊0.75λ⌋ (StopTolFlatFitness). false is EqualFunValues, what
	// every ES had before.
	FlatFitness bool

	// UpSigmaMoved: TolUpSigma counts the scale that the σ safeguard moved
	// from σ into C in the run (State.RunMovedScale), as pycma's
	// tolupsigma does (it divides the tolerance where it moves the scale).
	// false is what every ES had before: the safeguard, acting once
	// σ > 10^10 max(D), brought σ/max(D) back before TolUpSigma's
	// 10^20 σ0 could be reached, so TolUpSigma never fired.
	UpSigmaMoved bool

	// TolWorse ε > 0 ends a restart that converges onto a point worse
	// than one an earlier run found (StopTolWorse; ours, docs/algorithm.md
	// §1): the best point so far is an earlier run's, every value TolFun
	// reads (the best of the last 10 + ⌈30n/λ⌉ generations, all of this
	// one) lies above it, their range is below ε times the distance of the
	// lowest of them to it, and that distance is at least TolWorseDelta
	// times the run's descent, from State.RunStartF to the best value. 0,
	// what every ES had before, or negative: never.
	TolWorse float64
	// TolWorseDelta is δ of TolWorse: a run whose values came within δ
	// times its descent of the best point is not ended, since it may still
	// reach it (a restart on the sharp ridge, BBOB f13, stalls so, far
	// below where it started, until C has learnt the ridge;
	// docs/algorithm.md §5, "Ending restarts that converge onto a worse
	// point"). 0 = DefaultTolWorseDelta, what every ES with TolWorse had
	// before encoding 15; negative: no run is spared.
	TolWorseDelta float64

	// MaxFailedGenerations stops the ES (StopFailedEvaluations, never an
	// IPOP restart) after this many consecutive generations in which every
	// evaluation failed (every value told was NaN): an objective that
	// always fails does not run forever. 0 = DefaultMaxFailedGenerations,
	// negative = never.
	MaxFailedGenerations int
}

// The names of the termination criteria, as reported in StopReason.
const (
	StopMaxEvaluations = "max_evaluations"
	StopTargetFitness  = "target_fitness"
	StopTolFun         = "tol_fun"
	StopTolX           = "tol_x"
	StopNoEffectAxis   = "no_effect_axis"
	StopNoEffectCoord  = "no_effect_coord"
	StopConditionCov   = "condition_cov"
	StopStagnation     = "stagnation"
	StopEqualFunValues = "equal_fun_values"
	StopTolFlatFitness = "tol_flat_fitness" // pycma's tolflatfitness (Termination.FlatFitness)
	StopTolUpSigma     = "tol_up_sigma"
	StopTolWorse       = "tol_worse"       // Termination.TolWorse
	StopNumerical      = "numerical_error" // a non-finite value would have entered the state
	StopRequested      = "requested"       // the caller ended the run (ES.StopNow)
	// StopMaxIter: the run reached its generation limit (BIPOP's maxiter,
	// restart.go); its value is the run's generations t. A restart
	// follows while Restarts allow one.
	StopMaxIter = "max_iter"
	// StopFailedEvaluations: every evaluation of the last
	// Termination.MaxFailedGenerations generations failed; its value is
	// that number of generations.
	StopFailedEvaluations = "failed_evaluations"
)

// StopReason is a criterion that fired, with the value that made it fire.
type StopReason struct {
	Name  string
	Value float64
}

// Defaults of Termination.
const (
	DefaultTolFun       = 1e-12
	DefaultTolXFactor   = 1e-12 // times σ0
	DefaultConditionCov = 1e14
	DefaultTolUpSigma   = 1e20

	DefaultMaxFailedGenerations = 10

	// DefaultTolWorseDelta is TolWorseDelta's δ when none is set:
	// 10^-3, the δ TolWorse had when it came (encoding 14). It stays so:
	// a state of encoding 14 decodes with none set.
	DefaultTolWorseDelta = 1e-3
)

// Bounds is a box: Lower[i] < Upper[i] for every coordinate.
type Bounds struct {
	Lower, Upper []float64
}

func (c *Config) validate() error {
	n := len(c.X0)
	if n < 1 {
		return fmt.Errorf("cmaes: x0 is empty")
	}
	for i, v := range c.X0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cmaes: x0[%d] is not finite", i)
		}
	}
	if !(c.Sigma0 > 0) || math.IsInf(c.Sigma0, 0) {
		return fmt.Errorf("cmaes: sigma0 %v, want a finite value > 0", c.Sigma0)
	}
	if c.Lambda != 0 && c.Lambda < 2 {
		return fmt.Errorf("cmaes: population size %d, want at least 2", c.Lambda)
	}
	if err := validNumerics(c.Numerics); err != nil {
		return err
	}
	if err := c.validateRestarts(); err != nil {
		return err
	}
	if a := c.MeanRateAlpha; math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
		return fmt.Errorf("cmaes: mean rate α %v, want 0 or a finite value > 0", a)
	}
	if m := c.MeanRateEtaMin; !(m >= 0 && m <= 1) {
		return fmt.Errorf("cmaes: mean rate smallest η %v, want 0 or a value in (0, 1]", m)
	}
	if c.Termination.MaxEvaluations < 0 {
		return fmt.Errorf("cmaes: max evaluations %d, want at least 0", c.Termination.MaxEvaluations)
	}
	t := c.Termination
	for _, v := range []float64{t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma, t.TolWorse, t.TolWorseDelta, t.TargetFitness} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cmaes: termination values must be finite")
		}
	}
	if b := c.Bounds; b != nil {
		if err := b.check("bounds", n); err != nil {
			return err
		}
		for i := range n {
			lo, up := b.Lower[i], b.Upper[i]
			if c.X0[i] < lo || c.X0[i] > up {
				return fmt.Errorf("cmaes: x0[%d] = %v is outside the bounds [%v, %v]", i, c.X0[i], lo, up)
			}
		}
	}
	if len(c.Inject) > 0 {
		lambda := c.Lambda
		if lambda == 0 {
			lambda = DefaultLambda(n)
		}
		if err := checkInjection(c.Inject, 0, lambda, n, c.Bounds); err != nil {
			return fmt.Errorf("cmaes: config inject: %w", err)
		}
	}
	return nil
}

// resolved returns the tolerances with defaults filled in; a disabled one is
// returned as 0 (never fires).
func (t Termination) resolved(sigma0 float64) Termination {
	pick := func(v, def float64) float64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	t.TolFun = pick(t.TolFun, DefaultTolFun)
	t.TolX = pick(t.TolX, DefaultTolXFactor*sigma0)
	t.ConditionCov = pick(t.ConditionCov, DefaultConditionCov)
	t.TolUpSigma = pick(t.TolUpSigma, DefaultTolUpSigma)
	t.TolWorse = max(t.TolWorse, 0)
	t.TolWorseDelta = pick(t.TolWorseDelta, DefaultTolWorseDelta)
	switch {
	case t.MaxFailedGenerations == 0:
		t.MaxFailedGenerations = DefaultMaxFailedGenerations
	case t.MaxFailedGenerations < 0:
		t.MaxFailedGenerations = 0
	}
	return t
}

// validateRestarts checks Restarts (the decoder of version 7 calls it once
// it has read them).
func (c *Config) validateRestarts() error {
	rs, n := c.Restarts, len(c.X0)
	if rs.Max < 0 {
		return fmt.Errorf("cmaes: restarts max %d, want at least 0", rs.Max)
	}
	if rs.IPOP && rs.BIPOP {
		return fmt.Errorf("cmaes: restarts: IPOP and BIPOP both set, want one")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"incpopsize", rs.IncPopSize}, {"sigma decrease", rs.SigmaDec}, {"budget ratio", rs.Budget}} {
		if v := f.v; math.IsNaN(v) || math.IsInf(v, 0) || v != 0 && v < 1 {
			return fmt.Errorf("cmaes: restarts: %s %v, want 0 or a finite value ≥ 1", f.name, v)
		}
	}
	if rs.Budget != 0 && !rs.BIPOP {
		return fmt.Errorf("cmaes: restarts: a budget ratio needs BIPOP")
	}
	if rs.SpareBestSmall && !rs.BIPOP {
		return fmt.Errorf("cmaes: restarts: sparing the best small run needs BIPOP")
	}
	region := rs.Point.Region
	if region != nil {
		if err := region.check("restart region", n); err != nil {
			return err
		}
		if b := c.Bounds; b != nil {
			for i := range n {
				if region.Lower[i] < b.Lower[i] || region.Upper[i] > b.Upper[i] {
					return fmt.Errorf("cmaes: restart region[%d] = [%v, %v] is not inside the bounds [%v, %v]",
						i, region.Lower[i], region.Upper[i], b.Lower[i], b.Upper[i])
				}
			}
		}
	}
	if rs.Point.Uniform && region == nil && c.Bounds == nil {
		return fmt.Errorf("cmaes: restarts: uniform restart points need a region or bounds")
	}
	return nil
}

// check fails unless b has n finite values lower < upper per coordinate;
// what names b in the error.
func (b *Bounds) check(what string, n int) error {
	if len(b.Lower) != n || len(b.Upper) != n {
		return fmt.Errorf("cmaes: %s have %d and %d values, want %d", what, len(b.Lower), len(b.Upper), n)
	}
	for i := range n {
		lo, up := b.Lower[i], b.Upper[i]
		if math.IsNaN(lo) || math.IsNaN(up) || math.IsInf(lo, 0) || math.IsInf(up, 0) {
			return fmt.Errorf("cmaes: %s[%d] not finite", what, i)
		}
		if !(lo < up) {
			return fmt.Errorf("cmaes: %s[%d]: lower %v is not below upper %v", what, i, lo, up)
		}
	}
	return nil
}

// clone returns a copy of b that shares no slice with it (nil for nil).
func (b *Bounds) clone() *Bounds {
	if b == nil {
		return nil
	}
	return &Bounds{Lower: append([]float64(nil), b.Lower...), Upper: append([]float64(nil), b.Upper...)}
}
