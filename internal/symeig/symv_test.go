package symeig

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSymvRow checks the AVX row kernel against symvRowGo bit for bit, at
// lengths around the blocks of eight.
func TestSymvRow(t *testing.T) {
	if !haveSymvRow {
		t.Skip("no AVX: symvRow never runs")
	}
	r := rand.New(rand.NewPCG(29, 30))
	for n := range 40 {
		a, x, y := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], x[i], y[i] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		}
		xr := r.NormFloat64()
		y2 := append([]float64(nil), y...)
		got := symvRow(a, x, xr, y)
		want := symvRowGo(a, x, xr, y2)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("n=%d: dot %v, symvRowGo %v", n, got, want)
		}
		if i := sameBits(y, y2); i >= 0 {
			t.Fatalf("n=%d: y[%d] = %v, symvRowGo %v", n, i, y[i], y2[i])
		}
	}
}

// TestSymvFused checks symvFused against y = A x (to rounding), and the
// same bits with and without AVX and at GOMAXPROCS 1, 2 and 8, with
// strided x and y.
func TestSymvFused(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(31, 32))
	for _, m := range []int{1, 7, 100, minSymvParallel, 333} {
		lda := m + 2
		a := make([]float64, m*lda)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		x := make([]float64, 3*m)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		var want []float64
		for _, kernel := range []bool{true, false} {
			if kernel && !haveSymvRow {
				continue
			}
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				t.Run(fmt.Sprintf("m=%d/avx=%v/procs=%d", m, kernel, procs), func(t *testing.T) {
					ws := Workspace{plain: !kernel}
					ws.growBlocked(m, 1)
					y := make([]float64, 2*m)
					ws.symvFused(m, a, lda, x, 3, y, 2)
					got := make([]float64, m)
					for i := range m {
						got[i] = y[2*i]
						var s, sa float64
						for j := range m {
							aij := a[min(i, j)*lda+max(i, j)]
							s += aij * x[3*j]
							sa += math.Abs(aij * x[3*j])
						}
						if math.Abs(got[i]-s) > 4*float64(m)*0x1p-52*sa {
							t.Fatalf("y[%d] = %v, A x = %v", i, got[i], s)
						}
					}
					if want == nil {
						want = got
					} else if i := sameBits(got, want); i >= 0 {
						t.Fatalf("y[%d] differs from the first run", i)
					}
				})
			}
		}
	}
}
