package session_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	"gonum.org/v1/gonum/mat"
)

// The covariance of a session is the distribution its stds come from,
// symmetric and positive definite, the same after a restart of the
// server; a session of more than MaxCovarianceDimension coordinates gets
// out_of_range.
func TestCovariance(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES} {
		t.Run(alg, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			st := openStore(t, path)
			m := session.NewManager(st, session.Options{})
			s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3, 4}, Sigma0: 0.5, Algorithm: alg, Seed: seed(3)})
			if err != nil {
				t.Fatal(err)
			}
			for range 15 {
				b, err := m.Ask(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: fitness(b)}); err != nil {
					t.Fatal(err)
				}
			}
			c, err := m.Covariance(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c.Generation != s.Generation || c.Sigma != s.Sigma || len(c.C) != 4 {
				t.Fatalf("generation %d, σ %g, %d rows; the session: %d, %g, 4", c.Generation, c.Sigma, len(c.C), s.Generation, s.Sigma)
			}
			sym := mat.NewSymDense(4, nil)
			for i := range 4 {
				if got := c.Sigma * math.Sqrt(c.C[i][i]); math.Abs(got-s.Stds[i]) > 1e-14*s.Stds[i] {
					t.Errorf("σ·√C_%d%d = %g, stds %g", i, i, got, s.Stds[i])
				}
				for j := range 4 {
					if c.C[i][j] != c.C[j][i] {
						t.Errorf("C[%d][%d] = %g, C[%d][%d] = %g", i, j, c.C[i][j], j, i, c.C[j][i])
					}
					sym.SetSym(i, j, c.C[i][j])
				}
			}
			if sym.At(0, 1) == 0 {
				t.Error("C is diagonal after 15 generations")
			}
			var ch mat.Cholesky
			if !ch.Factorize(sym) {
				t.Error("C is not positive definite")
			}
			// Another server on the same file: the same bits.
			st.Close()
			st = openStore(t, path)
			t.Cleanup(func() { st.Close() })
			again, err := session.NewManager(st, session.Options{}).Covariance(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.C {
				for j := range c.C[i] {
					if again.C[i][j] != c.C[i][j] {
						t.Fatalf("after a restart C[%d][%d] = %v, was %v", i, j, again.C[i][j], c.C[i][j])
					}
				}
			}
		})
	}
	m, _ := newManager(t)
	big, err := m.Create(ctx, session.CreateParams{X0: make([]float64, session.MaxCovarianceDimension+1), Sigma0: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Covariance(ctx, big.ID)
	wantCode(t, err, session.CodeOutOfRange)
	_, err = m.Covariance(ctx, "01890000-0000-7000-8000-000000000000")
	wantCode(t, err, session.CodeNotFound)
}
