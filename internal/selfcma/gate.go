package selfcma

import "fmt"

// The gate: self-adaptation from a population size up (docs/algorithm.md §2,
// "Population size").
//
// The paper claims its gain for populations about ten times the default
// (λ = 100 at n = 10 and 20) and runs at no other λ. Below that, the
// one-generation likelihood h_t ranks too few points to tell rates apart:
// the auxiliary's mean drifts, c_1 climbs to 0.2–0.5 and C degenerates. A
// run whose λ is below MinLambda therefore uses the primary's default rates
// and runs no auxiliary generation: it is Algorithm 1 exactly, bit for bit
// the cmaes.ES of the same configuration. A run at or above it is
// Algorithm 2. λ is fixed within a run, so the gate opens or closes only
// at a restart, where the auxiliary CMA-ES starts afresh anyway.

// EveryLambda as Config.MinLambda self-adapts the rates in every run,
// whatever its λ: the paper's Algorithm 2 as it stands (and every state
// written before the gate).
const EveryLambda = 1

// DefaultMinLambda is the smallest λ at which a run self-adapts its rates
// when Config.MinLambda is 0.
func DefaultMinLambda(n int) int { return defaultMinLambda }

// defaultMinLambda is the measured default (docs/algorithm.md §2).
const defaultMinLambda = 40

// minLambdaOf resolves Config.MinLambda for dimension n.
func minLambdaOf(minLambda, n int) (int, error) {
	switch {
	case minLambda < 0:
		return 0, fmt.Errorf("selfcma: min lambda %d, want 0 (the default, %d at n = %d) or at least 1 (%d = every λ, the paper)",
			minLambda, DefaultMinLambda(n), n, EveryLambda)
	case minLambda == 0:
		return DefaultMinLambda(n), nil
	}
	return minLambda, nil
}

// MinLambda returns the smallest λ at which a run self-adapts its rates.
func (s *ES) MinLambda() int { return s.minLambda }

// Adapting reports whether the primary's current run self-adapts its rates
// (its λ ≥ MinLambda).
func (s *ES) Adapting() bool { return s.primary.Params().Lambda >= s.minLambda }

// setTheta sets the primary's θ for the next update: 0.9 × the auxiliary's
// mean in a run that self-adapts (applyAuxMean), else the defaults of its
// λ, the values cmaes.ES starts a run with. It reports whether θ is the
// auxiliary's.
func (s *ES) setTheta() bool {
	if s.Adapting() {
		return s.applyAuxMean()
	}
	if err := s.primary.SetHyper(s.primary.Params().Hyper()); err != nil {
		panic(fmt.Sprintf("selfcma: default θ rejected: %v", err))
	}
	return false
}
