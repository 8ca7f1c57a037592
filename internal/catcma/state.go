package catcma

import "math/rand/v2"

// State is everything the next generation depends on, as plain data. The
// Gaussian's quantities have N_mi = N_co + N_in coordinates, continuous
// first; matrices are row-major N_mi × N_mi.
type State struct {
	Generation int // g, the number of updates so far

	// The Gaussian N(m, σ² A C A) over the continuous and integer
	// coordinates: C = B diag(D²) Bᵀ holds exactly (C is rebuilt from its
	// eigendecomposition after every update, as the reference does).
	Mean   []float64
	Sigma  float64
	Sigma0 float64   // σ⁽⁰⁾, for ShouldStop's tolx
	B      []float64 // eigenvectors of C, columns
	D      []float64 // square roots of the eigenvalues of C, ascending
	C      []float64
	PSigma []float64
	PC     []float64
	// A is the diagonal of the margin's scaling matrix (1 on continuous
	// coordinates until a margin correction changes an integer one).
	A []float64

	// The integer handling: the mutation rates of the last margin
	// correction and whether the last update saw a successful integer
	// mutation per integer variable (_pmut, _int_succ).
	PMut    []float64
	IntSucc []bool

	// IQHist is the history of interquartile ranges of the fitness of
	// the box penalty, newest first; FunHist the best and the worst
	// fitness of the last generations (ShouldStop's tolfun).
	IQHist  []float64
	FunHist []float64

	// The categorical distributions: Q[i][k] the probability of category
	// k of variable i, and the ASNG's state: s, γ, Δ and the trust region
	// δ (the reference's _s, _gamma, _Delta, _delta).
	Q          [][]float64
	S          []float64
	Gamma      float64
	Delta      float64
	TrustDelta float64

	// The run's bookkeeping, for a service (track.go): the points told,
	// the best candidate told (HasBest false before the first finite
	// value), the termination criteria and the ones that fired (nil while
	// the run goes on).
	Seed        uint64 // Config.Seed, for a service to report
	Evaluations int
	Best        Best
	HasBest     bool
	Termination Termination
	Stop        []StopReason

	// RNG is the random stream after sampling the pending batch.
	RNG rand.PCG
	// The pending batch: the raw Gaussian samples v (λ × N_mi, before
	// clipping and discretisation) and the categories (λ × N_ca).
	V   [][]float64
	Cat [][]int
}
