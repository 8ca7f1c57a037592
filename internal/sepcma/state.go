package sepcma

import (
	"math/rand/v2"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// State is everything the next generation depends on, as plain data. The
// pending batch is not in it: it is what sampling from Rand with Mean,
// Sigma and C gives (ES.sample), and BatchSum is its hash, which Restore
// checks. Params follow from (len(Config.X0), Lambda, Config.Rates).
type State struct {
	Config Config // as New resolved it
	Lambda int    // λ of the current run

	// The distribution (Ros and Hansen 2008, Sect. 2): m, σ, the diagonal
	// of C, the evolution paths p_σ and p_c, and t, the generations of the
	// current run.
	Mean   []float64
	Sigma  float64
	C      []float64
	PSigma []float64
	PC     []float64
	T      int

	Generation  int // generations told over all runs; id of the pending batch
	Evaluations int
	Run         int
	RunEnds     []cmaes.RunEnd

	// Restarts (restart.go): the current run's regime (cmaes.RegimeDefault,
	// RegimeLarge or RegimeSmall), the σ it started with and its
	// generation limit (0: none).
	Regime    string
	RunSigma0 float64
	GenLimit  int

	Best    cmaes.Best
	HasBest bool

	// Histories of the termination criteria (stop.go).
	FunHist    []float64 // best of each recent generation, a ring; the next write at FunPos
	FunPos     int
	FunN       int
	StagBest   []float64 // best and median of the run's recent generations
	StagMed    []float64
	FlatGens   []int // generations whose best and ⌈λ/4⌉-th values were equal, a ring
	FlatPos    int
	FlatN      int
	FailedGens int // consecutive generations whose every value was NaN

	Stop []cmaes.StopReason // empty while running

	// Injected points (inject.go): those waiting for the next batch, and
	// those that are candidates 0, 1, ... of the pending batch.
	Queued        []cmaes.Injection
	BatchInjected []cmaes.Injection

	// Rand is the random stream before the pending batch was sampled.
	Rand     rand.PCG
	BatchSum uint64
}

// clone returns a deep copy of s.
func (s State) clone() State {
	s.Config = s.Config.resolved()
	s.Mean = slices.Clone(s.Mean)
	s.C = slices.Clone(s.C)
	s.PSigma = slices.Clone(s.PSigma)
	s.PC = slices.Clone(s.PC)
	s.RunEnds = slices.Clone(s.RunEnds)
	for i := range s.RunEnds {
		s.RunEnds[i].Reasons = slices.Clone(s.RunEnds[i].Reasons)
	}
	s.Best.X = slices.Clone(s.Best.X)
	s.FunHist = slices.Clone(s.FunHist)
	s.StagBest = slices.Clone(s.StagBest)
	s.StagMed = slices.Clone(s.StagMed)
	s.FlatGens = slices.Clone(s.FlatGens)
	s.Stop = slices.Clone(s.Stop)
	s.Queued = cloneInjections(s.Queued)
	s.BatchInjected = cloneInjections(s.BatchInjected)
	return s
}
