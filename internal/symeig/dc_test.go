package symeig

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/lapack"
)

// decompositionErrors returns max |(VᵀV − I)_ij| and max |(AV − VΛ)_ij| / ‖A‖.
func decompositionErrors(n int, a, v, w []float64) (orth, resid float64) {
	var anrm float64
	for _, x := range a {
		anrm = math.Max(anrm, math.Abs(x))
	}
	if anrm == 0 {
		anrm = 1
	}
	for i := range n {
		for j := range n {
			var gram, av float64
			for k := range n {
				gram += v[k*n+i] * v[k*n+j]
				av += a[i*n+k] * v[k*n+j]
			}
			if i == j {
				gram--
			}
			orth = math.Max(orth, math.Abs(gram))
			resid = math.Max(resid, math.Abs(av-v[i*n+j]*w[j])/anrm)
		}
	}
	return orth, resid
}

// TestFactorizeDivideConquerAgreesWithSyev checks version DivideConquer
// against gonum's dsyev on random, wide-spectrum, condition-1e14,
// repeated-eigenvalue, diagonal, rank-one and badly scaled matrices: the
// eigenvalues ascending and within 64 n ε ‖A‖ of dsyev's, VᵀV = I and
// A V = V diag(w) to 64 n ε, and neither error more than 16 times dsyev's
// own (or 16 n ε, whichever is larger).
func TestFactorizeDivideConquerAgreesWithSyev(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	sizes := []int{1, 2, 3, 25, 26, 51, dcMinOrder, dcMinOrder + 1, 200, 400}
	if testing.Short() {
		sizes = sizes[:8]
	}
	for _, n := range sizes {
		for name, a := range testMatrices(n, r) {
			t.Run(fmt.Sprintf("n=%d/%s", n, name), func(t *testing.T) {
				v, w, wantVecs, wantVals, anrm, tol := agreesWithSyev(t, DivideConquer, n, a)
				checkDecomposition(t, n, a, v, w, anrm, tol)
				orth, resid := decompositionErrors(n, a, v, w)
				wantOrth, wantResid := decompositionErrors(n, a, wantVecs, wantVals)
				floor := 16 * float64(n) * 0x1p-52
				if orth > max(16*wantOrth, floor) || resid > max(16*wantResid, floor) {
					t.Errorf("‖VᵀV − I‖ %.3g (dsyev %.3g), ‖AV − VΛ‖/‖A‖ %.3g (dsyev %.3g)", orth, wantOrth, resid, wantResid)
				}
			})
		}
	}
}

// tridiagonals are symmetric tridiagonal test matrices (d, e) of order n
// that exercise the deflation of dlaed2: Wilkinson's W⁺ (pairs of nearly
// equal eigenvalues), a constant matrix (eigenvalues clustered at the ends),
// one with zero off-diagonal entries (splits), one with tiny ones, glued
// Wilkinson matrices and a random one.
func tridiagonals(n int, r *rand.Rand) map[string][2][]float64 {
	out := map[string][2][]float64{}
	mk := func(fd func(i int) float64, fe func(i int) float64) [2][]float64 {
		d, e := make([]float64, n), make([]float64, max(0, n-1))
		for i := range d {
			d[i] = fd(i)
		}
		for i := range e {
			e[i] = fe(i)
		}
		return [2][]float64{d, e}
	}
	out["wilkinson"] = mk(func(i int) float64 { return math.Abs(float64(i - n/2)) }, func(int) float64 { return 1 })
	out["constant"] = mk(func(int) float64 { return 2 }, func(int) float64 { return 1 })
	out["splits"] = mk(func(int) float64 { return r.NormFloat64() }, func(i int) float64 {
		if i%17 == 16 {
			return 0
		}
		return r.NormFloat64()
	})
	out["tiny-e"] = mk(func(i int) float64 { return float64(i % 5) }, func(i int) float64 { return 1e-12 * r.NormFloat64() })
	out["glued"] = mk(func(i int) float64 { return math.Abs(float64(i%21 - 10)) }, func(i int) float64 {
		if i%21 == 20 {
			return 1e-8
		}
		return 1
	})
	out["random"] = mk(func(int) float64 { return r.NormFloat64() }, func(int) float64 { return r.NormFloat64() })
	out["graded"] = mk(func(i int) float64 { return math.Pow(10, -float64(i%15)) }, func(i int) float64 { return math.Pow(10, -float64(i%15)-0.5) })
	return out
}

// TestStedc checks the divide and conquer on tridiagonal matrices against
// Dsteqr: the eigenvalues within 64 n ε ‖T‖ of Dsteqr's, and the
// eigenvectors Z orthonormal with T Z = Z Λ, to 64 n ε (‖T‖).
func TestStedc(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{2, 25, 26, 40, 64, 101, 256} {
		for name, de := range tridiagonals(n, r) {
			t.Run(fmt.Sprintf("n=%d/%s", n, name), func(t *testing.T) {
				d := append([]float64(nil), de[0]...)
				e := append([]float64(nil), de[1]...)
				wantD := append([]float64(nil), de[0]...)
				wantE := append([]float64(nil), de[1]...)
				zq := make([]float64, n*n)
				if !impl.Dsteqr(lapack.EVTridiag, n, wantD, wantE, zq, n, make([]float64, 2*n)) {
					t.Fatal("Dsteqr did not converge")
				}
				var dw dcWork
				dw.grow(n)
				if !dw.stedc(n, d, e) {
					t.Fatal("stedc did not converge")
				}
				tnrm := impl.Dlanst(lapack.MaxAbs, n, de[0], de[1])
				tol := 64 * float64(n) * 0x1p-52
				for i := range n {
					if i > 0 && d[i] < d[i-1] {
						t.Fatalf("eigenvalues not ascending at %d", i)
					}
					if diff := math.Abs(d[i] - wantD[i]); diff > tol*tnrm {
						t.Fatalf("eigenvalue %d: %v, Dsteqr %v", i, d[i], wantD[i])
					}
				}
				// Column j of Z is dw.q[j*n : (j+1)*n].
				z := dw.q
				for j := range n {
					for k := range n {
						var gram float64
						for i := range n {
							gram += z[j*n+i] * z[k*n+i]
						}
						if j == k {
							gram--
						}
						if math.Abs(gram) > tol {
							t.Fatalf("(ZᵀZ − I)[%d,%d] = %.3g", j, k, gram)
						}
					}
					for i := range n {
						tz := de[0][i] * z[j*n+i]
						if i > 0 {
							tz += de[1][i-1] * z[j*n+i-1]
						}
						if i < n-1 {
							tz += de[1][i] * z[j*n+i+1]
						}
						if diff := math.Abs(tz - d[j]*z[j*n+i]); diff > tol*tnrm {
							t.Fatalf("(TZ − ZΛ)[%d,%d] = %.3g ‖T‖", i, j, diff/tnrm)
						}
					}
				}
			})
		}
	}
}

// TestFactorizeDivideConquerDeterministic checks that version
// DivideConquer gives the same bits at GOMAXPROCS 1, 2 and 8, on one
// Workspace and on fresh ones, at orders where the products run in
// parallel.
func TestFactorizeDivideConquerDeterministic(t *testing.T) {
	checkDeterministic(t, DivideConquer, []int{40, 130, 300}, rand.New(rand.NewPCG(17, 18)))
}

// TestFactorizeDivideConquerSmall checks that up to order 32 (no blocked
// reduction) version DivideConquer is version Blocked bit for bit, and that
// above it the version matters (its own reduction, then from dcMinOrder on
// the divide and conquer).
func TestFactorizeDivideConquerSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{1, 2, 10, dcSmall, 32, 33, 60, dcMinOrder + 1} {
		a := matrices(n, r)["random"]
		run := func(version int) ([]float64, []float64) {
			var ws Workspace
			v := append([]float64(nil), a...)
			w := make([]float64, n)
			if !ws.FactorizeVersion(version, n, v, n, w) {
				t.Fatalf("n=%d version %d: not converged", n, version)
			}
			return v, w
		}
		v2, w2 := run(Blocked)
		v3, w3 := run(DivideConquer)
		same := sameBits(v2, v3) < 0 && sameBits(w2, w3) < 0
		if n <= 32 && !same {
			t.Errorf("n=%d: DivideConquer differs from Blocked", n)
		}
		if n > 32 && same {
			t.Errorf("n=%d: DivideConquer gave Blocked's bits: the test would not see a wrong version", n)
		}
	}
}

// TestFactorizeDivideConquerStride checks a matrix with stride > n
// against the same matrix packed.
func TestFactorizeDivideConquerStride(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n, lda = 110, 115
	a := matrices(n, r)["wide"]
	want := append([]float64(nil), a...)
	wantW := make([]float64, n)
	var ws Workspace
	if !ws.FactorizeDivideConquer(n, want, n, wantW) {
		t.Fatal("not converged")
	}
	padded := make([]float64, n*lda)
	for i := range padded {
		padded[i] = math.NaN() // never read
	}
	for i := range n {
		copy(padded[i*lda:i*lda+n], a[i*n:i*n+n])
	}
	w := make([]float64, n)
	if !ws.FactorizeDivideConquer(n, padded, lda, w) {
		t.Fatal("not converged")
	}
	if i := sameBits(w, wantW); i >= 0 {
		t.Fatalf("eigenvalue %d differs", i)
	}
	for i := range n {
		if j := sameBits(padded[i*lda:i*lda+n], want[i*n:i*n+n]); j >= 0 {
			t.Fatalf("eigenvector entry (%d, %d) differs", i, j)
		}
		for j := n; j < lda && i < n-1; j++ {
			if !math.IsNaN(padded[i*lda+j]) {
				t.Fatalf("padding (%d, %d) written", i, j)
			}
		}
	}
}

func BenchmarkFactorizeDivideConquer(b *testing.B) {
	for _, n := range []int{10, 100, 200, 400, 1000} {
		r := rand.New(rand.NewPCG(1, 1))
		a := matrices(n, r)["random"]
		buf := make([]float64, n*n)
		w := make([]float64, n)
		b.Run(fmt.Sprintf("n=%d/dc", n), func(b *testing.B) {
			var ws Workspace
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, a)
				ws.FactorizeDivideConquer(n, buf, n, w)
			}
		})
	}
}

// TestFactorizeDivideConquerWithoutAVX checks that the plain Go kernels (a
// processor without AVX) give the same bits as the AVX ones.
func TestFactorizeDivideConquerWithoutAVX(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{30, 60, dcMinOrder + 1, 160} {
		a := matrices(n, r)["wide"]
		run := func(plain bool) ([]float64, []float64) {
			ws := Workspace{plain: plain}
			v := append([]float64(nil), a...)
			w := make([]float64, n)
			if !ws.FactorizeDivideConquer(n, v, n, w) {
				t.Fatal("not converged")
			}
			return v, w
		}
		wantV, wantW := run(false)
		func() {
			v, w := run(true)
			if i := sameBits(w, wantW); i >= 0 {
				t.Fatalf("n=%d: eigenvalue %d differs without AVX", n, i)
			}
			if i := sameBits(v, wantV); i >= 0 {
				t.Fatalf("n=%d: eigenvector entry %d differs without AVX", n, i)
			}
		}()
	}
}

// TestFactorizeDivideConquerNonFinite checks that a matrix with a NaN or
// an infinity neither panics nor hangs (cmaes rejects the result by its
// finiteness, or the false).
func TestFactorizeDivideConquerNonFinite(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, n := range []int{30, 120} {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			for _, at := range [][2]int{{0, 0}, {n / 2, n - 1}, {n - 1, n - 1}} {
				a := matrices(n, r)["random"]
				a[at[0]*n+at[1]], a[at[1]*n+at[0]] = bad, bad
				var ws Workspace
				w := make([]float64, n)
				ok := ws.FactorizeDivideConquer(n, a, n, w)
				if ok && finiteAll(w) && finiteAll(a) {
					t.Errorf("n=%d, %v at %v: finite decomposition of a non-finite matrix", n, bad, at)
				}
			}
		}
	}
}

func finiteAll(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
