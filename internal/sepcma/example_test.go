package sepcma_test

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/enginecodec"
	"github.com/selfcma/selfcma/internal/sepcma"
)

// An ask/tell loop on a separable ellipsoid in 200 dimensions, with the
// state encoded and restored halfway, as a service would between two
// requests.
func Example() {
	n := 200
	f := func(x []float64) float64 {
		var s float64
		for i, v := range x {
			s += float64(1+i%10) * v * v
		}
		return s
	}
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = 1
	}
	es, err := sepcma.New(sepcma.Config{X0: x0, Sigma0: 0.5, Seed: 1,
		Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-6}})
	if err != nil {
		panic(err)
	}
	for len(es.Stopped()) == 0 {
		points := es.Ask()
		values := make([]float64, len(points))
		for k, x := range points {
			values[k] = f(x)
		}
		if _, err := es.Tell(values); err != nil {
			panic(err)
		}
		if es.Generation() == 100 {
			st := es.State()
			blob, err := enginecodec.AppendSepCMA(nil, &st)
			if err != nil {
				panic(err)
			}
			if es, err = enginecodec.DecodeSepCMA(blob); err != nil {
				panic(err)
			}
		}
	}
	best, _ := es.Best()
	fmt.Println(es.Stopped()[0].Name, best.F < 1e-6, es.MemoryBytes() < 1<<20)
	// Output: target_fitness true true
}
