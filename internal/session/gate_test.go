package session_test

import (
	"context"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// TestSelfCMAESAtTenN: a self-CMA-ES created at λ = 10n adapts its first
// run by the signal-to-noise rule, which moves c_μ alone, so c_1 stays
// CMA-ES's at that λ (docs/algorithm.md §2, table 16); with snr false it
// is the paper's, whose auxiliary CMA-ES moves c_1 by h_t.
func TestSelfCMAESAtTenN(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	c1s := func(alg string, snr *bool) []float64 {
		s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Algorithm: alg, Seed: seed(5),
			PopulationSize: 30, SNR: snr})
		if err != nil {
			t.Fatal(err)
		}
		var c1 []float64
		for range 6 {
			c1 = append(c1, runGenerations(t, m, s.ID, 1).Hyper.C1)
		}
		return c1
	}
	cma, rule, paper := c1s(session.AlgorithmCMAES, nil), c1s(session.AlgorithmSelfCMAES, nil), c1s(session.AlgorithmSelfCMAES, new(false))
	moved := false
	for g := range cma {
		if rule[g] != cma[g] {
			t.Errorf("generation %d: default self-CMA-ES c_1 %v, CMA-ES's %v: not the signal-to-noise rule", g+1, rule[g], cma[g])
		}
		moved = moved || paper[g] != cma[g]
	}
	if !moved {
		t.Errorf("snr false: c_1 %v stayed CMA-ES's %v: h_t did not run at λ = 10n", paper, cma)
	}
}
