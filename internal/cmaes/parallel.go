package cmaes

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The O(n²λ) products of the update on several goroutines. Each entry of
// a result is computed by the same operations in the same order whatever
// goroutine computes it, so the bits depend on neither GOMAXPROCS nor the
// partition (tested against the serial code they replace).

// minParallelFlops is the fewest multiply-adds of a product split between
// goroutines: below it, starting them costs more than it saves.
const minParallelFlops = 1 << 18

// triangleRows runs fn on the rows [lo, hi) of an n×n upper triangle in
// contiguous blocks of about equal work (the entries right of the
// diagonal), one block per goroutine, on up to GOMAXPROCS goroutines when
// the triangle times perEntry is at least minParallelFlops.
func triangleRows(n, perEntry int, fn func(lo, hi int)) {
	workers := 1
	if n*(n+1)/2*perEntry >= minParallelFlops {
		workers = min(runtime.GOMAXPROCS(0), n)
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	// Block b starts where the rows above it hold b/workers of the
	// triangle's entries.
	start := func(b int) int {
		if b == workers {
			return n
		}
		return int(float64(n) * (1 - math.Sqrt(1-float64(b)/float64(workers))))
	}
	var wg sync.WaitGroup
	for b := 1; b < workers; b++ {
		wg.Go(func() { fn(start(b), start(b+1)) })
	}
	fn(0, start(1))
	wg.Wait()
}

// ranges runs fn on [0, n) in contiguous ranges of equal length, one per
// goroutine, on up to GOMAXPROCS goroutines when n times perItem is at
// least minParallelFlops.
func ranges(n, perItem int, fn func(lo, hi int)) {
	workers := 1
	if n*perItem >= minParallelFlops {
		workers = min(runtime.GOMAXPROCS(0), n)
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { fn(w*n/workers, (w+1)*n/workers) })
	}
	fn(0, n/workers)
	wg.Wait()
}

// symOuterK sets the upper triangle of c to alpha·Y Yᵀ, Y = ym (n×k), as
// gonum's SymDense.SymOuterK computes it (a zeroed triangle, then Dsyrk
// with β = 1): entry (i, j), j ≥ i, is 0 + alpha·Ddot(Y_i, Y_j) by
// gonum's Ddot, bit for bit (with AVX four entries at a time by dot4, in
// Ddot's order); the rows on several goroutines (triangleRows).
func symOuterK(c *mat.SymDense, alpha float64, ym *mat.Dense) {
	cs, y := c.RawSymmetric(), ym.RawMatrix()
	n, k := cs.N, y.Cols
	triangleRows(n, k, func(lo, hi int) {
		bi := blas64.Implementation()
		var d [4]float64
		for i := lo; i < hi; i++ {
			yi := y.Data[i*y.Stride : i*y.Stride+k]
			ci := cs.Data[i*cs.Stride : i*cs.Stride+n]
			j := i
			if haveDot4 {
				for ; j+4 <= n; j += 4 {
					dot4(yi, y.Data[j*y.Stride:(j+3)*y.Stride+k], y.Stride, &d)
					ci[j], ci[j+1], ci[j+2], ci[j+3] = 0+alpha*d[0], 0+alpha*d[1], 0+alpha*d[2], 0+alpha*d[3]
				}
			}
			for ; j < n; j++ {
				ci[j] = 0 + alpha*bi.Ddot(k, yi, 1, y.Data[j*y.Stride:j*y.Stride+k], 1)
			}
		}
	})
}
