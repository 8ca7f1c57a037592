//go:build !amd64 || noasm

package cmaes

// haveDot4 is false: gonum's Ddot sums in another order here.
var haveDot4 = false

func dot4(x, y []float64, ldy int, out *[4]float64) { panic("cmaes: no dot4") }
