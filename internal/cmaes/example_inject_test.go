package cmaes_test

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Injecting a point known to be good: the batch after the pending one hands
// it out as its first candidate.
func ExampleES_Inject() {
	es, err := cmaes.New(cmaes.Config{X0: []float64{1, 2, 3}, Sigma0: 0.5, Seed: 1})
	if err != nil {
		panic(err)
	}
	if err := es.Inject([][]float64{{0, 0, 0}}, true); err != nil {
		panic(err)
	}
	sphere := func(X [][]float64) []float64 {
		f := make([]float64, len(X))
		for k, x := range X {
			for _, v := range x {
				f[k] += v * v
			}
		}
		return f
	}
	fmt.Println("waiting:", es.Injected())
	if _, err := es.Tell(sphere(es.Ask())); err != nil {
		panic(err)
	}
	fmt.Println("first candidate:", es.Ask()[0], "waiting:", es.Injected())
	rec, err := es.Tell(sphere(es.Ask()))
	if err != nil {
		panic(err)
	}
	fmt.Println("injected in that generation:", rec.Injected, "best:", rec.Best)
	// Output:
	// waiting: 1
	// first candidate: [0 0 0] waiting: 0
	// injected in that generation: 1 best: 0
}
