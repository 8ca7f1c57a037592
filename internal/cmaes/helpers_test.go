package cmaes

import (
	"math"
	"testing"

	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/testfn"
	"gonum.org/v1/gonum/mat"
)

// The shared test functions, under the short names the tests use.
var (
	sphere     = testfn.Sphere
	ellipsoid  = testfn.Ellipsoid
	rosenbrock = testfn.Rosenbrock
	uniformX0  = testfn.UniformX0
)

func constVec(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

func mustNew(tb testing.TB, cfg Config) *ES {
	tb.Helper()
	e, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return e
}

// step asks, evaluates f on every point and tells.
func step(tb testing.TB, e *ES, f func([]float64) float64) Record {
	tb.Helper()
	X := e.Ask()
	v := make([]float64, len(X))
	for k, x := range X {
		v[k] = f(x)
	}
	rec, err := e.Tell(v)
	if err != nil {
		tb.Fatalf("Tell at generation %d: %v", e.Generation(), err)
	}
	return rec
}

// runToStop runs until a criterion fires or maxGen generations pass.
func runToStop(tb testing.TB, e *ES, f func([]float64) float64, maxGen int) {
	tb.Helper()
	for range maxGen {
		if e.Stopped() != nil {
			return
		}
		step(tb, e, f)
	}
}

func reasonNames(rs []StopReason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func hasReason(rs []StopReason, name string) (StopReason, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return StopReason{}, false
}

// checkInvariants fails unless C is symmetric positive definite, σ > 0 and
// every value of the state is finite.
func checkInvariants(tb testing.TB, e *ES) {
	tb.Helper()
	c := e.C()
	n := c.SymmetricDim()
	for i := range n {
		for j := range n {
			if c.At(i, j) != c.At(j, i) || math.IsNaN(c.At(i, j)) || math.IsInf(c.At(i, j), 0) {
				tb.Fatalf("generation %d: C[%d][%d] = %v, C[%d][%d] = %v", e.Generation(), i, j, c.At(i, j), j, i, c.At(j, i))
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		tb.Fatalf("generation %d: C is not positive definite", e.Generation())
	}
	if s := e.Sigma(); !(s > 0) || math.IsInf(s, 0) {
		tb.Fatalf("generation %d: σ = %v", e.Generation(), s)
	}
	for _, v := range append(append(e.Mean(), e.s.PSigma...), e.s.PC...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			tb.Fatalf("generation %d: non-finite value in m, p_σ or p_c", e.Generation())
		}
	}
}

// stateBits is e's State with every float64 as its bits (exactbits): equal
// for two ES exactly when they are the same state.
func stateBits(tb testing.TB, e *ES) []byte {
	tb.Helper()
	return exactbits.JSON(tb, exactbits.Of(e.State()))
}

// restoreCopy restores an ES from a copy of e's State with the derived
// parts left out where Restore recomputes them (as the stored form leaves
// them out): B and D when they are C's decomposition, the batch when it
// was drawn from the stream.
func restoreCopy(tb testing.TB, e *ES) (*ES, error) {
	tb.Helper()
	st := e.State().Clone()
	if st.DecomposedC {
		st.B, st.D = nil, nil
	}
	if st.BatchDrawn {
		st.Batch, st.Rand = nil, st.BatchRand
	}
	return Restore(st)
}

// samePoints reports whether two lists of points have the same bits.
func samePoints(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !exactbits.Same(a[k], b[k]) {
			return false
		}
	}
	return true
}

// sameSymBits reports whether a and b have the same upper triangle, bit for
// bit.
func sameSymBits(a, b *mat.SymDense) bool {
	if a == nil || b == nil || a.SymmetricDim() != b.SymmetricDim() {
		return false
	}
	ra, rb := a.RawSymmetric(), b.RawSymmetric()
	for i := range ra.N {
		for j := i; j < ra.N; j++ {
			if !sameBits(ra.Data[i*ra.Stride+j], rb.Data[i*rb.Stride+j]) {
				return false
			}
		}
	}
	return true
}
