package mixedfn

import "math"

// Constrained is a constrained benchmark problem: minimise F subject to
// every G_i ≤ 0, with its optimum value FOpt; the measurements start at X0
// with σ0 = 1 (docs/mixed.md). The problems follow pycma's
// constraints_handler doctests (a sphere with x_0 + 1 ≤ 0) and the linear
// and nonlinear cases of the AL papers (Atamna et al., PPSN 2016, FOGA 2017).
type Constrained struct {
	Name string
	N, M int
	X0   []float64
	F    func(x []float64) float64
	G    func(x []float64) []float64
	FOpt float64
}

// ConstrainedTarget is the distance to FOpt in f within which a feasible
// point counts as the constrained optimum.
const ConstrainedTarget = 1e-8

// ConstrainedProblems returns the measured problems at dimension n ≥ 2:
// the sphere and the ellipsoid (condition 1e6) with x_i + 1 ≤ 0 for the
// first 1 and the first n/2 coordinates (active at the optimum, x_i = −1),
// and the shifted sphere Σ(x_i − 1)² in the unit ball (nonlinear, active at
// x_i = 1/√n).
func ConstrainedProblems(n int) []Constrained {
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	sphere := func(x []float64) float64 {
		f := 0.0
		for _, v := range x {
			f += v * v
		}
		return f
	}
	coef := make([]float64, n)
	for i := range coef {
		coef[i] = math.Pow(10, 6*float64(i)/float64(n-1))
	}
	ellipsoid := func(x []float64) float64 {
		f := 0.0
		for i, v := range x {
			f += coef[i] * v * v
		}
		return f
	}
	linear := func(k int) func(x []float64) []float64 {
		return func(x []float64) []float64 {
			g := make([]float64, k)
			for i := range g {
				g[i] = x[i] + 1
			}
			return g
		}
	}
	sumCoef := func(k int) float64 {
		s := 0.0
		for i := range k {
			s += coef[i]
		}
		return s
	}
	h := n / 2
	ball := func(x []float64) []float64 { return []float64{sphere(x) - 1} }
	shifted := func(x []float64) float64 {
		f := 0.0
		for _, v := range x {
			f += (v - 1) * (v - 1)
		}
		return f
	}
	r := math.Sqrt(float64(n)) - 1
	return []Constrained{
		{Name: "sphere-1lin", N: n, M: 1, X0: ones, F: sphere, G: linear(1), FOpt: 1},
		{Name: "sphere-halflin", N: n, M: h, X0: ones, F: sphere, G: linear(h), FOpt: float64(h)},
		{Name: "ellipsoid-1lin", N: n, M: 1, X0: ones, F: ellipsoid, G: linear(1), FOpt: 1},
		{Name: "ellipsoid-halflin", N: n, M: h, X0: ones, F: ellipsoid, G: linear(h), FOpt: sumCoef(h)},
		{Name: "sphere-in-ball", N: n, M: 1, X0: make([]float64, n), F: shifted, G: ball, FOpt: r * r},
	}
}
