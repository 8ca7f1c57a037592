package cmaes_test

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// An ask/tell loop on the 5-D sphere.
func Example() {
	es, err := cmaes.New(cmaes.Config{
		X0:          []float64{1, 2, 3, 4, 5},
		Sigma0:      1,
		Seed:        42,
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-10},
	})
	if err != nil {
		panic(err)
	}
	for es.Stopped() == nil {
		X := es.Ask()
		f := make([]float64, len(X))
		for k, x := range X {
			for _, v := range x {
				f[k] += v * v
			}
		}
		if _, err := es.Tell(f); err != nil {
			panic(err)
		}
	}
	best, _ := es.Best()
	fmt.Println(es.Stopped()[0].Name, best.F <= 1e-10)
	// Output: target_fitness true
}
