package cmaes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// todaysRuns are runs of active CMA-ES (continueHash, 6 generations) at
// orders where the update's products and the eigendecomposition run on
// several goroutines, with the hashes the serial update gave before the
// products of parallel.go: they must not change a bit.
var todaysRuns = []struct {
	numerics, n, lambda int
	hash                string
}{
	{NumericsDsyev, 150, 100, "cf0a852a0203e0f2a47af52b2f4951ecc25a647fd957242ecae8fdda3c32617e"},
	{NumericsDC, 150, 100, "6b08d215c291b73a01cff09a8465d4bb44e3a393a307f0a38f84afedcd14b402"},
	{NumericsLazy, 200, 40, "ce968d950206eb2da27c245353665c2f7e816f56aa1158bae2531a2bbea8b216"}, // decomposes every second update
	{NumericsDC, 520, 20, "d78a42b804153192dcaee782e613389b19dec9b7c65da5251a82014767bfcbce"},   // p_σ split too
}

// TestParallelUpdateUnchanged checks todaysRuns at GOMAXPROCS 1, 2 and 8.
func TestParallelUpdateUnchanged(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range todaysRuns {
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			e := mustNew(t, Config{X0: uniformX0(5, c.n), Sigma0: 0.5, Lambda: c.lambda, Seed: 7, Active: true, Termination: never, Numerics: c.numerics})
			if got := continueHash(t, e, 6); got != c.hash {
				t.Errorf("numerics %d, n = %d, λ = %d, GOMAXPROCS %d: hash %s, want %s", c.numerics, c.n, c.lambda, procs, got, c.hash)
			}
		}
	}
}

// TestSymOuterK checks symOuterK against gonum's SymDense.SymOuterK bit
// for bit (a zero row included: the sign of a zero product), at
// GOMAXPROCS 1, 2 and 8, at orders below and above the parallel one.
func TestSymOuterK(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(41, 42))
	for _, sh := range [][2]int{{1, 1}, {7, 3}, {120, 50}, {301, 13}} {
		n, k := sh[0], sh[1]
		y := mat.NewDense(n, k, nil)
		for i := range n {
			for j := range k {
				if i != n/2 {
					y.Set(i, j, r.NormFloat64())
				}
			}
		}
		for _, alpha := range []float64{1, -1, 0.3} {
			want := mat.NewSymDense(n, nil)
			want.SymOuterK(alpha, y)
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				t.Run(fmt.Sprintf("n=%d/k=%d/alpha=%v/procs=%d", n, k, alpha, procs), func(t *testing.T) {
					got := mat.NewSymDense(n, nil)
					for i := range n {
						for j := i; j < n; j++ {
							got.SetSym(i, j, 5) // overwritten
						}
					}
					symOuterK(got, alpha, y)
					for i := range n {
						for j := i; j < n; j++ {
							if a, b := got.At(i, j), want.At(i, j); math.Float64bits(a) != math.Float64bits(b) {
								t.Fatalf("(%d, %d): %v, gonum %v", i, j, a, b)
							}
						}
					}
				})
			}
		}
	}
}

// TestDot4 checks dot4 against gonum's Ddot bit for bit at lengths around
// the blocks of four, with a stride.
func TestDot4(t *testing.T) {
	if !haveDot4 {
		t.Skip("no AVX (or noasm): dot4 never runs")
	}
	r := rand.New(rand.NewPCG(43, 44))
	bi := blas64.Implementation()
	for k := range 23 {
		ld := k + 3
		x, y := make([]float64, k), make([]float64, 3*ld+k)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		for i := range y {
			y[i] = r.NormFloat64()
		}
		var d [4]float64
		dot4(x, y, ld, &d)
		for row := range 4 {
			if want := bi.Ddot(k, x, 1, y[row*ld:], 1); math.Float64bits(d[row]) != math.Float64bits(want) {
				t.Fatalf("k=%d row %d: %v, Ddot %v", k, row, d[row], want)
			}
		}
	}
}
