package cmaes

import (
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// naiveUpdate is Algorithm 1, lines 8–14, as docs/algorithm.md §1
// writes them, computed the plain way and apart from ES: gonum's EigenSym
// for C^{−1/2}, sort.SliceStable for the ranking (ties by index), loops
// for the rest. t is the number of updates before this one.
func naiveUpdate(p Params, h Hyper, t int, X [][]float64, f []float64, m []float64, sigma float64, C *mat.SymDense, ps, pc []float64) (mNew, psNew, pcNew []float64, hs float64, cNew *mat.SymDense, sigmaNew float64) {
	n := p.N
	order := make([]int, len(f))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return f[order[a]] < f[order[b]] })

	mNew = make([]float64, n)
	for i, w := range p.Weights {
		for j := range n {
			mNew[j] += w * X[order[i]][j]
		}
	}
	yw := make([]float64, n)
	for j := range n {
		yw[j] = (mNew[j] - m[j]) / sigma
	}

	var eig mat.EigenSym
	if !eig.Factorize(C, true) {
		panic("EigenSym failed")
	}
	vals := eig.Values(nil)
	var B mat.Dense
	eig.VectorsTo(&B)
	invSqrt := mat.NewDense(n, n, nil) // B diag(1/√λ) Bᵀ
	for i := range n {
		for j := range n {
			var s float64
			for k := range n {
				s += B.At(i, k) * B.At(j, k) / math.Sqrt(vals[k])
			}
			invSqrt.Set(i, j, s)
		}
	}
	psNew = make([]float64, n)
	var norm2 float64
	for i := range n {
		var s float64
		for j := range n {
			s += invSqrt.At(i, j) * yw[j]
		}
		psNew[i] = (1-p.CSigma)*ps[i] + math.Sqrt(p.CSigma*(2-p.CSigma)*p.MuW)*s
		norm2 += psNew[i] * psNew[i]
	}
	norm := math.Sqrt(norm2)
	if norm < math.Sqrt(1-math.Pow(1-p.CSigma, 2*float64(t+1)))*(1.4+2/float64(n+1))*p.ChiN {
		hs = 1
	}
	pcNew = make([]float64, n)
	for i := range n {
		pcNew[i] = (1-h.Cc)*pc[i] + hs*math.Sqrt(h.Cc*(2-h.Cc)*p.MuW)*yw[i]
	}
	cNew = mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			var cmu float64
			for k, w := range p.Weights {
				x := X[order[k]]
				cmu += w * (x[i] - m[i]) / sigma * (x[j] - m[j]) / sigma
			}
			cNew.SetSym(i, j, (1-h.C1-h.CMu)*C.At(i, j)+h.C1*pcNew[i]*pcNew[j]+h.CMu*cmu)
		}
	}
	sigmaNew = sigma * math.Exp(p.CSigma/p.DSigma*(norm/p.ChiN-1))
	return mNew, psNew, pcNew, hs, cNew, sigmaNew
}

// TestUpdateIsAlgorithm1: every update of a run equals naiveUpdate on the
// same state and points, to rounding: m, p_σ, h_σ, p_c, C and σ. A
// rotated ellipsoid (h_σ = 1) and a linear slope, where ‖p_σ‖ grows past
// the threshold (h_σ = 0), and other rates than the defaults (as
// self-CMA-ES sets them) make both branches of line 10 and every term
// count.
func TestUpdateIsAlgorithm1(t *testing.T) {
	const n = 6
	ellipsoid := func(x []float64) float64 {
		var s float64
		for i := range x {
			var z float64
			for j := range x { // a fixed rotation mixes the coordinates
				z += math.Cos(float64(1+i*n+j)) * x[j]
			}
			s += math.Pow(1e3, float64(i)/(n-1)) * z * z
		}
		return s
	}
	slope := func(x []float64) float64 { return x[0] + 0.5*x[1] }
	seen := map[float64]int{}
	for _, tc := range []struct {
		name  string
		f     func([]float64) float64
		hyper *Hyper
	}{
		{"ellipsoid", ellipsoid, nil},
		{"ellipsoid, other rates", ellipsoid, &Hyper{C1: 0.05, CMu: 0.3, Cc: 0.6}},
		{"slope", slope, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: constVec(n, 1), Sigma0: 0.5, Lambda: 12, Seed: 5})
			p := e.Params()
			ps := make([]float64, n) // p_σ^0 = 0
			pc := make([]float64, n) // p_c^0 = 0
			for g := range 40 {
				if tc.hyper != nil {
					if err := e.SetHyper(*tc.hyper); err != nil {
						t.Fatal(err)
					}
				}
				X := e.Ask()
				f := make([]float64, len(X))
				for k, x := range X {
					f[k] = tc.f(x)
				}
				f[3] = f[7] // a tie, broken by index
				m, sigma, C, h := e.Mean(), e.Sigma(), e.C(), e.Hyper()
				wantM, wantPs, wantPc, wantHs, wantC, wantSigma := naiveUpdate(p, h, g, X, f, m, sigma, C, ps, pc)
				if _, err := e.Tell(f); err != nil {
					t.Fatal(err)
				}
				if why := e.Stopped(); why != nil {
					t.Fatalf("generation %d: stopped: %v", g, why)
				}
				st := e.LastStep()
				near := func(what string, got, want []float64, scale float64) {
					t.Helper()
					for i := range want {
						if math.Abs(got[i]-want[i]) > 1e-12*scale {
							t.Fatalf("generation %d: %s[%d] = %.17g, Algorithm 1 gives %.17g", g, what, i, got[i], want[i])
						}
					}
				}
				near("m", e.Mean(), wantM, 1+maxAbs(wantM))
				near("p_σ", st.PSigma, wantPs, 1+maxAbs(wantPs))
				if st.HSigma != wantHs {
					t.Fatalf("generation %d: h_σ = %v, Algorithm 1 gives %v", g, st.HSigma, wantHs)
				}
				seen[wantHs]++
				got := e.C()
				for i := range n {
					near("C row", got.RawSymmetric().Data[i*n+i:i*n+n], wantC.RawSymmetric().Data[i*n+i:i*n+n], maxAbs(wantC.RawSymmetric().Data))
				}
				if math.Abs(e.Sigma()-wantSigma) > 1e-12*wantSigma {
					t.Fatalf("generation %d: σ = %.17g, Algorithm 1 gives %.17g", g, e.Sigma(), wantSigma)
				}
				near("p_c (before the update)", st.PC, pc, 1+maxAbs(pc))
				ps, pc = wantPs, wantPc
			}
		})
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Errorf("h_σ took the values %v over the runs: both branches of line 10 must be checked", seen)
	}
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
