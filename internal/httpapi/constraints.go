package httpapi

import (
	"math"

	"github.com/selfcma/selfcma/internal/session"
)

// Constrained sessions (session/constraints.go): the create's
// "constraints", a tell's "constraint_values", and what the session object
// and the history add.

type constraintsRequest struct {
	Count *int `json:"count"`
}

// constraintsOf turns the create's constraints into session's (nil: none).
func constraintsOf(c *constraintsRequest) (*session.Constraints, error) {
	if c == nil {
		return nil, nil
	}
	if c.Count == nil {
		return nil, invalid("constraints.count is required")
	}
	return &session.Constraints{Count: *c.Count}, nil
}

// constraintValuesOf turns a tell's constraint_values into session's: null
// as NaN (unknown), a null row as nil (all unknown); nil for none.
func constraintValuesOf(v [][]*float64) [][]float64 {
	if v == nil {
		return nil
	}
	out := make([][]float64, len(v))
	for k, row := range v {
		if row == nil {
			continue
		}
		out[k] = make([]float64, len(row))
		for i, p := range row {
			if p == nil {
				out[k][i] = math.NaN()
			} else {
				out[k][i] = *p
			}
		}
	}
	return out
}

// constraintsJSON is a constrained session's augmented Lagrangian.
type constraintsJSON struct {
	Count          int  `json:"count"`
	Multipliers    nums `json:"multipliers"`
	PenaltyFactors nums `json:"penalty_factors"`
}

// bestFeasibleJSON is the best feasible point told.
type bestFeasibleJSON struct {
	X          nums  `json:"x"`
	F          num   `json:"f"`
	G          nums  `json:"g"`
	Generation int   `json:"generation"`
	Z          nums  `json:"z,omitempty"` // a mixed session's (mixed.go)
	C          []int `json:"c,omitempty"`
}

func toConstraintsJSON(s session.Session, j *sessionJSON) {
	if c := s.Constraints; c != nil {
		j.Constraints = &constraintsJSON{Count: c.Count, Multipliers: nums(c.Multipliers), PenaltyFactors: nums(c.Penalties)}
	}
	if b := s.BestFeasible; b != nil {
		j.BestFeasible = &bestFeasibleJSON{X: nums(b.X), F: num(b.F), G: nums(b.G), Generation: b.Generation}
	}
	if j.Partial != nil && s.Partial.Constraints != nil {
		j.Partial.ConstraintValues = matrix(s.Partial.Constraints)
	}
}

// historyConstraintsJSON is what a constrained session's history record
// adds.
type historyConstraintsJSON struct {
	Feasible          *int `json:"feasible,omitempty"`
	Violation         *num `json:"violation,omitempty"`
	BestFeasible      *num `json:"best_feasible,omitempty"`
	BestFeasibleSoFar *num `json:"best_feasible_so_far,omitempty"`
}

func toHistoryConstraintsJSON(c *session.ConstraintRecord) historyConstraintsJSON {
	if c == nil {
		return historyConstraintsJSON{}
	}
	feas := c.Feasible
	v, bf, bfs := num(c.Violation), num(c.BestFeasible), num(c.BestFeasibleSoFar)
	return historyConstraintsJSON{Feasible: &feas, Violation: &v, BestFeasible: &bf, BestFeasibleSoFar: &bfs}
}
