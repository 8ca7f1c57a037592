package bbob_test

import (
	"fmt"
	"log"

	"github.com/selfcma/selfcma/internal/bbob"
)

func Example() {
	// Instance 1 of the Rosenbrock function f8 in 10 dimensions.
	p, err := bbob.New(8, 10, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p)
	fmt.Printf("f_opt = %.2f\n", p.FOpt())

	x := make([]float64, p.Dimension())
	fmt.Printf("f(0) = %.6f\n", p.Eval(x))
	fmt.Printf("f(x_opt) - f_opt = %g\n", p.Eval(p.XOpt())-p.FOpt())

	for f := 1; f <= bbob.NumFunctions; f += 7 {
		fmt.Println(bbob.Name(f))
	}
	// Output:
	// f8 rosenbrock i1 d10
	// f_opt = 149.15
	// f(0) = 17525.448706
	// f(x_opt) - f_opt = 0
	// f1 sphere
	// f8 rosenbrock
	// f15 rastrigin rotated
	// f22 gallagher 21 peaks
}
