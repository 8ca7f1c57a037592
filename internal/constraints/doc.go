// Package constraints ranks the candidates of a constrained problem,
// minimise f(x) subject to g_i(x) ≤ 0 (i = 1…m), by an augmented
// Lagrangian whose coefficients adapt as the optimization runs: Atamna,
// Auger, Hansen, "Augmented Lagrangian Constraint Handling for CMA-ES — Case
// of a Single Linear Constraint", PPSN 2016, and "Linearly Convergent
// Evolution Strategies via Augmented Lagrangian Constraint Handling", FOGA
// 2017 (Algorithm 1, §8.2), exactly as pycma 4.4.0's ConstrainedFitnessAL
// and AugmentedLagrangian (cma/constraints_handler.py) implement them with
// their defaults: algorithm 0 (Atamna 2017's parameters k1 = 3, χ = 2^{1/(5n)},
// d_γ = 5, with pycma's μ-update conditions muplus3/muminus3 and their
// same-sign ramp), coefficients set from the first populations
// (set_coefficients), the coefficients updated from the best candidate of
// each iteration by the AL value (which = "best"), no phase of finding a
// feasible point first.
//
// Per candidate the AL value is f + Σ_i (λ_i g_i + μ_i g_i²/2) with g_i
// raised to −λ_i/μ_i where it is below; an optimizer ranks by it. Tell takes
// one iteration's f and g values, returns their AL values (computed with
// the coefficients before the iteration) and then updates the
// coefficients. The State is plain data and encodes exactly with a
// version. The package imports math only (and binenc for the encoding).
package constraints
