package session

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// checkInjection says, naming the field, why points cannot join the waiting
// ones of a session of population size lambda in dimension n with bounds b
// (nil: none): what cmaes.ES.Inject checks, in the words of the request.
func checkInjection(points [][]float64, waiting, lambda, n int, b *cmaes.Bounds) error {
	switch {
	case len(points) == 0:
		return errorf(CodeOutOfRange, "points is empty, want 1 to %d points (λ = %d, %d waiting)", lambda-waiting, lambda, waiting)
	case waiting+len(points) > lambda:
		return errorf(CodeOutOfRange, "points has %d points and %d wait already: at most λ = %d may wait for the next batch", len(points), waiting, lambda)
	}
	for k, x := range points {
		if err := checkPoint(fmt.Sprintf("points[%d]", k), x, n, b); err != nil {
			return err
		}
	}
	return nil
}

// checkPoint says why x, named field, is not a point of a session of
// dimension n with bounds b.
func checkPoint(field string, x []float64, n int, b *cmaes.Bounds) error {
	if len(x) != n {
		return errorf(CodeOutOfRange, "%s has %d values, want %d (the session's dimension)", field, len(x), n)
	}
	for i, v := range x {
		if !finite(v) {
			return errorf(CodeOutOfRange, "%s[%d] is not a finite number", field, i)
		}
		if b != nil && (v < b.Lower[i] || v > b.Upper[i]) {
			return errorf(CodeOutOfRange, "%s[%d] = %v is outside the bounds [%v, %v]", field, i, v, b.Lower[i], b.Upper[i])
		}
	}
	return nil
}
