package sessionsource

import (
	"context"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// TestMixedDetail: a mixed session's detail has its best z and c beside
// its best x.
func TestMixedDetail(t *testing.T) {
	m := newManager(t)
	ctx := context.Background()
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1}, Integers: [][]float64{{0, 1, 2}}, Categories: []int{3, 2}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Ask(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, len(b.Candidates))
	for k := range f {
		f[k] = sphere(b.Candidates[k]) + sphere(b.Z[k]) + float64(b.C[k][0])
	}
	if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: f}); err != nil {
		t.Fatal(err)
	}
	d, err := New(m).Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.BestX) != 1 || len(d.BestZ) != 1 || len(d.BestC) != 2 || d.BestZ[0] != s.Best.Z[0] || d.BestC[1] != float64(s.Best.C[1]) {
		t.Fatalf("detail best x %v z %v c %v, session best %+v", d.BestX, d.BestZ, d.BestC, s.Best)
	}
}
