package catcma

import (
	"errors"
	"math"
	"slices"
)

// ErrStopped is returned by Tell once the run has stopped (State.Stop).
var ErrStopped = errors.New("catcma: stopped")

// Termination are a service's stopping criteria beside ShouldStop's.
type Termination struct {
	MaxEvaluations int // 0: no limit
	// HasTarget: stop once a value ≤ TargetFitness is told.
	HasTarget     bool
	TargetFitness float64
	// NoShouldStop leaves the reference's should_stop out (ShouldStop).
	NoShouldStop bool
}

// Best is the best candidate told and its value.
type Best struct {
	Candidate
	F          float64
	Generation int // the generation it was asked in
}

// StopReason is a criterion that fired, with the value that made it fire.
// The names are cmaes's (tol_fun, tol_x, ...; requested for StopNow).
type StopReason struct {
	Name  string
	Value float64
}

// Stopped returns the criteria that stopped the run, nil while it goes on.
func (o *CatCMA) Stopped() []StopReason { return slices.Clone(o.State.Stop) }

// StopNow ends the run at the caller's request ("requested", the
// generations told as its value); a stopped run is left as it is.
func (o *CatCMA) StopNow() {
	if len(o.State.Stop) == 0 {
		o.State.Stop = []StopReason{{Name: "requested", Value: float64(o.State.Generation)}}
	}
}

// track counts the told batch, keeps its best finite value and checks the
// termination criteria; batch is the candidates the values are of.
func (o *CatCMA) track(batch []Candidate, f []float64) {
	s := &o.State
	s.Evaluations += len(f)
	for k, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) || (s.HasBest && !(v < s.Best.F)) {
			continue
		}
		s.Best, s.HasBest = Best{Candidate: batch[k], F: v, Generation: s.Generation}, true
	}
	t := s.Termination
	switch {
	case t.HasTarget && s.HasBest && s.Best.F <= t.TargetFitness:
		s.Stop = append(s.Stop, StopReason{Name: "target_fitness", Value: s.Best.F})
	case t.MaxEvaluations > 0 && s.Evaluations >= t.MaxEvaluations:
		s.Stop = append(s.Stop, StopReason{Name: "max_evaluations", Value: float64(s.Evaluations)})
	}
}
