package selfcma

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// sameBits says a and b hold the same float64 bits entry by entry, NaNs of
// any payload counting as equal (a NaN distance makes h reject C', whatever
// its payload); it names the first difference.
func sameBits(a, b []float64) (int, bool) {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return i, false
		}
	}
	return 0, len(a) == len(b)
}

// randomUpper is an n×n upper triangular factor: off-diagonal entries
// normal, the diagonal spread over 10^±(spread/2) (ill-conditioned for a
// large spread), and with probability zeros a zero off-diagonal entry (±0).
func randomUpper(r *rand.Rand, n int, spread, zeros float64) blas64.Triangular {
	u := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: make([]float64, n*n)}
	for i := range n {
		u.Data[i*n+i] = math.Pow(10, spread*(r.Float64()-0.5))
		for j := i + 1; j < n; j++ {
			switch {
			case r.Float64() < zeros && r.IntN(2) == 0:
				u.Data[i*n+j] = 0
			case r.Float64() < zeros:
				u.Data[i*n+j] = math.Copysign(0, -1)
			default:
				u.Data[i*n+j] = r.NormFloat64()
			}
		}
	}
	return u
}

// choleskyUpper is the Cholesky factor of a random ill-conditioned SPD
// matrix QΛQᵀ-like: AᵀA + εI with A random n×n and ε small.
func choleskyUpper(r *rand.Rand, n int, eps float64) (blas64.Triangular, bool) {
	a := make([]float64, n*n)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	c := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: make([]float64, n*n)}
	for i := range n {
		for j := i; j < n; j++ {
			var s float64
			for k := range n {
				s += float64(a[k*n+i] * a[k*n+j])
			}
			c.Data[i*n+j] = s
		}
		c.Data[i*n+i] += eps
	}
	return lapack64.Potrf(c)
}

// checkSolve compares trsm.solve, with and without the AVX kernels, with
// blas64.Trsm on v.
func checkSolve(t *testing.T, name string, tr *trsm, u blas64.Triangular, v []float64, lambda int) {
	t.Helper()
	want := slices.Clone(v)
	blas64.Trsm(blas.Left, blas.Trans, 1, u, blas64.General{Rows: u.N, Cols: lambda, Stride: lambda, Data: want})
	for _, avx := range []bool{false, true} {
		if avx && !haveAVX {
			continue
		}
		got := slices.Clone(v)
		tr.solve(u, got, lambda, tr.pack(u), avx)
		if i, ok := sameBits(got, want); !ok {
			t.Fatalf("%s avx=%v: entry (%d, %d) = %v (%#x), blas64.Trsm %v (%#x)", name, avx,
				i/lambda, i%lambda, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// skipWithoutKernels skips where h does not use the kernels (trsmFast
// false): there gonum's pure-Go loops may be compiled into fused
// multiply–adds, which the kernels never are.
func skipWithoutKernels(t *testing.T) {
	t.Helper()
	if !trsmFast {
		t.Skip("no kernels on this architecture: h uses gonum")
	}
	if !haveAVX {
		t.Log("no AVX: only the Go kernels are compared")
	}
}

func TestTrsmSameBits(t *testing.T) {
	skipWithoutKernels(t)
	r := rand.New(rand.NewPCG(1, 2))
	ns := []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 33, 64, 65, 100, 127, 200, 257, 300}
	lambdas := []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 20, 100, 101, 255, 300}
	var tr trsm
	for _, n := range ns {
		for _, lambda := range lambdas {
			if n*n*lambda > 4e6 && r.IntN(4) != 0 {
				continue // a quarter of the largest shapes
			}
			spread := []float64{0, 4, 16}[r.IntN(3)]
			u := randomUpper(r, n, spread, 0)
			v := make([]float64, n*lambda)
			for i := range v {
				v[i] = r.NormFloat64() * math.Pow(10, 3*r.NormFloat64())
			}
			checkSolve(t, fmt.Sprintf("n=%d λ=%d spread=%v", n, lambda, spread), &tr, u, v, lambda)
		}
	}
}

// TestTrsmCholesky: factors of ill-conditioned matrices, as h gets them.
func TestTrsmCholesky(t *testing.T) {
	skipWithoutKernels(t)
	r := rand.New(rand.NewPCG(3, 4))
	var tr trsm
	for _, n := range []int{1, 2, 5, 6, 10, 40, 63, 64, 65, 100, 130} {
		for _, eps := range []float64{1, 1e-6, 1e-12} {
			u, ok := choleskyUpper(r, n, eps)
			if !ok {
				continue
			}
			lambda := 1 + r.IntN(120)
			v := make([]float64, n*lambda)
			for i := range v {
				v[i] = r.NormFloat64()
			}
			checkSolve(t, fmt.Sprintf("n=%d λ=%d ε=%v", n, lambda, eps), &tr, u, v, lambda)
		}
	}
}

// TestTrsmSpecial: zeros above the diagonal (gonum leaves their terms
// out), overflow to ±Inf and NaN, signed zeros in V.
func TestTrsmSpecial(t *testing.T) {
	skipWithoutKernels(t)
	var tr trsm
	// A left-out term changes the result: Inf·0 would be NaN, and
	// −0 + (+0) would be +0.
	for i, zero := range []float64{0, math.Copysign(0, -1)} {
		for j, v0 := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 1, -1} {
			for _, v1 := range []float64{1, math.Copysign(0, -1), 0} {
				for _, diag := range []float64{1, 2} {
					for _, lambda := range []int{1, 4, 8, 9} {
						for _, n := range []int{2, 5} {
							u := randomUpper(rand.New(rand.NewPCG(uint64(n), 0)), n, 0, 0)
							u.Data[1] = zero
							u.Data[0], u.Data[n+1] = diag, diag
							v := make([]float64, n*lambda)
							for c := range lambda {
								v[c], v[lambda+c] = v0, v1
							}
							checkSolve(t, fmt.Sprintf("u_01=%v v_0=%v v_1=%v (%d %d) λ=%d n=%d", zero, v0, v1, i, j, lambda, n), &tr, u, v, lambda)
						}
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n, lambda := 1+r.IntN(40), 1+r.IntN(40)
		zeros := []float64{0, 0.01, 0.3}[trial%3]
		u := randomUpper(r, n, 600*r.Float64(), zeros)
		v := make([]float64, n*lambda)
		for i := range v {
			switch r.IntN(8) {
			case 0:
				v[i] = math.Copysign(0, -1)
			case 1:
				v[i] = 0
			case 2:
				v[i] = math.Copysign(1e300, r.NormFloat64())
			case 3:
				v[i] = math.Inf(1 - 2*r.IntN(2))
			case 4:
				v[i] = math.NaN()
			default:
				v[i] = r.NormFloat64()
			}
		}
		checkSolve(t, fmt.Sprintf("trial %d n=%d λ=%d", trial, n, lambda), &tr, u, v, lambda)
	}
}

// TestTrsmPackRejectsZeros: a zero above the diagonal sends the solve to
// gonum (the check the special cases rely on).
func TestTrsmPackRejectsZeros(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var tr trsm
	for _, zero := range []float64{0, math.Copysign(0, -1)} {
		u := randomUpper(r, 9, 2, 0)
		if !tr.pack(u) {
			t.Fatal("pack rejects a factor without zeros")
		}
		u.Data[3*9+7] = zero
		if tr.pack(u) {
			t.Fatalf("pack accepts u_37 = %v", zero)
		}
	}
}

// hBefore is h_t as it was before trsm: blas64.Trsm for the solve. It
// returns h, ok and the squared distances.
func hBefore(theta cmaes.Hyper, prev, cur *cmaes.Step, mu int) (float64, bool, []float64) {
	lambda, n := cur.X.Dims()
	ws := &workspace{}
	ws.size(n, lambda)
	prev.Replay(theta, ws.pc, ws.c)
	u, ok := lapack64.Potrf(ws.c.RawSymmetric())
	if !ok {
		return 0, false, nil
	}
	x := cur.X.RawMatrix()
	for k := range lambda {
		row := x.Data[k*x.Stride : k*x.Stride+n]
		for i := range n {
			ws.v[i*lambda+k] = row[i] - cur.Mean[i]
		}
	}
	blas64.Trsm(blas.Left, blas.Trans, 1, u, blas64.General{Rows: n, Cols: lambda, Stride: lambda, Data: ws.v})
	d := make([]float64, lambda)
	for i := range n {
		for k, w := range ws.v[i*lambda : (i+1)*lambda] {
			d[k] += w * w
		}
	}
	for _, dk := range d {
		if math.IsNaN(dk) {
			return 0, false, d
		}
	}
	rank := make([]int, lambda)
	for k := range rank {
		rank[k] = k
	}
	slices.SortFunc(rank, func(a, b int) int {
		if c := cmp.Compare(d[b], d[a]); c != 0 {
			return c
		}
		return a - b
	})
	pos := make([]float64, lambda)
	for r, k := range rank {
		pos[k] = float64(r + 1)
	}
	var h float64
	for _, k := range cur.Order[:mu] {
		h += pos[k]
	}
	return h / float64(mu), true, d
}

// TestHSameBits: h_t and its distances against hBefore, bit for bit,
// on the replayed steps of runs (random θ), with and without AVX.
func TestHSameBits(t *testing.T) {
	avx := haveAVX
	t.Cleanup(func() { haveAVX = avx })
	r := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct{ n, lambda int }{{2, 6}, {5, 10}, {13, 17}, {30, 100}, {64, 24}, {101, 100}, {150, 40}} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, tc.n), Sigma0: 1, Lambda: tc.lambda, Seed: uint64(tc.n), Termination: never}})
		prev := new(cmaes.Step)
		for g := range 12 {
			step(t, s, rosenbrock)
			cur := s.Primary().LastStep()
			if g > 0 {
				for range 4 {
					theta := cmaes.Hyper{C1: 0.45 * r.Float64(), CMu: 0.45 * r.Float64(), Cc: 0.9 * r.Float64()}
					mu := 1 + r.IntN(tc.lambda)
					want, wantOK, wantD := hBefore(theta, prev, cur, mu)
					for _, useAVX := range []bool{false, avx} {
						haveAVX = useAVX
						ws := &workspace{}
						got, ok := ws.h(theta, prev, cur, mu)
						if ok != wantOK || math.Float64bits(got) != math.Float64bits(want) {
							t.Fatalf("n=%d g=%d θ=%+v avx=%v: h = %v, %v; reference %v, %v", tc.n, g, theta, useAVX, got, ok, want, wantOK)
						}
						if wantD == nil {
							continue
						}
						if i, same := sameBits(ws.d, wantD); !same {
							t.Fatalf("n=%d g=%d avx=%v: d_%d = %v, reference %v", tc.n, g, useAVX, i, ws.d[i], wantD[i])
						}
					}
				}
			}
			prev.CopyFrom(cur)
		}
	}
}

// BenchmarkH is h_t alone (one candidate θ, the replay, the Cholesky
// factor and the solve), on a replayed step of a run.
func BenchmarkH(b *testing.B) {
	for _, n := range []int{100, 200, 400} {
		s := mustNew(b, Config{CMA: cmaes.Config{X0: uniformX0(1, n), Sigma0: 1, Lambda: 100, Seed: 1, Termination: never}})
		r := rand.New(rand.NewPCG(2, 2))
		f := make([]float64, 100)
		for range 4 {
			for k := range f {
				f[k] = r.Float64()
			}
			s.Ask()
			if _, err := s.Tell(f); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("n=%d/λ=100", n), func(b *testing.B) {
			ws := &workspace{}
			theta := s.Primary().Hyper()
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ws.h(theta, s.prev, s.Primary().LastStep(), 50); !ok {
					b.Fatal("C' not positive definite")
				}
			}
		})
	}
}

// randomSPD is the upper triangle of BᵀB + εI for B with normal entries
// scaled by columns over 10^±(spread/2) (ill-conditioned for a large spread
// or a small ε), stride n.
func randomSPD(r *rand.Rand, n int, spread, eps float64) []float64 {
	b := make([]float64, n*n)
	for k := range n {
		s := math.Pow(10, spread*(r.Float64()-0.5))
		for i := range n {
			b[i*n+k] = s * r.NormFloat64()
		}
	}
	c := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			var s float64
			for k := range n {
				s += float64(b[k*n+i] * b[k*n+j])
			}
			c[i*n+j] = s
		}
		c[i*n+i] += eps
	}
	return c
}

// checkCholesky compares trsm.cholesky, with and without AVX, with
// lapack64.Potrf on the upper triangle of c, and the packed panels with
// those pack makes from gonum's factor.
func checkCholesky(t *testing.T, name string, c []float64, n int) {
	t.Helper()
	sym := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: slices.Clone(c)}
	u, wantOK := lapack64.Potrf(sym)
	var want trsm
	wantFast := want.pack(u)
	for _, avx := range []bool{false, true} {
		if avx && !haveAVX {
			continue
		}
		var tr trsm
		got := slices.Clone(c)
		ok, fast := tr.cholesky(got, n, n, avx)
		if ok != wantOK {
			t.Fatalf("%s avx=%v: ok = %v, Potrf %v", name, avx, ok, wantOK)
		}
		if !ok {
			continue
		}
		if fast != wantFast {
			t.Fatalf("%s avx=%v: fast = %v, zero-free factor %v", name, avx, fast, wantFast)
		}
		if !fast {
			continue
		}
		for i := range n {
			if k, same := sameBits(got[i*n+i:i*n+n], u.Data[i*n+i:i*n+n]); !same {
				t.Fatalf("%s avx=%v: u_%d,%d = %v, Potrf %v", name, avx, i, i+k, got[i*n+i+k], u.Data[i*n+i+k])
			}
		}
		if k, same := sameBits(tr.panel, want.panel); !same {
			t.Fatalf("%s avx=%v: panel entry %d = %v, from gonum's factor %v", name, avx, k, tr.panel[k], want.panel[k])
		}
		if k, same := sameBits(tr.rinv, want.rinv); !same {
			t.Fatalf("%s avx=%v: rinv_%d = %v, from gonum's factor %v", name, avx, k, tr.rinv[k], want.rinv[k])
		}
	}
}

func TestCholeskySameBits(t *testing.T) {
	skipWithoutKernels(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 3, 4, 63, 64, 65, 66, 67, 70, 100, 127, 128, 129, 131, 200, 257, 300, 401} {
		for _, cond := range []struct{ spread, eps float64 }{{0, 1}, {6, 1e-10}, {12, 0}} {
			if n > 300 && cond.spread > 0 {
				continue
			}
			c := randomSPD(r, n, cond.spread, cond.eps)
			checkCholesky(t, fmt.Sprintf("n=%d spread=%v ε=%v", n, cond.spread, cond.eps), c, n)
		}
	}
}

// TestCholeskySpecial: not positive definite (in the first block, in a
// later one), and zeros in U (a block-diagonal C', a zero row).
func TestCholeskySpecial(t *testing.T) {
	skipWithoutKernels(t)
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{5, 64, 65, 150} {
		for _, bad := range []int{0, n / 2, n - 1} {
			c := randomSPD(r, n, 0, 1)
			c[bad*n+bad] = -1
			checkCholesky(t, fmt.Sprintf("n=%d c_%d,%d=−1", n, bad, bad), c, n)
			c[bad*n+bad] = math.NaN()
			checkCholesky(t, fmt.Sprintf("n=%d c_%d,%d=NaN", n, bad, bad), c, n)
		}
		for _, split := range []int{1, n / 3, n - 1} {
			c := randomSPD(r, n, 0, 1)
			for i := range split {
				for j := split; j < n; j++ {
					c[i*n+j] = 0
				}
			}
			checkCholesky(t, fmt.Sprintf("n=%d block-diagonal at %d", n, split), c, n)
		}
	}
}

// BenchmarkTrsm is the solve of h_t alone (n×n factor, λ = 100 columns):
// trsm.solve with and without AVX, and blas64.Trsm.
func BenchmarkTrsm(b *testing.B) {
	for _, n := range []int{100, 200, 400} {
		const lambda = 100
		r := rand.New(rand.NewPCG(1, 1))
		u, _ := choleskyUpper(r, n, 1)
		v := make([]float64, n*lambda)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		w := make([]float64, len(v))
		for _, impl := range []string{"avx", "go", "gonum"} {
			if impl == "avx" && !haveAVX {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/λ=%d/%s", n, lambda, impl), func(b *testing.B) {
				var tr trsm
				if !tr.pack(u) {
					b.Fatal("zero in U")
				}
				b.ReportAllocs()
				for b.Loop() {
					copy(w, v)
					switch impl {
					case "gonum":
						blas64.Trsm(blas.Left, blas.Trans, 1, u, blas64.General{Rows: n, Cols: lambda, Stride: lambda, Data: w})
					default:
						tr.solve(u, w, lambda, true, impl == "avx")
					}
				}
				b.ReportMetric(float64(n*n*lambda)/b.Elapsed().Seconds()*float64(b.N)/1e9, "Gflop/s")
			})
		}
	}
}
