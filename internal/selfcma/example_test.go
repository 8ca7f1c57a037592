package selfcma_test

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// self-CMA-ES on the 10-D Rosenbrock function with λ = 100, the paper's
// setting; the record of each generation says which learning rates it used.
// In Rosenbrock's valley c_μ rises far above its default (about 0.29).
func Example() {
	es, err := selfcma.New(selfcma.Config{CMA: cmaes.Config{
		X0: make([]float64, 10), Sigma0: 2, Lambda: 100, Seed: 1,
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-8},
	}})
	if err != nil {
		panic(err)
	}
	rosenbrock := func(x []float64) (s float64) {
		for i := 0; i+1 < len(x); i++ {
			a, b := x[i]*x[i]-x[i+1], x[i]-1
			s += 100*a*a + b*b
		}
		return s
	}
	var maxCMu float64
	for es.Status().Stop == nil {
		X := es.Ask()
		f := make([]float64, len(X))
		for k, x := range X {
			f[k] = rosenbrock(x)
		}
		rec, err := es.Tell(f)
		if err != nil {
			panic(err)
		}
		maxCMu = max(maxCMu, rec.Hyper.CMu)
	}
	def := es.Status().Params.Hyper()
	fmt.Println(es.Status().Stop[0].Name)
	fmt.Println("c_mu above twice its default:", maxCMu > 2*def.CMu)
	// Output:
	// target_fitness
	// c_mu above twice its default: true
}
