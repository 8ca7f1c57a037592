package symeig

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSyr2kTiled checks syr2kTiled against syr2k bit for bit on the upper
// triangle (the two sum the same products in the same order; with no zero
// multiplier, which syr2k's Daxpy skips), that it leaves the strict lower
// triangle alone, with and without AVX, at GOMAXPROCS 1, 2 and 8.
func TestSyr2kTiled(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	avx := haveGemm4x8
	r := rand.New(rand.NewPCG(27, 28))
	for _, sh := range [][2]int{{1, 1}, {5, 3}, {33, 32}, {97, 32}, {250, 32}, {131, 7}} {
		m, k := sh[0], sh[1]
		ld := m + 3
		v := make([]float64, m*(k+2))
		w := make([]float64, m*(k+1))
		c0 := make([]float64, m*ld)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		for i := range w {
			w[i] = r.NormFloat64()
		}
		for i := range c0 {
			c0[i] = r.NormFloat64()
		}
		var ref Workspace
		ref.growBlocked(m, k)
		want := append([]float64(nil), c0...)
		ref.syr2k(m, k, v, k+2, w, k+1, want, ld)
		for _, kernel := range []bool{true, false} {
			if kernel && !avx {
				continue
			}
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				t.Run(fmt.Sprintf("m=%d/k=%d/avx=%v/procs=%d", m, k, kernel, procs), func(t *testing.T) {
					ws := Workspace{plain: !kernel}
					got := append([]float64(nil), c0...)
					ws.syr2kTiled(m, k, v, k+2, w, k+1, got, ld)
					for i := range m {
						for j := range ld {
							if j >= i && j < m {
								if sameBits(got[i*ld+j:i*ld+j+1], want[i*ld+j:i*ld+j+1]) >= 0 {
									t.Fatalf("c[%d,%d] = %v, syr2k %v", i, j, got[i*ld+j], want[i*ld+j])
								}
							} else if sameBits(got[i*ld+j:i*ld+j+1], c0[i*ld+j:i*ld+j+1]) >= 0 {
								t.Fatalf("c[%d,%d] outside the upper triangle written", i, j)
							}
						}
					}
				})
			}
		}
	}
}
