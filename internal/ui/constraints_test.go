package ui_test

import (
	"math"
	"net/http"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/ui"
)

// TestConstraintsPanel: a constrained session's page has the constraints
// panel after the fitness, with the violation drawn where it is positive
// and the best feasible f where there is one; an unconstrained session's
// page has none (TestSessionPage).
func TestConstraintsPanel(t *testing.T) {
	const gens = 40
	pts := history(gens)
	positive, feasible := 0, 0
	for g := range pts {
		c := &ui.ConstraintPoint{Violation: math.Max(0, 1-float64(g)/10), BestFeasible: math.NaN(), BestFeasibleSoFar: math.NaN()}
		if c.Violation > 0 {
			positive++
		} else {
			c.Feasible, c.BestFeasible = 3, pts[g].Best+1
			feasible++
		}
		if g > 0 {
			prev := pts[g-1].Constraint.BestFeasibleSoFar
			c.BestFeasibleSoFar = prev
			if !(c.BestFeasible >= prev) && !math.IsNaN(c.BestFeasible) {
				c.BestFeasibleSoFar = c.BestFeasible
			}
		}
		pts[g].Constraint = c
	}
	src := newFake()
	src.put(detail("c1", "constrained", ui.StatusRunning, pts, t0), pts)
	s := server(t, src, ui.Options{})
	resp, body := get(t, s.URL+"/ui/sessions/c1")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d:\n%s", resp.StatusCode, body)
	}
	order, by := plots(t, body)
	want := append([]string{"fitness", "constraints"}, plotOrder[1:]...)
	if !slices.Equal(order, want) {
		t.Fatalf("plots %v, want %v", order, want)
	}
	p := by["constraints"]
	for name, n := range map[string]int{"violation": positive, "best-feasible": feasible, "best-feasible-so-far": feasible} {
		if got := p.points[name]; got != n {
			t.Errorf("series %s: %d points, want %d", name, got, n)
		}
	}
	if !slices.Equal(p.legend, []string{"best-feasible-so-far", "best-feasible", "violation"}) {
		t.Errorf("legend %v", p.legend)
	}
}
