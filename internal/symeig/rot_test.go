package symeig

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRotKernelsMatchRows checks the eight- and sixteen-row kernels
// against the one-row loop of rotateRows bit for bit, with rotations that are the identity
// (c = 1 and s = ±0: taken as a swap of the carried entry, as Dlasr skips
// them) and non-finite ones among ordinary ones.
func TestRotKernelsMatchRows(t *testing.T) {
	for _, w := range []int{8, 16} {
		if w == 8 && !haveRot8 || w == 16 && !haveRot16 {
			t.Logf("no %d-row kernels on this machine", w)
			continue
		}
		testRotKernel(t, w)
	}
}

func testRotKernel(t *testing.T, w int) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 37
	for _, forward := range []bool{true, false} {
		for trial := range 50 {
			k := 1 + r.IntN(n-1)
			col := r.IntN(n - k)
			c, s := make([]float64, k), make([]float64, k)
			for j := range c {
				th := r.Float64() * 2 * math.Pi
				c[j], s[j] = math.Cos(th), math.Sin(th)
				switch r.IntN(6) {
				case 0:
					c[j], s[j] = 1, 0
				case 1:
					c[j], s[j] = 1, math.Copysign(0, -1)
				case 2:
					if trial%10 == 0 {
						c[j] = math.NaN()
					}
				}
			}
			rows := make([][]float64, w)
			p := make([]float64, w*n)
			for q := range rows {
				rows[q] = make([]float64, n)
				for j := range rows[q] {
					rows[q][j] = r.NormFloat64()
					if r.IntN(20) == 0 {
						rows[q][j] = math.Copysign(0, -1)
					}
					p[w*j+q] = rows[q][j]
				}
			}
			ws := &Workspace{sweeps: []sweep{{col: col, count: k, forward: forward}}, logC: c, logS: s}
			for q := range rows {
				ws.rotateRows(0, 1, n, rows[q], n, 0)
			}
			a := p[w*col : w*(col+k+1)]
			switch {
			case w == 16 && forward:
				rotForward16(c, s, a)
			case w == 16:
				rotBackward16(c, s, a)
			case forward:
				rotForward8(c, s, a)
			default:
				rotBackward8(c, s, a)
			}
			for q := range rows {
				for j := range n {
					if math.Float64bits(p[w*j+q]) != math.Float64bits(rows[q][j]) {
						t.Fatalf("%d rows, forward %v, trial %d: row %d entry %d: %v, one-row loop %v", w, forward, trial, q, j, p[w*j+q], rows[q][j])
					}
				}
			}
		}
	}
}

// TestFactorizeWithoutAVX checks that the SSE2 and scalar paths alone (a
// processor without AVX) give dsyev's bits too, for both versions' shared
// rotations.
func TestFactorizeWithoutAVX(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{45, 100} {
		a := matrices(n, r)["wide"]
		wantVecs, wantVals, _ := syev(t, n, a)
		for _, par := range []int{1, 2} {
			ws := Workspace{parallel: par, plain: true}
			v := append([]float64(nil), a...)
			w := make([]float64, n)
			if !ws.Factorize(n, v, n, w) {
				t.Fatal("not converged")
			}
			if i := sameBits(w, wantVals); i >= 0 {
				t.Fatalf("n=%d goroutines=%d: eigenvalue %d differs", n, par, i)
			}
			if i := sameBits(v, wantVecs); i >= 0 {
				t.Fatalf("n=%d goroutines=%d: eigenvector entry %d differs", n, par, i)
			}
		}
	}
}
