package symeig

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// syev is the reference: gonum's dsyev on a copy of a.
func syev(t *testing.T, n int, a []float64) (vecs, vals []float64, ok bool) {
	t.Helper()
	vecs = append([]float64(nil), a...)
	vals = make([]float64, n)
	work := []float64{0}
	sym := blas64.Symmetric{N: n, Stride: n, Data: vecs, Uplo: blas.Upper}
	lapack64.Syev(lapack.EVCompute, sym, vals, work, -1)
	work = make([]float64, int(work[0]))
	ok = lapack64.Syev(lapack.EVCompute, sym, vals, work, len(work))
	return vecs, vals, ok
}

// matrices are symmetric test matrices of order n, by name: random ones,
// covariance-like ones with a wide spectrum, repeated eigenvalues, a
// diagonal, and scales that make dsyev rescale.
func matrices(n int, r *rand.Rand) map[string][]float64 {
	out := map[string][]float64{}
	sym := func(f func(i, j int) float64) []float64 {
		a := make([]float64, n*n)
		for i := range n {
			for j := i; j < n; j++ {
				a[i*n+j] = f(i, j)
				a[j*n+i] = a[i*n+j]
			}
		}
		return a
	}
	out["random"] = sym(func(i, j int) float64 { return r.NormFloat64() })
	// G Λ Gᵀ with eigenvalues 10^(−6..6): a C after a long run on an
	// ill-conditioned function.
	g := make([]float64, n*n)
	for i := range g {
		g[i] = r.NormFloat64()
	}
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = math.Pow(10, -6+12*float64(i)/float64(max(1, n-1)))
	}
	out["wide"] = sym(func(i, j int) float64 {
		s := 0.0
		for k := range n {
			s += g[i*n+k] * lam[k] * g[j*n+k]
		}
		return s / float64(n)
	})
	out["identity"] = sym(func(i, j int) float64 {
		if i == j {
			return 1
		}
		return 0
	})
	out["diagonal"] = sym(func(i, j int) float64 {
		if i == j {
			return float64(n - i)
		}
		return 0
	})
	out["ones"] = sym(func(i, j int) float64 { return 1 }) // eigenvalue 0, n−1 times
	tiny, huge := out["random"], out["random"]
	out["tiny"] = sym(func(i, j int) float64 { return tiny[i*n+j] * 1e-160 })
	out["huge"] = sym(func(i, j int) float64 { return huge[i*n+j] * 1e160 })
	return out
}

func sameBits(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestFactorizeEqualsSyev checks every eigenvalue and eigenvector entry
// against gonum's dsyev bit for bit, for one goroutine and for several.
func TestFactorizeEqualsSyev(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 10, 31, 64, 100, 150} {
		for name, a := range matrices(n, r) {
			wantVecs, wantVals, wantOK := syev(t, n, a)
			for _, par := range []int{1, 2, 3, 8} {
				t.Run(fmt.Sprintf("n=%d/%s/goroutines=%d", n, name, par), func(t *testing.T) {
					ws := Workspace{parallel: par}
					// Twice on one Workspace: reused buffers give the same.
					for range 2 {
						got := append([]float64(nil), a...)
						vals := make([]float64, n)
						ok := ws.Factorize(n, got, n, vals)
						if ok != wantOK {
							t.Fatalf("ok %v, dsyev %v", ok, wantOK)
						}
						if i := sameBits(vals, wantVals); i >= 0 {
							t.Fatalf("eigenvalue %d: %v, dsyev %v", i, vals[i], wantVals[i])
						}
						if i := sameBits(got, wantVecs); i >= 0 {
							t.Fatalf("eigenvector entry (%d, %d): %v, dsyev %v", i/n, i%n, got[i], wantVecs[i])
						}
					}
				})
			}
		}
	}
}

// TestFactorizeStride checks a matrix with stride > n.
func TestFactorizeStride(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, lda = 40, 43
	a := matrices(n, r)["wide"]
	wantVecs, wantVals, _ := syev(t, n, a)
	padded := make([]float64, n*lda)
	for i := range padded {
		padded[i] = math.NaN() // never read
	}
	for i := range n {
		copy(padded[i*lda:i*lda+n], a[i*n:i*n+n])
	}
	var ws Workspace
	vals := make([]float64, n)
	if !ws.Factorize(n, padded, lda, vals) {
		t.Fatal("not converged")
	}
	if i := sameBits(vals, wantVals); i >= 0 {
		t.Fatalf("eigenvalue %d differs", i)
	}
	for i := range n {
		if j := sameBits(padded[i*lda:i*lda+n], wantVecs[i*n:i*n+n]); j >= 0 {
			t.Fatalf("eigenvector entry (%d, %d) differs", i, j)
		}
	}
}

// TestFactorizeDecomposes checks A = V diag(w) Vᵀ and VᵀV = I directly, so
// the test does not rest on dsyev alone.
func TestFactorizeDecomposes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 60
	a := matrices(n, r)["random"]
	v := append([]float64(nil), a...)
	w := make([]float64, n)
	var ws Workspace
	if !ws.Factorize(n, v, n, w) {
		t.Fatal("not converged")
	}
	for i := 1; i < n; i++ {
		if w[i] < w[i-1] {
			t.Fatalf("eigenvalues not ascending at %d", i)
		}
	}
	for i := range n {
		for j := range n {
			var rec, gram float64
			for k := range n {
				rec += v[i*n+k] * w[k] * v[j*n+k]
				gram += v[k*n+i] * v[k*n+j]
			}
			if math.Abs(rec-a[i*n+j]) > 1e-12*float64(n) {
				t.Fatalf("(V diag(w) Vᵀ)[%d,%d] = %v, A = %v", i, j, rec, a[i*n+j])
			}
			id := 0.0
			if i == j {
				id = 1
			}
			if math.Abs(gram-id) > 1e-13*float64(n) {
				t.Fatalf("(VᵀV)[%d,%d] = %v", i, j, gram)
			}
		}
	}
}

func BenchmarkFactorize(b *testing.B) {
	for _, n := range []int{10, 100, 200, 400, 1000} {
		r := rand.New(rand.NewPCG(1, 1))
		a := matrices(n, r)["random"]
		buf := make([]float64, n*n)
		w := make([]float64, n)
		b.Run(fmt.Sprintf("n=%d/symeig", n), func(b *testing.B) {
			var ws Workspace
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, a)
				ws.Factorize(n, buf, n, w)
			}
		})
		b.Run(fmt.Sprintf("n=%d/blocked", n), func(b *testing.B) {
			var ws Workspace
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, a)
				ws.FactorizeBlocked(n, buf, n, w)
			}
		})
		b.Run(fmt.Sprintf("n=%d/symeig-1", n), func(b *testing.B) {
			ws := Workspace{parallel: 1}
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, a)
				ws.Factorize(n, buf, n, w)
			}
		})
		b.Run(fmt.Sprintf("n=%d/syev", n), func(b *testing.B) {
			work := []float64{0}
			sym := blas64.Symmetric{N: n, Stride: n, Data: buf, Uplo: blas.Upper}
			lapack64.Syev(lapack.EVCompute, sym, w, work, -1)
			work = make([]float64, int(work[0]))
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, a)
				lapack64.Syev(lapack.EVCompute, sym, w, work, len(work))
			}
		})
	}
}
