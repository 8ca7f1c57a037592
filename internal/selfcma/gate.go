package selfcma

import (
	"fmt"
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// The gate: which runs self-adapt their rates (docs/algorithm.md §2,
// "Population size").
//
// The paper runs self-CMA-ES at λ = 100, about ten times the default, and
// claims its gain there, against CMA-ES at the same λ. We measured (BBOB,
// docs/algorithm.md §2):
//   - at small λ the one-generation likelihood h_t ranks too few points to
//     tell rates apart: the auxiliary's σ grows without bound, its mean
//     wanders off the defaults, c_1 climbs to 0.1–0.5 and C degenerates
//     (condition_cov); at λ = 10, n = 10, the sphere costs 4–8 times
//     CMA-ES's evaluations, and neither a prior pulling θ to the defaults
//     nor a cap on the auxiliary's σ brings it to CMA-ES's;
//   - from λ ≈ 10n up (n = 2 to 40) the paper's gain holds where the run
//     converges (sphere, ellipsoids, Rosenbrock, step ellipsoid: 10–30 %
//     fewer evaluations); from about 5n on some functions only, below that
//     not (n = 40, λ = 100: 1.4–5 times more);
//   - a self-adapted run converges to a local optimum more often on
//     multimodal functions (Rastrigin, Weierstrass, Gallagher), so a
//     restart that self-adapts costs more than it saves.
//
// So by default a run self-adapts only when its λ ≥ MinLambda, 10n, and it
// is the first run; every other run uses its λ's default rates and runs no
// auxiliary generation: it is Algorithm 1, bit for bit the cmaes.ES of the
// same configuration. With Config.SNR and no MinLambda named no run
// self-adapts by h_t: against active CMA-ES at the same λ the
// signal-to-noise rule measured better than h_t at λ ≥ 10n too
// (docs/algorithm.md §2, table 16). λ and the run change only at a
// restart, where the auxiliary CMA-ES starts afresh anyway.

// EveryLambda as Config.MinLambda, with Config.AdaptRestarts, self-adapts
// every run whatever its λ: the paper's Algorithm 2 as it stands (and
// every state written before the gate).
const EveryLambda = 1

// DefaultMinLambda is the smallest λ at which a run self-adapts its rates
// when Config.MinLambda is 0 and the signal-to-noise rule is off: 10n
// (measured at n = 2 to 40; the paper's λ = 100 at n = 10). It is above
// the default λ, 4 + ⌊3 ln n⌋, at every n.
func DefaultMinLambda(n int) int { return 10 * n }

// NoLikelihood as the resolved MinLambda: no run self-adapts by h_t. A
// new session's self-CMA-ES with Config.SNR (n ≤ SNRMaxDim) gets it when
// it names no MinLambda: above 10n too its first run adapts c_μ by the
// signal-to-noise rule, which measured better than h_t against CMA-ES at
// the same λ there (docs/algorithm.md §2, table 16). It exceeds every λ a
// session allows.
const NoLikelihood = math.MaxInt32

// minLambdaOf resolves Config.MinLambda for dimension n: 0 is
// DefaultMinLambda(n), or NoLikelihood when the signal-to-noise rule runs
// (snr, n ≤ SNRMaxDim).
func minLambdaOf(minLambda, n int, snr bool) (int, error) {
	switch {
	case minLambda < 0:
		return 0, fmt.Errorf("selfcma: min lambda %d, want 0 (the default, %d at n = %d) or at least %d (%d = every λ, the paper)",
			minLambda, DefaultMinLambda(n), n, EveryLambda, EveryLambda)
	case minLambda == 0 && snr && n <= SNRMaxDim:
		return NoLikelihood, nil
	case minLambda == 0:
		return DefaultMinLambda(n), nil
	}
	return minLambda, nil
}

// MinLambda returns the smallest λ at which a run self-adapts its rates.
func (s *ES) MinLambda() int { return s.minLambda }

// AdaptRestarts reports whether runs after the first self-adapt too (when
// their λ ≥ MinLambda).
func (s *ES) AdaptRestarts() bool { return s.adaptRestarts }

// Adapting reports whether the primary's current run self-adapts its
// rates: its λ ≥ MinLambda, and it is the first run or AdaptRestarts is
// set.
func (s *ES) Adapting() bool {
	if s.primary.Run() > 0 && !s.adaptRestarts {
		return false
	}
	return s.primary.Params().Lambda >= s.minLambda
}

// SNRMaxDim is the largest dimension at which Config.SNR applies: the
// rule costs O(n³) a generation and n² values of state, and was measured
// up to here (docs/algorithm.md §2, table 10).
const SNRMaxDim = 100

// snrUsed reports whether the current run uses the signal-to-noise rule
// (snr.go): Config.SNR is set, n ≤ SNRMaxDim, it does not self-adapt by
// h_t, and it is the first run or a restart whose λ is at most
// SNRParams.RestartMaxLambda.
func (s *ES) snrUsed() bool {
	if !s.snrOn || s.primary.Dim() > SNRMaxDim || s.Adapting() {
		return false
	}
	return s.primary.Run() == 0 || s.primary.Params().Lambda <= s.snrP.RestartMaxLambda ||
		s.snrP.SmallRestarts && s.primary.Regime() == cmaes.RegimeSmall
}

// SNR reports whether Config.SNR is set, and η, the factor of the default
// c_1 and c_μ the next update uses, while the current run uses the rule
// (1 otherwise).
func (s *ES) SNR() (on bool, eta float64) {
	if s.snr == nil {
		return s.snrOn, 1
	}
	return s.snrOn, s.snr.Eta
}

// setTheta sets the primary's θ for the next update: 0.9 × the auxiliary's
// mean in a run that self-adapts (applyAuxMean); η times the defaults in a
// first run that uses the signal-to-noise rule (snr.go); else the defaults
// of its λ, the values cmaes.ES starts a run with. It reports whether θ is
// the auxiliary's.
func (s *ES) setTheta() bool {
	if s.Adapting() {
		return s.applyAuxMean()
	}
	h := s.primary.Params().Hyper()
	if s.snr != nil {
		h = s.snr.hyper(h, s.snrP.Rates)
	}
	if err := s.primary.SetHyper(h); err != nil {
		panic(fmt.Sprintf("selfcma: default θ rejected: %v", err))
	}
	return false
}
