package catcma

import (
	"fmt"
	"math"
	"slices"
)

// Space is the search space of a mixed problem.
type Space struct {
	// X holds the [lower, upper] bounds of each continuous coordinate;
	// ±Inf for an unbounded side. x_space of the reference.
	X [][2]float64
	// Z holds the possible values of each integer variable, at least two,
	// distinct; they are sorted by New. Discretised reals fit. z_space.
	Z [][]float64
	// C holds the number of categories (≥ 2) of each categorical variable.
	// c_space.
	C []int
}

// Dims returns N_co, N_in, N_ca.
func (s Space) Dims() (nco, nin, nca int) { return len(s.X), len(s.Z), len(s.C) }

func (s Space) validate() error {
	nco, nin, nca := s.Dims()
	if nco+nin+nca == 0 {
		return fmt.Errorf("catcma: space: no variables")
	}
	for i, b := range s.X {
		if math.IsNaN(b[0]) || math.IsNaN(b[1]) || !(b[0] < b[1]) {
			return fmt.Errorf("catcma: space.x[%d]: lower %v must be less than upper %v", i, b[0], b[1])
		}
	}
	for i, row := range s.Z {
		if len(row) < 2 {
			return fmt.Errorf("catcma: space.z[%d]: %d values, want at least 2", i, len(row))
		}
		sorted := slices.Clone(row)
		slices.Sort(sorted)
		for j, v := range sorted {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("catcma: space.z[%d]: value %v is not finite", i, v)
			}
			if j > 0 && v == sorted[j-1] {
				return fmt.Errorf("catcma: space.z[%d]: duplicate value %v", i, v)
			}
		}
	}
	for i, k := range s.C {
		if k < 2 {
			return fmt.Errorf("catcma: space.c[%d]: %d categories, want at least 2", i, k)
		}
	}
	return nil
}

func (s Space) clone() Space {
	c := Space{X: slices.Clone(s.X), C: slices.Clone(s.C)}
	for _, row := range s.Z {
		r := slices.Clone(row)
		slices.Sort(r)
		c.Z = append(c.Z, r)
	}
	return c
}

// grid is the integer variables' values padded with each row's largest
// value to the longest row's length, and the discretisation thresholds
// (midpoints) between them: _z_space and _z_lim of the reference. The
// margin correction reads the padded thresholds, so they are kept padded.
type grid struct {
	values [][]float64 // N_in × K_max
	lim    [][]float64 // N_in × (K_max − 1)
}

func newGrid(z [][]float64) grid {
	kmax := 0
	for _, row := range z {
		kmax = max(kmax, len(row))
	}
	g := grid{}
	for _, row := range z {
		v := make([]float64, kmax)
		copy(v, row)
		for j := len(row); j < kmax; j++ {
			v[j] = row[len(row)-1]
		}
		l := make([]float64, kmax-1)
		for j := range l {
			l[j] = (v[j+1] + v[j]) / 2
		}
		g.values, g.lim = append(g.values, v), append(g.lim, l)
	}
	return g
}

// searchsorted is numpy's searchsorted(a, v, side="left"): the number of
// elements of the sorted a that are less than v (NaN sorts last).
func searchsorted(a []float64, v float64) int {
	if math.IsNaN(v) {
		return len(a)
	}
	i, _ := slices.BinarySearch(a, v) // the first i with a[i] >= v
	return i
}

// discretize maps the i-th integer coordinate v to its value:
// _discretization of the reference.
func (g grid) discretize(i int, v float64) float64 {
	return g.values[i][searchsorted(g.lim[i], v)]
}
