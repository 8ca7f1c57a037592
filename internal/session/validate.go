package session

import (
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// Limits bound what one session may take of the server.
type Limits struct {
	MaxDimension   int // n
	MaxPopulation  int // λ, also after IPOP restarts
	MaxBatch       int // λ·n, the numbers of one batch, also after restarts
	MaxNameBytes   int
	MaxMetadataLen int // bytes of the metadata object

	// sep-CMA-ES sessions (sep.go) have their own n and λ·n limits in place
	// of MaxDimension and MaxBatch; 0 = DefaultMaxSepDimension,
	// DefaultMaxSepBatch.
	MaxSepDimension, MaxSepBatch int
}

// DefaultLimits returns the server's defaults (a function, not a variable:
// no caller can change what the next one gets).
func DefaultLimits() Limits {
	return Limits{
		MaxDimension:   2000,
		MaxPopulation:  100000,
		MaxBatch:       1000000,
		MaxNameBytes:   256,
		MaxMetadataLen: 64 << 10,

		MaxSepDimension: DefaultMaxSepDimension,
		MaxSepBatch:     DefaultMaxSepBatch,
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// selfParams are a self-CMA-ES's settings beyond its primary's
// configuration (zero for CMA-ES).
type selfParams struct {
	Init string // the auxiliary's initialization
	SNR  bool   // selfcma.Config.SNR

	Mixed *catcma.Config // CatCMA with margin's configuration (mixed.go), without the seed
}

// config checks p against the limits and returns the algorithm, the
// self-CMA-ES settings and the engine's configuration, without the
// seed. Each part of the request has its own check, named for the field;
// every message names the field's path.
func (l Limits) config(p CreateParams) (string, selfParams, cmaes.Config, error) {
	var cfg cmaes.Config
	if isMixed(p) {
		mc, n, err := l.mixedConfig(p)
		if err != nil {
			return "", selfParams{}, cfg, err
		}
		return AlgorithmCatCMA, selfParams{Mixed: &mc}, cmaes.Config{X0: make([]float64, n)}, nil // X0: the flat dimension
	}
	n := len(p.X0)
	alg, err := checkAlgorithm(p.Algorithm)
	if err != nil {
		return "", selfParams{}, cfg, err
	}
	l = l.forAlgorithm(alg)
	if err := l.checkX0(p.X0); err != nil {
		return "", selfParams{}, cfg, err
	}
	if err := checkSigma0(p.Sigma0); err != nil {
		return "", selfParams{}, cfg, err
	}
	init, err := checkInit(alg, p.Init)
	if err != nil {
		return "", selfParams{}, cfg, err
	}
	snr, err := checkSNR(alg, p.SNR)
	if err != nil {
		return "", selfParams{}, cfg, err
	}
	lambda, err := l.checkPopulationSize(alg, p.PopulationSize, n)
	if err != nil {
		return "", selfParams{}, cfg, err
	}
	if cfg.Bounds, err = checkBounds(p.Bounds, p.X0); err != nil {
		return "", selfParams{}, cfg, err
	}
	def := defaults.For(alg)
	cfg.X0, cfg.Lambda = p.X0, p.PopulationSize
	if cfg.Restarts, err = l.checkRestarts(p.Restarts, def, cfg, lambda); err != nil {
		return "", selfParams{}, cfg, err
	}
	if err := checkSepRestarts(alg, cfg.Restarts, p.Restarts.Strategy); err != nil {
		return "", selfParams{}, cfg, err
	}
	cfg.Active = def.Active
	cfg.Numerics = defaults.Numerics(alg, n)
	if p.Active != nil {
		if *p.Active && alg == AlgorithmSepCMAES {
			return "", selfParams{}, cfg, errorf(CodeOutOfRange, "active applies to %q and %q, not %q", AlgorithmCMAES, AlgorithmSelfCMAES, alg)
		}
		cfg.Active = *p.Active
	}
	if cfg.Termination, err = checkTermination(p.Termination); err != nil {
		return "", selfParams{}, cfg, err
	}
	if err := checkConstraints(p.Constraints, n, p.Termination); err != nil {
		return "", selfParams{}, cfg, err
	}
	cfg.Termination.NoStagnation = cfg.Termination.NoStagnation || constrainedStagnation(p)
	// termination.equal_fun_values names the flat-fitness criterion in
	// force: cmaes.m's, or pycma's tolflatfitness where the defaults say.
	cfg.Termination.FlatFitness = def.FlatFitness
	cfg.Termination.UpSigmaMoved = def.UpSigmaMoved
	if cfg.Termination.TolWorse, err = checkTolWorse(p, alg, def.TolWorse); err != nil {
		return "", selfParams{}, cfg, err
	}
	if cfg.Termination.TolWorseDelta, err = checkTolWorseDelta(p.Termination.TolWorseDelta, alg, def.TolWorseDelta); err != nil {
		return "", selfParams{}, cfg, err
	}
	cfg.MirroredFirstRun, cfg.MirroredSmallRuns = def.MirroredFirstRun, def.MirroredSmallRuns
	if p.Mirrored != nil {
		if *p.Mirrored && alg == AlgorithmSepCMAES {
			return "", selfParams{}, cfg, errorf(CodeOutOfRange, "mirrored applies to %q and %q, not %q", AlgorithmCMAES, AlgorithmSelfCMAES, alg)
		}
		// The local runs: the first, and BIPOP's small ones.
		cfg.MirroredFirstRun, cfg.MirroredSmallRuns = *p.Mirrored, *p.Mirrored
	}
	cfg.MeanRateSmallRuns, cfg.MeanRateLargeRuns = def.MeanRateSmallRuns, def.MeanRateLargeRuns
	if p.MeanRate != nil {
		if *p.MeanRate && alg == AlgorithmSepCMAES {
			return "", selfParams{}, cfg, errorf(CodeOutOfRange, "mean_rate applies to %q and %q, not %q", AlgorithmCMAES, AlgorithmSelfCMAES, alg)
		}
		cfg.MeanRateSmallRuns, cfg.MeanRateLargeRuns = false, *p.MeanRate
	}
	if err := l.checkName(p.Name); err != nil {
		return "", selfParams{}, cfg, err
	}
	if err := l.checkMetadata(p.Metadata); err != nil {
		return "", selfParams{}, cfg, err
	}
	// A population_size left out is left to the engine (0): the same λ,
	// and BIPOP's populations from pycma's unrounded popsize0, as
	// cmd/bench runs them.
	cfg.X0, cfg.Sigma0, cfg.Lambda = p.X0, p.Sigma0, p.PopulationSize
	return alg, selfParams{Init: init, SNR: snr}, cfg, nil
}

// checkX0 checks x0: 1 to MaxDimension finite values.
func (l Limits) checkX0(x0 []float64) error {
	if n := len(x0); n < 1 || n > l.MaxDimension {
		return errorf(CodeOutOfRange, "x0 has %d values, want 1 to %d", n, l.MaxDimension)
	}
	for i, v := range x0 {
		if !finite(v) {
			return errorf(CodeOutOfRange, "x0[%d] is not a finite number", i)
		}
	}
	return nil
}

// checkSigma0 checks sigma0: finite and positive.
func checkSigma0(sigma0 float64) error {
	if !(sigma0 > 0) || !finite(sigma0) {
		return errorf(CodeOutOfRange, "sigma0 is %v, want a finite number > 0", sigma0)
	}
	return nil
}

// checkAlgorithm checks algorithm and returns it, defaults.Algorithm for "".
func checkAlgorithm(alg string) (string, error) {
	switch alg {
	case "":
		return defaults.Algorithm, nil
	case AlgorithmSelfCMAES, AlgorithmCMAES, AlgorithmSepCMAES:
		return alg, nil
	}
	return "", errorf(CodeOutOfRange, "algorithm %q, want %q, %q, %q or %q", alg, AlgorithmSelfCMAES, AlgorithmCMAES, AlgorithmSepCMAES, AlgorithmCatCMA)
}

// checkSNR checks hyperparameters.snr for alg and returns it, with its
// default for self-CMA-ES.
func checkSNR(alg string, snr *bool) (bool, error) {
	switch {
	case snr == nil:
		return alg == AlgorithmSelfCMAES && defaults.For(alg).SNR, nil
	case alg != AlgorithmSelfCMAES && *snr:
		return false, errorf(CodeOutOfRange, "hyperparameters.snr applies to %q only", AlgorithmSelfCMAES)
	}
	return *snr, nil
}

// checkInit checks hyperparameters.init for alg and returns it, with its
// default for self-CMA-ES.
func checkInit(alg, init string) (string, error) {
	switch {
	case alg != AlgorithmSelfCMAES && init != "":
		return "", errorf(CodeOutOfRange, "hyperparameters.init applies to %q only", AlgorithmSelfCMAES)
	case alg == AlgorithmSelfCMAES && init == "":
		return selfcma.InitDefault, nil
	case alg == AlgorithmSelfCMAES && init != selfcma.InitDefault && init != selfcma.InitUniform:
		return "", errorf(CodeOutOfRange, "hyperparameters.init %q, want %q or %q", init, selfcma.InitDefault, selfcma.InitUniform)
	}
	return init, nil
}

// checkPopulationSize checks population_size and returns λ, the
// algorithm's default for 0.
func (l Limits) checkPopulationSize(alg string, size, n int) (int, error) {
	lambda := size
	if lambda == 0 {
		lambda = defaultLambda(alg, n)
	}
	if lambda < 2 || lambda > l.MaxPopulation {
		return 0, errorf(CodeOutOfRange, "population_size %d, want 2 to %d", size, l.MaxPopulation)
	}
	if lambda > l.MaxBatch/n {
		return 0, errorf(CodeOutOfRange, "population_size %d times dimension %d is over the limit of %d numbers per batch", lambda, n, l.MaxBatch)
	}
	return lambda, nil
}

// defaultLambda is the engine's λ of algorithm alg in dimension n when
// none is given.
func defaultLambda(alg string, n int) int {
	if alg == AlgorithmSelfCMAES {
		return selfcma.DefaultLambda(n)
	}
	return cmaes.DefaultLambda(n)
}

// checkBounds checks bounds against x0 (already checked); nil = none.
func checkBounds(b *Bounds, x0 []float64) (*cmaes.Bounds, error) {
	if b == nil {
		return nil, nil
	}
	n := len(x0)
	if len(b.Lower) != n || len(b.Upper) != n {
		return nil, errorf(CodeOutOfRange, "bounds have %d lower and %d upper values, want %d each", len(b.Lower), len(b.Upper), n)
	}
	for i := range n {
		lo, up := b.Lower[i], b.Upper[i]
		switch {
		case !finite(lo):
			return nil, errorf(CodeOutOfRange, "bounds.lower[%d] is not finite", i)
		case !finite(up):
			return nil, errorf(CodeOutOfRange, "bounds.upper[%d] is not finite", i)
		case !(lo < up):
			return nil, errorf(CodeOutOfRange, "bounds.lower[%d] = %v is not below bounds.upper[%d] = %v", i, lo, i, up)
		case x0[i] < lo || x0[i] > up:
			return nil, errorf(CodeOutOfRange, "x0[%d] = %v is outside the bounds [%v, %v]", i, x0[i], lo, up)
		}
	}
	return &cmaes.Bounds{Lower: b.Lower, Upper: b.Upper}, nil
}

// checkRestarts checks restarts for the engine's configuration cfg (x0,
// its λ or 0 for the default, bounds: checked) whose first run has λ =
// lambda, a field left out taking def's value, and returns cmaes's
// restarts.
//
// λ grows to what the engine reports as the largest of its schedule
// (cmaes.Config.MaxLambda: IPOP's last run, BIPOP's last large run),
// which must stay within the limits. A max
// left out is the default, lowered until it does; a restarts left out
// entirely whose strategy cannot restart even once within them is none, so
// that no create is refused for a default it did not ask for.
func (l Limits) checkRestarts(r Restarts, def defaults.Settings, cfg cmaes.Config, lambda int) (cmaes.Restarts, error) {
	var c cmaes.Restarts
	n, b := len(cfg.X0), cfg.Bounds
	strategy := r.Strategy
	switch {
	case strategy != "":
	case r.Max != nil && *r.Max == 0:
		strategy = RestartsNone // no restarts, as before there were defaults
	default:
		strategy = def.Restarts
	}
	switch strategy {
	case RestartsNone:
		const needs = "needs a restarts.strategy other than \"none\""
		switch {
		case r.Max != nil && *r.Max != 0:
			return c, errorf(CodeOutOfRange, "restarts.max %d %s", *r.Max, needs)
		case r.IncPopSize != nil:
			return c, errorf(CodeOutOfRange, "restarts.incpopsize %s", needs)
		case r.Point != "":
			return c, errorf(CodeOutOfRange, "restarts.point %s", needs)
		case r.Region != nil:
			return c, errorf(CodeOutOfRange, "restarts.region %s", needs)
		case r.SpareBestSmall != nil && *r.SpareBestSmall:
			return c, errorf(CodeOutOfRange, "restarts.spare_best_small %s", needs)
		}
		return c, nil
	default:
		var ok bool
		if c, ok = defaults.Restarts(strategy); !ok {
			return c, errorf(CodeOutOfRange, "restarts.strategy %q, want one of %q", r.Strategy, defaults.RestartStrategies)
		}
	}

	c.IncPopSize = def.IncPopSize
	if r.IncPopSize != nil {
		c.IncPopSize = *r.IncPopSize
		if !finite(c.IncPopSize) || !(c.IncPopSize > 1) {
			return c, errorf(CodeOutOfRange, "restarts.incpopsize %v, want a finite number > 1", c.IncPopSize)
		}
	}

	// BIPOP's small runs only: the default where the strategy has them.
	c.SpareBestSmall = def.SpareBestSmall && c.BIPOP
	if r.SpareBestSmall != nil {
		if *r.SpareBestSmall && !c.BIPOP {
			return c, errorf(CodeOutOfRange, "restarts.spare_best_small needs restarts.strategy %q or %q (small runs), not %q", RestartsBIPOP, RestartsNBIPOP, strategy)
		}
		c.SpareBestSmall = *r.SpareBestSmall
	}

	var err error
	if c.Point, err = checkRestartPoint(r, def.RestartPoint, n, b); err != nil {
		return c, err
	}

	grows := func(k int) bool { // the engine's largest λ with max k within the limits
		cfg.Restarts = c
		cfg.Restarts.Max = k
		lam := cfg.MaxLambda()
		return lam <= l.MaxPopulation && lam <= l.MaxBatch/n
	}
	if r.Max != nil {
		c.Max = *r.Max
		switch {
		case c.Max < 1:
			return cmaes.Restarts{}, errorf(CodeOutOfRange, "restarts.max %d with restarts.strategy %q, want at least 1 (strategy %q for no restarts)", c.Max, strategy, RestartsNone)
		case !grows(c.Max):
			return cmaes.Restarts{}, errorf(CodeOutOfRange, "restarts.max %d: population size %d times %v^%d is over the limits (%d, and %d numbers per batch)", c.Max, lambda, c.IncPopSize, c.Max, l.MaxPopulation, l.MaxBatch)
		}
		return c, nil
	}
	c.Max = def.MaxRestarts
	for c.Max > 0 && !grows(c.Max) {
		c.Max--
	}
	if c.Max == 0 {
		if r == (Restarts{}) {
			return cmaes.Restarts{}, nil // the default cannot restart here: none
		}
		return cmaes.Restarts{}, errorf(CodeOutOfRange, "restarts: population size %d times %v is over the limits (%d, and %d numbers per batch): no restart fits", lambda, c.IncPopSize, l.MaxPopulation, l.MaxBatch)
	}
	return c, nil
}

// checkSepRestarts refuses for sep-CMA-ES what its restarts do not know:
// NIPOP's and NBIPOP's rules (strategy names them) and the spared small
// run.
func checkSepRestarts(alg string, rs cmaes.Restarts, strategy string) error {
	switch {
	case alg != AlgorithmSepCMAES:
		return nil
	case rs.SigmaDec != 0 || rs.Budget != 0:
		return errorf(CodeOutOfRange, "restarts.strategy %q applies to %q and %q, not %q", strategy, AlgorithmCMAES, AlgorithmSelfCMAES, alg)
	case rs.SpareBestSmall:
		return errorf(CodeOutOfRange, "restarts.spare_best_small applies to %q and %q, not %q", AlgorithmCMAES, AlgorithmSelfCMAES, alg)
	}
	return nil
}

// checkRestartPoint checks restarts.point and restarts.region in dimension
// n with bounds b (checked; nil = none) and returns cmaes's point, def for
// a point left out (PointX0 instead of a default PointUniform that has
// neither region nor bounds to draw in).
func checkRestartPoint(r Restarts, def string, n int, b *cmaes.Bounds) (cmaes.RestartPoint, error) {
	var p cmaes.RestartPoint
	point := r.Point
	if point == "" {
		point = def
	}
	switch point {
	case PointX0:
		if r.Region != nil {
			return p, errorf(CodeOutOfRange, "restarts.region needs restarts.point %q (the point is %q)", PointUniform, point)
		}
		return p, nil
	case PointUniform:
	default:
		return p, errorf(CodeOutOfRange, "restarts.point %q, want %q or %q", r.Point, PointX0, PointUniform)
	}
	region, err := checkRegion(r.Region, n, b)
	if err != nil {
		return p, err
	}
	if region == nil && b == nil {
		if r.Point != "" {
			return p, errorf(CodeOutOfRange, "restarts.point %q needs restarts.region or bounds to draw in", PointUniform)
		}
		return p, nil // the default: from x0
	}
	return cmaes.RestartPoint{Uniform: true, Region: region}, nil
}

// checkRegion checks restarts.region: n finite lower < upper values,
// inside bounds b when not nil; nil = none.
func checkRegion(r *Bounds, n int, b *cmaes.Bounds) (*cmaes.Bounds, error) {
	if r == nil {
		return nil, nil
	}
	if len(r.Lower) != n || len(r.Upper) != n {
		return nil, errorf(CodeOutOfRange, "restarts.region has %d lower and %d upper values, want %d each", len(r.Lower), len(r.Upper), n)
	}
	for i := range n {
		lo, up := r.Lower[i], r.Upper[i]
		switch {
		case !finite(lo):
			return nil, errorf(CodeOutOfRange, "restarts.region.lower[%d] is not finite", i)
		case !finite(up):
			return nil, errorf(CodeOutOfRange, "restarts.region.upper[%d] is not finite", i)
		case !(lo < up):
			return nil, errorf(CodeOutOfRange, "restarts.region.lower[%d] = %v is not below restarts.region.upper[%d] = %v", i, lo, i, up)
		case b != nil && lo < b.Lower[i]:
			return nil, errorf(CodeOutOfRange, "restarts.region.lower[%d] = %v is below bounds.lower[%d] = %v", i, lo, i, b.Lower[i])
		case b != nil && up > b.Upper[i]:
			return nil, errorf(CodeOutOfRange, "restarts.region.upper[%d] = %v is above bounds.upper[%d] = %v", i, up, i, b.Upper[i])
		}
	}
	return &cmaes.Bounds{Lower: slices.Clone(r.Lower), Upper: slices.Clone(r.Upper)}, nil
}

// checkTermination checks termination and returns cmaes's criteria.
func checkTermination(t Termination) (cmaes.Termination, error) {
	var c cmaes.Termination
	if t.MaxEvaluations < 0 {
		return c, errorf(CodeOutOfRange, "termination.max_evaluations %d, want at least 0", t.MaxEvaluations)
	}
	c.MaxEvaluations = t.MaxEvaluations
	if t.TargetFitness != nil {
		if !finite(*t.TargetFitness) {
			return c, errorf(CodeOutOfRange, "termination.target_fitness is not finite")
		}
		c.HasTarget, c.TargetFitness = true, *t.TargetFitness
	}
	for _, tol := range []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"tol_fun", t.TolFun, &c.TolFun},
		{"tol_x", t.TolX, &c.TolX},
		{"condition_cov", t.ConditionCov, &c.ConditionCov},
		{"tol_up_sigma", t.TolUpSigma, &c.TolUpSigma},
	} {
		v, err := checkTolerance(tol.name, tol.v)
		if err != nil {
			return c, err
		}
		*tol.dst = v
	}
	off := func(b *bool) bool { return b != nil && !*b }
	c.NoEffectAxis = off(t.NoEffectAxis)
	c.NoEffectCoord = off(t.NoEffectCoord)
	c.NoStagnation = off(t.Stagnation)
	c.NoEqualFunVal = off(t.EqualFunValues)
	c.MaxFailedGenerations = maxFailedGenerations(t.MaxFailedGenerations)
	return c, nil
}

// checkTolWorse checks termination.tol_worse and returns cmaes's ε (0:
// off): nil selects def, the algorithm's default, but off in a constrained
// session, whose augmented Lagrangian moves the values under the engine
// (as Stagnation, constrainedStagnation); sep-CMA-ES has no such criterion.
func checkTolWorse(p CreateParams, alg string, def float64) (float64, error) {
	v := p.Termination.TolWorse
	switch {
	case v == nil && p.Constraints != nil:
		return 0, nil
	case v == nil:
		return def, nil
	case !finite(*v) || *v < 0:
		return 0, errorf(CodeOutOfRange, "termination.tol_worse %v, want a finite number ≥ 0 (0 disables it)", *v)
	case *v > 0 && alg == AlgorithmSepCMAES:
		return 0, errorf(CodeOutOfRange, "termination.tol_worse applies to %q and %q, not %q", AlgorithmCMAES, AlgorithmSelfCMAES, alg)
	}
	return *v, nil
}

// checkTolWorseDelta checks termination.tol_worse_delta and returns
// cmaes's δ: nil selects def, the algorithm's default; 0 spares no run
// (cmaes's negative δ).
func checkTolWorseDelta(v *float64, alg string, def float64) (float64, error) {
	switch {
	case v == nil:
		return def, nil
	case !finite(*v) || *v < 0:
		return 0, errorf(CodeOutOfRange, "termination.tol_worse_delta %v, want a finite number ≥ 0 (0 spares no restart)", *v)
	case alg == AlgorithmSepCMAES:
		return 0, errorf(CodeOutOfRange, "termination.tol_worse_delta applies to %q and %q, not %q", AlgorithmCMAES, AlgorithmSelfCMAES, alg)
	case *v == 0:
		return -1, nil
	}
	return *v, nil
}

// maxFailedGenerations is termination.max_failed_generations as cmaes
// takes it: nil selects the default (0 there), a positive count sets it,
// and 0 or a negative count disables the criterion (negative there).
func maxFailedGenerations(v *int) int {
	switch {
	case v == nil:
		return 0
	case *v <= 0:
		return -1
	}
	return *v
}

// checkTolerance checks termination.name and returns cmaes's value: 0
// for nil (its default), -1 for 0 (disabled).
func checkTolerance(name string, v *float64) (float64, error) {
	switch {
	case v == nil:
		return 0, nil
	case !finite(*v) || *v < 0:
		return 0, errorf(CodeOutOfRange, "termination.%s %v, want a finite number ≥ 0 (0 disables it)", name, *v)
	case *v == 0:
		return -1, nil // cmaes: negative disables
	}
	return *v, nil
}

// checkName checks name's length.
func (l Limits) checkName(name string) error {
	if len(name) > l.MaxNameBytes {
		return errorf(CodeOutOfRange, "name has %d bytes, want at most %d", len(name), l.MaxNameBytes)
	}
	return nil
}

// checkMetadata checks metadata's length.
func (l Limits) checkMetadata(m []byte) error {
	if len(m) > l.MaxMetadataLen {
		return errorf(CodeOutOfRange, "metadata has %d bytes, want at most %d", len(m), l.MaxMetadataLen)
	}
	return nil
}
