package session

import (
	"fmt"
	"math"
	"strconv"
)

// The tell protocol as pure functions of the session's state and the tell:
// which values a tell brings, whether it repeats the last one, whether it
// completes the generation. The Manager runs them inside its update
// primitive (update.go); they read no store and change nothing.

// tellState is what the protocol reads of a session.
type tellState struct {
	Lambda     int          // the population size of the pending generation
	Generation int          // the pending generation
	Stopped    *Error       // non-nil once the session has stopped
	Last       *lastTell    // the tell that produced the pending generation
	Held       *partialTell // the values held by partial tells (any generation)
	M          int          // the number of constraints; 0 = unconstrained
}

// tellPlan is what a tell does.
type tellPlan struct {
	// Repeat: the tell is the last one sent again; it is answered with the
	// session as it is and changes nothing.
	Repeat bool
	// Apply, when not nil, are the λ values that complete the generation,
	// and ApplyG their constraint values (a constrained session's).
	Apply  []float64
	ApplyG [][]float64
	// Hold, when Apply is nil and Write is set, are the values to hold.
	Hold *partialTell
	// Write is whether the session changes (Apply, or new values held).
	Write bool
}

// planTell checks tell t against the session s and says what it does.
func planTell(s tellState, t TellParams) (tellPlan, error) {
	if lt := s.Last; lt != nil && lt.Generation == t.Generation && lt.repeats(t) {
		return tellPlan{Repeat: true}, nil
	}
	if s.Stopped != nil {
		return tellPlan{}, s.Stopped
	}
	g := s.Generation
	if t.Generation != g {
		ce := errorf(CodeConflict, "generation %d was told, the pending generation is %d", t.Generation, g)
		if t.Generation > g {
			ce.Message = fmt.Sprintf("generation %d has not been asked, the pending generation is %d", t.Generation, g)
		}
		ce.Generation = g
		return tellPlan{}, ce
	}
	fit, fitG, held, err := gather(s, t)
	switch {
	case err != nil:
		return tellPlan{}, err
	case fit != nil:
		return tellPlan{Apply: fit, ApplyG: fitG, Write: true}, nil
	case held != s.Held:
		return tellPlan{Hold: held, Write: true}, nil
	}
	return tellPlan{}, nil // values held already
}

// gather checks tell t of s's pending generation against the population
// size and the values s holds, and returns the λ values to apply once the
// generation is complete (else nil) with their constraint values (a
// constrained session's), and the values to hold: s.Held itself when t
// adds none.
func gather(s tellState, t TellParams) ([]float64, [][]float64, *partialTell, error) {
	lam, g := s.Lambda, s.Generation
	if err := checkTellValues(s, t); err != nil {
		return nil, nil, nil, err
	}
	rowOf := func(k int) []float64 { return nil }
	if s.M > 0 {
		rowOf = func(k int) []float64 { return constraintRow(t, k, s.M) }
	}

	held := s.Held
	if held != nil && held.Generation != g {
		held = nil
	}
	if t.Indices == nil && held == nil { // the whole generation at once
		var rows [][]float64
		if s.M > 0 {
			rows = make([][]float64, lam)
			for k := range rows {
				rows[k] = rowOf(k)
			}
		}
		return t.Fitness, rows, nil, nil
	}

	// The values of the generation, those held first.
	val := make([]float64, lam)
	rows := make([][]float64, lam)
	told := make([]bool, lam)
	n := 0
	if held != nil {
		for k, i := range held.Indices {
			if i < lam {
				val[i], told[i] = held.Fitness[k], true
				if held.G != nil {
					rows[i] = held.G[k]
				}
				n++
			}
		}
	}
	nheld := n
	var mine []bool // the candidates t tells
	if t.Indices != nil {
		mine = make([]bool, lam)
	}
	for k, f := range t.Fitness {
		i := k
		if t.Indices != nil {
			i = t.Indices[k]
			if i < 0 || i >= lam {
				return nil, nil, nil, errorf(CodeOutOfRange, "indices[%d] is %d, want 0 to %d (the population size is %d)", k, i, lam-1, lam)
			}
			if mine[i] {
				return nil, nil, nil, errorf(CodeOutOfRange, "indices[%d] repeats candidate %d", k, i)
			}
			mine[i] = true
		}
		row := rowOf(k)
		switch {
		case !told[i]:
			val[i], rows[i], told[i] = f, row, true
			n++
		case !sameValue(val[i], f): // held
			ce := errorf(CodeConflict, "candidate %d of generation %d was told %s before, now %s", i, g, fmtValue(val[i]), fmtValue(f))
			ce.Generation = g
			return nil, nil, nil, ce
		case !sameRow(rows[i], row):
			ce := errorf(CodeConflict, "candidate %d of generation %d was told other constraint_values before", i, g)
			ce.Generation = g
			return nil, nil, nil, ce
		}
	}
	if s.M == 0 {
		rows = nil
	}
	if n == lam {
		return val, rows, nil, nil
	}
	if n == nheld {
		return nil, nil, s.Held, nil
	}
	p := &partialTell{Generation: g}
	for i, ok := range told {
		if ok {
			p.Indices = append(p.Indices, i)
			p.Fitness = append(p.Fitness, val[i])
			if rows != nil {
				p.G = append(p.G, rows[i])
			}
		}
	}
	return nil, nil, p, nil
}

// checkTellValues checks the values of tell t against the population size
// and the constraints of s.
func checkTellValues(s tellState, t TellParams) error {
	lam := s.Lambda
	for i, f := range t.Fitness {
		if math.IsInf(f, 0) {
			return errorf(CodeOutOfRange, "fitness[%d] is infinite, want a finite number or null", i)
		}
	}
	if t.Indices == nil && len(t.Fitness) != lam {
		return errorf(CodeOutOfRange, "fitness has %d values, want %d (the population size)", len(t.Fitness), lam)
	}
	if t.Indices != nil {
		if len(t.Indices) != len(t.Fitness) {
			return errorf(CodeOutOfRange, "indices has %d values and fitness %d, want as many", len(t.Indices), len(t.Fitness))
		}
		if len(t.Indices) == 0 {
			return errorf(CodeOutOfRange, "indices is empty, want 1 to %d candidates", lam)
		}
	}
	return checkConstraintValues(s.M, t)
}

// toldIndices marks the candidates of generation g among lam that p holds
// values of.
func toldIndices(p *partialTell, g, lam int) []bool {
	told := make([]bool, lam)
	if p != nil && p.Generation == g {
		for _, i := range p.Indices {
			if i >= 0 && i < lam {
				told[i] = true
			}
		}
	}
	return told
}

// lastTellOf is the lastTell recorded for the λ values fit of generation g
// and their constraint values rows (nil: none).
func lastTellOf(g int, fit []float64, rows [][]float64) *lastTell {
	lt := &lastTell{Generation: g, Fitness: make([]nullNum, len(fit)), G: rows}
	for i, f := range fit {
		lt.Fitness[i] = nullNum(f)
	}
	return lt
}

// repeats reports whether t tells what lt told: all its values, or for a
// partial tell the values of t's candidates.
func (lt *lastTell) repeats(t TellParams) bool {
	if (lt.G == nil) != (t.Constraints == nil) || t.Constraints != nil && len(t.Constraints) != len(t.Fitness) {
		return false
	}
	m := 0
	if len(lt.G) > 0 {
		m = len(lt.G[0])
	}
	same := func(i, k int) bool {
		return sameValue(float64(lt.Fitness[i]), t.Fitness[k]) && (lt.G == nil || sameRow(lt.G[i], constraintRow(t, k, m)))
	}
	if t.Indices == nil {
		if len(lt.Fitness) != len(t.Fitness) {
			return false
		}
		for i := range t.Fitness {
			if !same(i, i) {
				return false
			}
		}
		return true
	}
	if len(t.Indices) == 0 || len(t.Indices) != len(t.Fitness) {
		return false
	}
	for k, i := range t.Indices {
		if i < 0 || i >= len(lt.Fitness) || !same(i, k) {
			return false
		}
	}
	return true
}

// sameValue compares two told values, NaN (a failed evaluation) equal to
// NaN.
func sameValue(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }

// fmtValue writes a told value as a client wrote it: null for NaN.
func fmtValue(f float64) string {
	if math.IsNaN(f) {
		return "null"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
