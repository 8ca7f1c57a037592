package session

import (
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// Limits bound what one session may take of the server.
type Limits struct {
	MaxDimension   int // n
	MaxPopulation  int // λ, also after IPOP restarts
	MaxBatch       int // λ·n, the numbers of one batch, also after restarts
	MaxNameBytes   int
	MaxMetadataLen int // bytes of the metadata object
}

// DefaultLimits are the server's defaults.
var DefaultLimits = Limits{
	MaxDimension:   2000,
	MaxPopulation:  100000,
	MaxBatch:       1000000,
	MaxNameBytes:   256,
	MaxMetadataLen: 64 << 10,
}

// defaultMaxRestarts is the IPOP budget when none is given (cmaes's).
const defaultMaxRestarts = cmaes.DefaultMaxRestarts

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// config checks p against the limits and returns the algorithm, the
// auxiliary's initialization and the engine's configuration, without the
// seed.
func (l Limits) config(p CreateParams) (string, string, cmaes.Config, error) {
	var cfg cmaes.Config
	n := len(p.X0)
	if n < 1 || n > l.MaxDimension {
		return "", "", cfg, errorf(CodeOutOfRange, "x0 has %d values, want 1 to %d", n, l.MaxDimension)
	}
	for i, v := range p.X0 {
		if !finite(v) {
			return "", "", cfg, errorf(CodeOutOfRange, "x0[%d] is not a finite number", i)
		}
	}
	if !(p.Sigma0 > 0) || !finite(p.Sigma0) {
		return "", "", cfg, errorf(CodeOutOfRange, "sigma0 is %v, want a finite number > 0", p.Sigma0)
	}

	alg := p.Algorithm
	switch alg {
	case "":
		alg = AlgorithmSelfCMAES
	case AlgorithmSelfCMAES, AlgorithmCMAES:
	default:
		return "", "", cfg, errorf(CodeOutOfRange, "algorithm %q, want %q or %q", alg, AlgorithmSelfCMAES, AlgorithmCMAES)
	}
	init := p.Init
	switch {
	case alg == AlgorithmCMAES && init != "":
		return "", "", cfg, errorf(CodeOutOfRange, "hyperparameters.init applies to %q only", AlgorithmSelfCMAES)
	case alg == AlgorithmSelfCMAES && init == "":
		init = selfcma.InitDefault
	case alg == AlgorithmSelfCMAES && init != selfcma.InitDefault && init != selfcma.InitUniform:
		return "", "", cfg, errorf(CodeOutOfRange, "hyperparameters.init %q, want %q or %q", init, selfcma.InitDefault, selfcma.InitUniform)
	}

	lambda := p.PopulationSize
	switch {
	case lambda != 0:
	case alg == AlgorithmSelfCMAES:
		lambda = selfcma.DefaultLambda(n) // the paper's λ = 100: see package selfcma
	default:
		lambda = cmaes.DefaultLambda(n)
	}
	if lambda < 2 || lambda > l.MaxPopulation {
		return "", "", cfg, errorf(CodeOutOfRange, "population_size %d, want 2 to %d", p.PopulationSize, l.MaxPopulation)
	}
	if lambda > l.MaxBatch/n {
		return "", "", cfg, errorf(CodeOutOfRange, "population_size %d times dimension %d is over the limit of %d numbers per batch", lambda, n, l.MaxBatch)
	}

	if b := p.Bounds; b != nil {
		if len(b.Lower) != n || len(b.Upper) != n {
			return "", "", cfg, errorf(CodeOutOfRange, "bounds have %d lower and %d upper values, want %d each", len(b.Lower), len(b.Upper), n)
		}
		for i := range n {
			lo, up := b.Lower[i], b.Upper[i]
			switch {
			case !finite(lo) || !finite(up):
				return "", "", cfg, errorf(CodeOutOfRange, "bounds[%d] are not finite", i)
			case !(lo < up):
				return "", "", cfg, errorf(CodeOutOfRange, "bounds.lower[%d] = %v is not below bounds.upper[%d] = %v", i, lo, i, up)
			case p.X0[i] < lo || p.X0[i] > up:
				return "", "", cfg, errorf(CodeOutOfRange, "x0[%d] = %v is outside the bounds [%v, %v]", i, p.X0[i], lo, up)
			}
		}
		cfg.Bounds = &cmaes.Bounds{Lower: b.Lower, Upper: b.Upper}
	}

	switch p.Restarts.Strategy {
	case "", "none":
		if p.Restarts.Max != nil && *p.Restarts.Max != 0 {
			return "", "", cfg, errorf(CodeOutOfRange, "restarts.max needs restarts.strategy \"ipop\"")
		}
	case "ipop":
		fits := func(k int) bool { // λ·2^k within the limits
			lam := lambda
			for range k {
				lam *= 2
				if lam > l.MaxPopulation || lam > l.MaxBatch/n {
					return false
				}
			}
			return true
		}
		k := defaultMaxRestarts
		if p.Restarts.Max != nil {
			k = *p.Restarts.Max
			if k < 0 || !fits(k) {
				return "", "", cfg, errorf(CodeOutOfRange, "restarts.max %d: population size %d doubled that often is over the limits (%d, and %d numbers per batch)", k, lambda, l.MaxPopulation, l.MaxBatch)
			}
		} else {
			for k > 0 && !fits(k) {
				k--
			}
		}
		if k == 0 {
			return "", "", cfg, errorf(CodeOutOfRange, "restarts: population size %d cannot be doubled within the limits", lambda)
		}
		cfg.Restarts = cmaes.Restarts{IPOP: true, Max: k}
	default:
		return "", "", cfg, errorf(CodeOutOfRange, "restarts.strategy %q, want \"none\" or \"ipop\"", p.Restarts.Strategy)
	}

	t := p.Termination
	if t.MaxEvaluations < 0 {
		return "", "", cfg, errorf(CodeOutOfRange, "termination.max_evaluations %d, want at least 0", t.MaxEvaluations)
	}
	cfg.Termination.MaxEvaluations = t.MaxEvaluations
	if t.TargetFitness != nil {
		if !finite(*t.TargetFitness) {
			return "", "", cfg, errorf(CodeOutOfRange, "termination.target_fitness is not finite")
		}
		cfg.Termination.HasTarget, cfg.Termination.TargetFitness = true, *t.TargetFitness
	}
	for _, tol := range []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"tol_fun", t.TolFun, &cfg.Termination.TolFun},
		{"tol_x", t.TolX, &cfg.Termination.TolX},
		{"condition_cov", t.ConditionCov, &cfg.Termination.ConditionCov},
		{"tol_up_sigma", t.TolUpSigma, &cfg.Termination.TolUpSigma},
	} {
		switch {
		case tol.v == nil:
		case !finite(*tol.v) || *tol.v < 0:
			return "", "", cfg, errorf(CodeOutOfRange, "termination.%s %v, want a finite number ≥ 0 (0 disables it)", tol.name, *tol.v)
		case *tol.v == 0:
			*tol.dst = -1 // cmaes: negative disables
		default:
			*tol.dst = *tol.v
		}
	}
	off := func(b *bool) bool { return b != nil && !*b }
	cfg.Termination.NoEffectAxis = off(t.NoEffectAxis)
	cfg.Termination.NoEffectCoord = off(t.NoEffectCoord)
	cfg.Termination.NoStagnation = off(t.Stagnation)
	cfg.Termination.NoEqualFunVal = off(t.EqualFunValues)
	cfg.Termination.MaxFailedGenerations = maxFailedGenerations(t.MaxFailedGenerations)

	if len(p.Name) > l.MaxNameBytes {
		return "", "", cfg, errorf(CodeOutOfRange, "name has %d bytes, want at most %d", len(p.Name), l.MaxNameBytes)
	}
	if len(p.Metadata) > l.MaxMetadataLen {
		return "", "", cfg, errorf(CodeOutOfRange, "metadata has %d bytes, want at most %d", len(p.Metadata), l.MaxMetadataLen)
	}

	cfg.X0, cfg.Sigma0, cfg.Lambda = p.X0, p.Sigma0, lambda
	return alg, init, cfg, nil
}
