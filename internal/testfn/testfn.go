// Package testfn holds the plain test functions and starting points that
// the algorithm packages' tests share (the BBOB suite is internal/bbob).
package testfn

import (
	"math"
	"math/rand/v2"
)

// Sphere is Σ x_i².
func Sphere(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

// Ellipsoid is Σ 10^{6 i/(n−1)} x_i², condition number 1e6.
func Ellipsoid(x []float64) float64 {
	var s float64
	n := len(x)
	for i, v := range x {
		s += math.Pow(10, 6*float64(i)/float64(n-1)) * v * v
	}
	return s
}

// Rosenbrock is Σ 100(x_i² − x_{i+1})² + (x_i − 1)², minimum 0 at (1, …, 1).
func Rosenbrock(x []float64) float64 {
	var s float64
	for i := 0; i+1 < len(x); i++ {
		a, b := x[i]*x[i]-x[i+1], x[i]-1
		s += 100*a*a + b*b
	}
	return s
}

// Rastrigin is 10n + Σ x_i² − 10 cos(2π x_i), minimum 0 at the origin.
func Rastrigin(x []float64) float64 {
	s := 10 * float64(len(x))
	for _, v := range x {
		s += v*v - 10*math.Cos(2*math.Pi*v)
	}
	return s
}

// UniformX0 is a point uniform in [−4, 4]^n (docs/algorithm.md §4's
// x0), from a stream seeded by seed.
func UniformX0(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = -4 + 8*r.Float64()
	}
	return x
}

// MirroredPairs reports whether the last ⌊λ/2⌋ of the λ points X mirror
// the first ⌈λ/2⌉ about m: x_j + x_{h+j} = 2m to rounding, h = ⌈λ/2⌉
// (cmaes.Config.MirroredFirstRun's batches).
func MirroredPairs(X [][]float64, m []float64) bool {
	l := len(X)
	h := l - l/2
	for j := range l / 2 {
		for i := range m {
			if math.Abs(X[j][i]+X[h+j][i]-2*m[i]) > 1e-12*(1+math.Abs(m[i])) {
				return false
			}
		}
	}
	return true
}
