package symeig

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// conditioned returns G Λ Gᵀ for a random orthogonal G (the Q of a random
// matrix's tridiagonal reduction would do; here Gram–Schmidt of a random
// matrix) and eigenvalues spread geometrically over the given condition
// number, or taking only the values in repeated.
func conditioned(n int, r *rand.Rand, cond float64, repeated []float64) []float64 {
	g := make([]float64, n*n)
	for i := range g {
		g[i] = r.NormFloat64()
	}
	// Modified Gram–Schmidt on the columns of g.
	for j := range n {
		for k := range j {
			var dot float64
			for i := range n {
				dot += g[i*n+j] * g[i*n+k]
			}
			for i := range n {
				g[i*n+j] -= dot * g[i*n+k]
			}
		}
		var nrm float64
		for i := range n {
			nrm += g[i*n+j] * g[i*n+j]
		}
		nrm = math.Sqrt(nrm)
		for i := range n {
			g[i*n+j] /= nrm
		}
	}
	lam := make([]float64, n)
	for k := range lam {
		if repeated != nil {
			lam[k] = repeated[k%len(repeated)]
		} else {
			lam[k] = math.Pow(cond, -float64(k)/float64(max(1, n-1)))
		}
	}
	a := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			var s float64
			for k := range n {
				s += g[i*n+k] * lam[k] * g[j*n+k]
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	return a
}

// testMatrices are matrices() and the ill-conditioned and repeated cases.
func testMatrices(n int, r *rand.Rand) map[string][]float64 {
	m := matrices(n, r)
	m["cond1e14"] = conditioned(n, r, 1e14, nil)
	m["repeated3"] = conditioned(n, r, 0, []float64{1, 1, 1, 2, 2, 5})
	return m
}

// TestFactorizeBlockedAgreesWithSyev checks version Blocked against gonum's
// dsyev: the eigenvalues within a few ulps of ‖A‖, the eigenvectors
// orthonormal and A V = V diag(w) to the same tolerance.
// agreesWithSyev factorizes a by version and checks the eigenvalues against
// gonum's dsyev (both succeed; ascending; each within 64nε‖A‖), returning
// the eigenvectors and values, dsyev's, ‖A‖ (max entry) and the tolerance
// 64nε.
func agreesWithSyev(t *testing.T, version, n int, a []float64) (v, w, wantVecs, wantVals []float64, anrm, tol float64) {
	t.Helper()
	wantVecs, wantVals, wantOK := syev(t, n, a)
	v = append([]float64(nil), a...)
	w = make([]float64, n)
	var ws Workspace
	if ok := ws.FactorizeVersion(version, n, v, n, w); ok != wantOK || !ok {
		t.Fatalf("ok %v, dsyev %v", ok, wantOK)
	}
	for _, x := range a {
		anrm = math.Max(anrm, math.Abs(x))
	}
	tol = 64 * float64(n) * 0x1p-52
	for i := range n {
		if i > 0 && w[i] < w[i-1] {
			t.Fatalf("eigenvalues not ascending at %d", i)
		}
		if d := math.Abs(w[i] - wantVals[i]); d > tol*anrm {
			t.Fatalf("eigenvalue %d: %v, dsyev %v (|Δ|/‖A‖ = %.3g)", i, w[i], wantVals[i], d/anrm)
		}
	}
	return v, w, wantVecs, wantVals, anrm, tol
}

func TestFactorizeBlockedAgreesWithSyev(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 10, 33, 64, 100, 150} {
		for name, a := range testMatrices(n, r) {
			t.Run(fmt.Sprintf("n=%d/%s", n, name), func(t *testing.T) {
				v, w, _, _, anrm, tol := agreesWithSyev(t, Blocked, n, a)
				checkDecomposition(t, n, a, v, w, anrm, tol)
			})
		}
	}
}

// checkDecomposition checks VᵀV = I and A V = V diag(w), entrywise, with
// tolerance tol (relative to ‖A‖ for the second).
func checkDecomposition(t *testing.T, n int, a, v, w []float64, anrm, tol float64) {
	t.Helper()
	for i := range n {
		for j := range n {
			var gram, av float64
			for k := range n {
				gram += v[k*n+i] * v[k*n+j]
				av += a[i*n+k] * v[k*n+j]
			}
			id := 0.0
			if i == j {
				id = 1
			}
			if math.Abs(gram-id) > tol {
				t.Fatalf("(VᵀV)[%d,%d] = %v", i, j, gram)
			}
			if d := math.Abs(av - v[i*n+j]*w[j]); d > tol*anrm {
				t.Fatalf("(AV − VΛ)[%d,%d] = %.3g ‖A‖", i, j, d/anrm)
			}
		}
	}
}

// TestFactorizeBlockedDeterministic checks that version Blocked gives the
// same bits at GOMAXPROCS 1, 2 and 8, on one Workspace and on fresh ones,
// at orders where the rank-2k update and the rotations run in parallel.
func TestFactorizeBlockedDeterministic(t *testing.T) {
	checkDeterministic(t, Blocked, []int{40, 130, 200}, rand.New(rand.NewPCG(9, 10)))
}

// checkDeterministic checks that the given version decomposes each of
// testMatrices at the orders given to the same bits at GOMAXPROCS 1, 2, 8
// and 1 again, twice on each Workspace.
func checkDeterministic(t *testing.T, version int, orders []int, r *rand.Rand) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, n := range orders {
		for name, a := range testMatrices(n, r) {
			var wantV, wantW []float64
			for _, procs := range []int{1, 2, 8, 1} {
				runtime.GOMAXPROCS(procs)
				var ws Workspace
				for rep := range 2 {
					v := append([]float64(nil), a...)
					w := make([]float64, n)
					if !ws.FactorizeVersion(version, n, v, n, w) {
						t.Fatalf("n=%d %s: not converged", n, name)
					}
					if wantV == nil {
						wantV, wantW = v, w
						continue
					}
					if i := sameBits(w, wantW); i >= 0 {
						t.Fatalf("n=%d %s GOMAXPROCS=%d rep %d: eigenvalue %d differs", n, name, procs, rep, i)
					}
					if i := sameBits(v, wantV); i >= 0 {
						t.Fatalf("n=%d %s GOMAXPROCS=%d rep %d: eigenvector entry %d differs", n, name, procs, rep, i)
					}
				}
			}
		}
	}
}

// TestFactorizeVersion checks the dispatch: Dsyev is Factorize bit for bit,
// Blocked differs from it at an order where the blocked reduction runs (so
// the version matters), and an unknown version fails.
func TestFactorizeVersion(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 120
	a := matrices(n, r)["wide"]
	run := func(version int) ([]float64, []float64, bool) {
		var ws Workspace
		v := append([]float64(nil), a...)
		w := make([]float64, n)
		ok := ws.FactorizeVersion(version, n, v, n, w)
		return v, w, ok
	}
	wantV, wantW, _ := syev(t, n, a)
	v1, w1, ok := run(Dsyev)
	if !ok || sameBits(v1, wantV) >= 0 || sameBits(w1, wantW) >= 0 {
		t.Fatal("version Dsyev is not dsyev bit for bit")
	}
	v2, _, ok := run(Blocked)
	if !ok || sameBits(v2, v1) < 0 {
		t.Fatal("version Blocked gave dsyev's bits: the test would not see a wrong version")
	}
	if _, _, ok := run(4); ok {
		t.Fatal("unknown version 4 accepted")
	}
}
