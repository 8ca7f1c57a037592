package catcma_test

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/catcma"
)

// CatCMA with margin on x ∈ [−3, 3]², z from two lists, two categorical
// variables: f = Σx² + Σz² + (number of categories ≠ 0).
func Example() {
	o, err := catcma.New(catcma.Config{
		Space: catcma.Space{
			X: [][2]float64{{-3, 3}, {-3, 3}},
			Z: [][]float64{{-2, -1, 0, 1, 2}, {0.5, 1, 2}},
			C: []int{3, 4},
		},
		Seed: 1,
	})
	if err != nil {
		panic(err)
	}
	best := catcma.Candidate{}
	bestF := 1e300
	for range 200 {
		batch := o.Ask()
		f := make([]float64, len(batch))
		for k, c := range batch {
			f[k] = c.X[0]*c.X[0] + c.X[1]*c.X[1] + c.Z[0]*c.Z[0] + c.Z[1]*c.Z[1]
			for _, v := range c.C {
				if v != 0 {
					f[k]++
				}
			}
			if f[k] < bestF {
				bestF, best = f[k], c
			}
		}
		if err := o.Tell(f); err != nil {
			panic(err)
		}
	}
	fmt.Printf("z %v, c %v, f − 0.25 < 1e-6: %v\n", best.Z, best.C, bestF-0.25 < 1e-6)
	// Output: z [0 0.5], c [0 0], f − 0.25 < 1e-6: true
}
