package symeig

import (
	"math"
	"runtime"
	"sync"
)

// symvParts is the fixed number of row blocks of symvFused from order
// minSymvParallel: the partial products are summed in block order, so the
// result depends on the order alone, never on GOMAXPROCS.
const (
	symvParts       = 4
	minSymvParallel = 256
)

// symvRowGo is symvRow: y[j] += xr·a[j], and Σ a[j]·x[j] in eight lanes
// (j mod 8) over the blocks of eight, the lanes combined as
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), then the tail in order.
func symvRowGo(a, x []float64, xr float64, y []float64) float64 {
	var acc [8]float64
	n8 := len(a) &^ 7
	for j := 0; j < n8; j += 8 {
		for l := range 8 {
			acc[l] += float64(a[j+l] * x[j+l])
			y[j+l] += float64(xr * a[j+l])
		}
	}
	var s float64
	if n8 > 0 {
		s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
	}
	for j := n8; j < len(a); j++ {
		s += float64(a[j] * x[j])
		y[j] += float64(xr * a[j])
	}
	return s
}

// symvFused is symvUpper (y = A x, A symmetric m×m in the upper triangle
// of a) for version DivideConquer: one pass over each row of the triangle
// (symvRow: the row's dot product with x and its axpy into the entries of
// y to its right), the rows in symvParts fixed blocks of about equal work,
// each block into its own partial y, in parallel; y[r] is the sum of the
// partials in block order. Row r's own entry is a(r,r)·x(r) + the dot
// product of the rest of the row, added to its partial.
func (ws *Workspace) symvFused(m int, a []float64, lda int, x []float64, incx int, y []float64, incy int) {
	xc := ws.xbuf[:m]
	for r := range m {
		xc[r] = x[r*incx]
	}
	parts := 1
	if m >= minSymvParallel {
		parts = symvParts
	}
	if len(ws.symvY) < symvParts*m {
		ws.symvY = make([]float64, symvParts*len(ws.xbuf))
	}
	var bounds [symvParts + 1]int
	bounds[parts] = m
	for b := 1; b < parts; b++ {
		f := float64(b) / float64(parts)
		bounds[b] = int(float64(m) * (1 - math.Sqrt(1-f)))
	}
	rowFn := symvRowGo
	if haveSymvRow && !ws.plain {
		rowFn = symvRow
	}
	part := func(p int) {
		yp := ws.symvY[p*m : (p+1)*m]
		clear(yp)
		for r := bounds[p]; r < bounds[p+1]; r++ {
			row := a[r*lda+r : r*lda+m]
			d := rowFn(row[1:], xc[r+1:], xc[r], yp[r+1:])
			yp[r] += float64(row[0]*xc[r]) + d
		}
	}
	if parts == 1 {
		part(0)
		yp := ws.symvY[:m]
		for r := range m {
			y[r*incy] = yp[r]
		}
		return
	}
	// The parts on up to GOMAXPROCS goroutines (which one runs a part
	// does not matter).
	gs := min(parts, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for g := 1; g < gs; g++ {
		wg.Go(func() {
			for p := g; p < parts; p += gs {
				part(p)
			}
		})
	}
	for p := 0; p < parts; p += gs {
		part(p)
	}
	wg.Wait()
	for r := range m {
		s := ws.symvY[r]
		for p := 1; p < parts; p++ {
			s += ws.symvY[p*m+r]
		}
		y[r*incy] = s
	}
}
