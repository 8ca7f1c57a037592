package symeig

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// naiveGemm is the loop gemm's result is defined by.
func naiveGemm(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += float64(a[i*lda+l] * b[l*ldb+j])
			}
			c[i*ldc+j] = s
		}
	}
}

// TestGemmBits checks gemm against the defining loop bit for bit, with and
// without the AVX kernel and at GOMAXPROCS 1, 2 and 8, on shapes with
// partial tiles and several row blocks of B, and with strides.
func TestGemmBits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	avx := haveGemm4x8
	r := rand.New(rand.NewPCG(23, 24))
	shapes := [][3]int{{1, 1, 1}, {3, 7, 5}, {4, 8, 1}, {5, 9, 257}, {64, 64, 64}, {67, 130, 300}, {200, 200, 600}, {50, 300, 140}, {130, 9, 513}, {10, 0, 3}, {2, 3, 0}}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		lda, ldb, ldc := k+3, n+2, n+5
		a := make([]float64, m*lda)
		b := make([]float64, k*ldb)
		for i := range a {
			a[i] = r.NormFloat64() * float64(1+i%7)
		}
		for i := range b {
			b[i] = r.NormFloat64()
		}
		want := make([]float64, m*ldc)
		naiveGemm(m, n, k, a, lda, b, ldb, want, ldc)
		for _, kernel := range []bool{true, false} {
			if kernel && !avx {
				continue
			}
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				t.Run(fmt.Sprintf("%dx%dx%d/avx=%v/procs=%d", m, n, k, kernel, procs), func(t *testing.T) {
					g := gemmWork{plain: !kernel}
					got := make([]float64, m*ldc)
					for i := range got {
						got[i] = 7 // overwritten inside, kept in the padding
					}
					g.gemm(m, n, k, a, lda, b, ldb, got, ldc)
					for i := range m {
						for j := range ldc {
							if j < n {
								if got[i*ldc+j] != want[i*ldc+j] || sameBits(got[i*ldc+j:i*ldc+j+1], want[i*ldc+j:i*ldc+j+1]) >= 0 {
									t.Fatalf("c[%d,%d] = %v, want %v", i, j, got[i*ldc+j], want[i*ldc+j])
								}
							} else if got[i*ldc+j] != 7 {
								t.Fatalf("padding c[%d,%d] written", i, j)
							}
						}
					}
				})
			}
		}
	}
}

func BenchmarkGemm(b *testing.B) {
	for _, n := range []int{200, 1000} {
		r := rand.New(rand.NewPCG(1, 2))
		x := make([]float64, n*n)
		y := make([]float64, n*n)
		for i := range x {
			x[i], y[i] = r.NormFloat64(), r.NormFloat64()
		}
		c := make([]float64, n*n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var g gemmWork
			for b.Loop() {
				g.gemm(n, n, n, x, n, y, n, c, n)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
		})
	}
}

// TestProductMulTransB checks MulTransB and Mul against the defining loop
// bit for bit, at GOMAXPROCS 1, 2 and 8, on a small shape and one where
// the goroutines share B's column panels (few rows).
func TestProductMulTransB(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(33, 34))
	for _, sh := range [][3]int{{37, 21, 300}, {37, 210, 300}} {
		m, n, k := sh[0], sh[1], sh[2]
		a := make([]float64, m*(k+1))
		b := make([]float64, max(n*(k+2), k*(n+3))) // bᵀ for MulTransB, b (k×n, stride n+3) for Mul
		for i := range a {
			a[i] = r.NormFloat64()
		}
		for i := range b {
			b[i] = r.NormFloat64()
		}
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			ct, c := make([]float64, m*n), make([]float64, m*n)
			var p Product
			p.MulTransB(m, n, k, a, k+1, b, k+2, ct, n)
			p.Mul(m, n, k, a, k+1, b, n+3, c, n)
			for i := range m {
				for j := range n {
					st, s := 0.0, 0.0
					for l := range k {
						st += float64(a[i*(k+1)+l] * b[j*(k+2)+l])
						s += float64(a[i*(k+1)+l] * b[l*(n+3)+j])
					}
					if sameBits([]float64{st}, ct[i*n+j:i*n+j+1]) >= 0 {
						t.Fatalf("%v procs %d: MulTransB c[%d,%d] = %v, want %v", sh, procs, i, j, ct[i*n+j], st)
					}
					if sameBits([]float64{s}, c[i*n+j:i*n+j+1]) >= 0 {
						t.Fatalf("%v procs %d: Mul c[%d,%d] = %v, want %v", sh, procs, i, j, c[i*n+j], s)
					}
				}
			}
		}
	}
}
