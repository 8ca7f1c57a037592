package ui

import (
	"html/template"
	"math"
)

// Colors of the constraints panel.
const (
	colorViolation     = "#9467bd"
	colorFeasible      = "#8c564b"
	colorFeasibleSoFar = "#111111"
)

// constraintsPanel renders a constrained session's panel over evaluations,
// beside the fitness: the least total violation Σ max(0, g_i) of each
// generation (not drawn where it is 0, a feasible candidate), the
// generation's best feasible f and the best feasible f so far, on the
// fitness panel's scale tf (whose floor is floor), the violation on log10.
// It is empty when no point of pts is of a constrained session.
func constraintsPanel(pts []Point, evals []float64, maxEval float64, cols int, tf func(float64) float64, floor float64,
	fLabel string, marks []marker, restartEntry func([]legendEntry) []legendEntry) template.HTML {
	constrained := false
	for i := range pts {
		if pts[i].Constraint != nil {
			constrained = true
			break
		}
	}
	if !constrained {
		return ""
	}
	series := func(get func(*ConstraintPoint) float64) []float64 {
		out := make([]float64, len(pts))
		for i := range pts {
			out[i] = math.NaN()
			if c := pts[i].Constraint; c != nil {
				out[i] = get(c)
			}
		}
		return out
	}
	c := chart{
		ID: "constraints", Title: "Constraints: least violation Σ max(0, g_i) and best feasible f", XLabel: "evaluations",
		YLabel: "Σ max(0, g_i) (log scale), feasible " + fLabel, XMax: maxEval, Columns: cols,
		Lines: []line{
			{Name: "violation", Label: "least violation of generation", Color: colorViolation, Width: 1.2, Xs: evals,
				Ys: series(func(c *ConstraintPoint) float64 { return c.Violation }), Log: math.Log10},
			{Name: "best-feasible", Label: "best feasible of generation", Color: colorFeasible, Width: 1.2, Xs: evals,
				Ys: series(func(c *ConstraintPoint) float64 { return c.BestFeasible }), Log: tf, Floor: floor},
			{Name: "best-feasible-so-far", Label: "best feasible so far", Color: colorFeasibleSoFar, Width: 2, Xs: evals,
				Ys: series(func(c *ConstraintPoint) float64 { return c.BestFeasibleSoFar }), Log: tf, Floor: floor},
		},
		Markers: marks,
	}
	c.Legend = restartEntry([]legendEntry{
		{Name: "best-feasible-so-far", Label: "best feasible so far", Color: colorFeasibleSoFar},
		{Name: "best-feasible", Label: "best feasible of generation", Color: colorFeasible},
		{Name: "violation", Label: "least Σ max(0, g_i)", Color: colorViolation},
	})
	return c.renderHTML()
}
