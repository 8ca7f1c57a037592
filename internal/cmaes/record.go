package cmaes

import (
	"math"
	"slices"
)

// recordDistribution sets the fields of rec that describe the distribution
// after the update, the quantities of pycma's standard plots: the overall
// step σ·√λ_max(C), the principal axis lengths √λ_i(C) = D (ascending),
// the standard deviation σ·√C_ii of each coordinate and the mean m. They
// are read from the state the update left (D from its eigendecomposition,
// after the safeguards), before a restart resets it.
func (e *ES) recordDistribution(rec *Record) {
	n := e.p.N
	buf := make([]float64, 3*n) // one allocation for the three vectors
	rec.D, rec.Stds, rec.Mean = buf[:n:n], buf[n:2*n:2*n], buf[2*n:]
	copy(rec.D, e.s.D)
	slices.Sort(rec.D) // already ascending; sorted so the record never depends on it
	cm := e.s.C.RawSymmetric()
	for i := range n {
		rec.Stds[i] = e.s.Sigma * math.Sqrt(cm.Data[i*cm.Stride+i])
	}
	copy(rec.Mean, e.s.Mean)
	rec.OverallStep = e.s.Sigma * rec.D[n-1]
}
