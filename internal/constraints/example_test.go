package constraints_test

import (
	"fmt"
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/constraints"
)

// The AL around CMA-ES: minimise Σ x_i² subject to x_0 + 1 ≤ 0.
func Example() {
	n := 4
	es, _ := cmaes.New(cmaes.Config{X0: []float64{1, 1, 1, 1}, Sigma0: 1, Seed: 1, Active: true,
		Termination: cmaes.Termination{MaxEvaluations: 20000}})
	al, _ := constraints.New(n, 1)
	bestFeasible := math.Inf(1)
	for range 300 {
		X := es.Ask()
		f, g := make([]float64, len(X)), make([][]float64, len(X))
		for k, x := range X {
			for _, v := range x {
				f[k] += v * v
			}
			g[k] = []float64{x[0] + 1}
			if constraints.Feasible(g[k]) {
				bestFeasible = math.Min(bestFeasible, f[k])
			}
		}
		ranked, _ := al.Tell(f, g)
		if _, err := es.Tell(ranked); err != nil {
			break
		}
	}
	fmt.Printf("best feasible f %.6f\n", bestFeasible)
	// Output: best feasible f 1.000000
}
