package session_test

import (
	"context"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/session"
)

// TestMeanInBounds: with bounds, the view carries the mean's image in the
// box, as the candidates are mapped (what a client shows as pycma's
// xfavorite, without a copy of the transformation); without bounds none.
func TestMeanInBounds(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	lo, up := []float64{0, -5}, []float64{1, 1}
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{0.5, 0.5}, Sigma0: 0.5, Seed: seed(3),
		Bounds: &session.Bounds{Lower: lo, Upper: up}})
	if err != nil {
		t.Fatal(err)
	}
	outside := false
	for range 30 {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		f := make([]float64, len(b.Candidates))
		for k, x := range b.Candidates {
			f[k] = (x[0]+3)*(x[0]+3) + (x[1]-5)*(x[1]-5) // the optimum lies outside the box
		}
		if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			t.Fatal(err)
		}
		want := (&cmaes.Bounds{Lower: lo, Upper: up}).Image(s.Mean)
		if !slices.Equal(s.MeanInBounds, want) {
			t.Fatalf("generation %d: mean_in_bounds %v, want %v (mean %v)", s.Generation, s.MeanInBounds, want, s.Mean)
		}
		outside = outside || s.Mean[0] < lo[0] || s.Mean[1] > up[1]
	}
	if !outside {
		t.Error("the mean never left the box: the test checked nothing but the identity")
	}
	u, err := m.Create(ctx, session.CreateParams{X0: []float64{0.5, 0.5}, Sigma0: 0.5, Seed: seed(3)})
	if err != nil {
		t.Fatal(err)
	}
	if u.MeanInBounds != nil {
		t.Errorf("without bounds: mean_in_bounds %v, want none", u.MeanInBounds)
	}
}
