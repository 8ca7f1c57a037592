// Package mixedfn holds the mixed-variable benchmark problems of the
// CatCMA-with-margin paper (Hamano et al., GECCO 2025, arXiv:2504.07884,
// §6) as the reference's examples define their functions
// (CyberAgentAILab/cmaes, examples/catcma_with_margin.py): a sphere or an
// ellipsoid over the continuous and integer coordinates plus the
// categorical one-max COM, N_ca minus the number of variables at category
// 0. scripts/catcma_bench.py defines the same problems for the Python peer.
package mixedfn

import (
	"fmt"
	"math"
)

// Problem is one benchmark problem and its search space.
type Problem struct {
	Name          string
	NCo, NIn, NCa int
	// XLower, XUpper bound every continuous coordinate; ZValues lists
	// every integer variable's values; K is every categorical variable's
	// number of categories.
	XLower, XUpper float64
	ZValues        []float64
	K              int
	// F is the function; its minimum is 0, at x = 0, z = 0, c = 0.
	F func(x, z []float64, c []int) float64
}

// Target is the value to reach: f ≤ 1e-10, all integers and categories
// right and the continuous part within 1e-10 of the optimum in f.
const Target = 1e-10

// Space returns the problem's search space as CatCMA takes it.
func (p Problem) Space() (x [][2]float64, z [][]float64, c []int) {
	for range p.NCo {
		x = append(x, [2]float64{p.XLower, p.XUpper})
	}
	for range p.NIn {
		z = append(z, append([]float64(nil), p.ZValues...))
	}
	for range p.NCa {
		c = append(c, p.K)
	}
	return x, z, c
}

// The space of the measurements (docs/mixed.md): x ∈ [−1, 5], z ∈ {−2, …,
// 8}, 5 categories; the optimum is away from the centre of the box, where
// the reference starts the mean.
var (
	xLower, xUpper = -1.0, 5.0
	zValues        = ints(-2, 8)
	categories     = 5
)

// Problems returns the measured problems at total dimension n ≥ 3
// (N_co + N_in + N_ca): SphereIntCOM and EllipsoidIntCOM with N_co = N_in = ⌊n/3⌋,
// SphereCOM with N_co = ⌊n/2⌋, the rest categorical; SphereInt (CMA-ES
// with margin: no categories) with N_co = ⌊n/2⌋, the rest integer.
func Problems(n int) []Problem {
	third, half := n/3, n/2
	mk := func(name string, nco, nin, nca int, f func(x, z []float64, c []int) float64) Problem {
		return Problem{Name: fmt.Sprintf("%s-%d", name, n), NCo: nco, NIn: nin, NCa: nca,
			XLower: xLower, XUpper: xUpper, ZValues: zValues, K: categories, F: f}
	}
	return []Problem{
		mk("SphereIntCOM", third, third, n-2*third, SphereIntCOM),
		mk("EllipsoidIntCOM", third, third, n-2*third, EllipsoidIntCOM),
		mk("SphereCOM", half, 0, n-half, SphereCOM),
		mk("SphereInt", half, n-half, 0, SphereIntCOM),
	}
}

// COM is the categorical one-max: the number of variables not at 0.
func COM(c []int) float64 {
	f := 0.0
	for _, v := range c {
		if v != 0 {
			f++
		}
	}
	return f
}

// SphereIntCOM is Σ x² + Σ z² + COM(c).
func SphereIntCOM(x, z []float64, c []int) float64 {
	f := 0.0
	for _, v := range x {
		f += v * v
	}
	for _, v := range z {
		f += v * v
	}
	return f + COM(c)
}

// EllipsoidIntCOM is Σ_i (1000^{(i−1)/(N_mi−1)} v_i)² over v = (x, z),
// plus COM(c).
func EllipsoidIntCOM(x, z []float64, c []int) float64 {
	v := append(append([]float64(nil), x...), z...)
	f := 0.0
	for i, vi := range v {
		w := vi
		if len(v) > 1 {
			w *= math.Pow(1000, float64(i)/float64(len(v)-1))
		}
		f += w * w
	}
	return f + COM(c)
}

// SphereCOM is Σ x² + COM(c).
func SphereCOM(x, _ []float64, c []int) float64 { return SphereIntCOM(x, nil, c) }

func ints(lo, hi int) []float64 {
	var v []float64
	for i := lo; i <= hi; i++ {
		v = append(v, float64(i))
	}
	return v
}
