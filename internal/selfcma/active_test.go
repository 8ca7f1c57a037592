package selfcma

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

// activeCReference is the replayed C' of an active update computed the
// obvious way from Hansen's tutorial (arXiv:1604.00772v2, eq. 47): the
// weights of p with the negative ones scaled for θ, each negative weight
// times n/‖C^{−1/2} y_i‖² with C^{−1/2} from an eigendecomposition of the
// kept C, injected points (the first injected rows) given no negative
// weight.
func activeCReference(t *testing.T, theta cmaes.Hyper, prev *cmaes.Step, p cmaes.Params, injected int) (*mat.SymDense, []float64) {
	t.Helper()
	n := p.N
	pc := make([]float64, n)
	for i := range n {
		pc[i] = (1-theta.Cc)*prev.PC[i] + prev.HSigma*math.Sqrt(theta.Cc*(2-theta.Cc)*prev.MuW)*prev.Yw[i]
	}
	var eig mat.EigenSym
	if !eig.Factorize(prev.C, true) {
		t.Fatal("eigendecomposition failed")
	}
	var b mat.Dense
	eig.VectorsTo(&b)
	vals := eig.Values(nil)
	alpha := p.AlphaNeg(theta)
	sumW := 1.0
	c := mat.NewSymDense(n, nil)
	y := make([]float64, n)
	for r, k := range prev.Order {
		var w float64
		switch {
		case r < p.Mu:
			w = p.Weights[r]
		case k >= injected:
			w = alpha * p.WeightsNeg[r-p.Mu]
			sumW += w
		}
		x := prev.X.RawRowView(k)
		for i := range n {
			y[i] = (x[i] - prev.Mean[i]) / prev.Sigma
		}
		if w < 0 {
			var norm2 float64
			for a := range n {
				var s float64
				for i := range n {
					s += b.At(i, a) * y[i]
				}
				norm2 += s * s / vals[a]
			}
			w *= float64(n) / norm2
		}
		for i := range n {
			for j := i; j < n; j++ {
				c.SetSym(i, j, c.At(i, j)+theta.CMu*w*y[i]*y[j])
			}
		}
	}
	delta := (1 - prev.HSigma) * theta.Cc * (2 - theta.Cc)
	a := 1 + theta.C1*delta - theta.C1 - theta.CMu*sumW
	for i := range n {
		for j := i; j < n; j++ {
			c.SetSym(i, j, c.At(i, j)+a*prev.C.At(i, j)+theta.C1*pc[i]*pc[j])
		}
	}
	return c, pc
}

// hOf is Algorithm 3's h for a given C': the mean rank, largest
// Mahalanobis distance first, of the μ best points of cur.
func hOf(t *testing.T, c *mat.SymDense, cur *cmaes.Step, mu int) float64 {
	t.Helper()
	var chol mat.Cholesky
	if !chol.Factorize(c) {
		t.Fatal("C' not positive definite")
	}
	lambda, n := cur.X.Dims()
	d := make([]float64, lambda)
	v := mat.NewVecDense(n, nil)
	sol := mat.NewVecDense(n, nil)
	for k := range lambda {
		for i := range n {
			v.SetVec(i, cur.X.At(k, i)-cur.Mean[i])
		}
		if err := chol.SolveVecTo(sol, v); err != nil {
			t.Fatal(err)
		}
		d[k] = mat.Dot(v, sol)
	}
	idx := make([]int, lambda)
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, b int) bool { return d[idx[a]] > d[idx[b]] })
	rank := make([]int, lambda)
	for r, k := range idx {
		rank[k] = r + 1
	}
	var h float64
	for _, k := range cur.Order[:mu] {
		h += float64(rank[k])
	}
	return h / float64(mu)
}

// With active CMA-ES, h_t replays the active update (negative weights
// scaled for θ): its C' is the tutorial's to rounding, every θ of the
// feasible region gives a positive definite C', and h is that C' 's mean
// rank (equal but for near ties of the distances).
func TestActiveH(t *testing.T) {
	for _, n := range []int{3, 8} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(uint64(n), n), Sigma0: 2, Lambda: 24, Seed: uint64(n), Active: true}})
		p := s.Primary().Params()
		prev := new(cmaes.Step)
		r := rand.New(rand.NewPCG(uint64(n), 9))
		ws := &workspace{}
		checked, same, leftOut := 0, 0, 0
		for g := range 40 {
			if g%4 == 1 {
				if err := s.Inject([][]float64{slices.Repeat([]float64{3}, n)}, true); err != nil {
					t.Fatal(err)
				}
			}
			step(t, s, rosenbrock)
			cur := s.Primary().LastStep()
			if !cur.Active {
				t.Fatal("the primary's step is not active")
			}
			if g > 0 {
				for range 20 {
					// Anywhere in the feasible region, its corners included.
					u := []float64{r.Float64(), r.Float64(), r.Float64()}
					if u[0]+u[1] > 1 {
						u[0], u[1] = 1-u[0], 1-u[1]
					}
					theta := cmaes.Hyper{C1: Scale * u[0], CMu: Scale * u[1], Cc: Scale * u[2]}
					got, ok := ws.h(theta, prev, cur, p.Mu)
					if !ok {
						t.Fatalf("n=%d g=%d: C' not positive definite for θ %+v", n, g, theta)
					}
					want, _ := activeCReference(t, theta, prev, p, prevInjected(prev))
					pc := make([]float64, n)
					c := mat.NewSymDense(n, nil)
					prev.Replay(theta, pc, c)
					for i := range n {
						for j := i; j < n; j++ {
							if math.Abs(c.At(i, j)-want.At(i, j)) > 1e-12*math.Sqrt(want.At(i, i)*want.At(j, j)) {
								t.Fatalf("n=%d g=%d θ %+v: C'[%d,%d] = %v, reference %v", n, g, theta, i, j, c.At(i, j), want.At(i, j))
							}
						}
					}
					if ref := hOf(t, want, cur, p.Mu); ref == got {
						same++
					} else if math.Abs(ref-got) > 2.0/float64(p.Mu) {
						t.Fatalf("n=%d g=%d θ %+v: h = %v, reference %v", n, g, theta, got, ref)
					}
					checked++
				}
			}
			if prevInjected(cur) > 0 {
				leftOut++
			}
			prev.CopyFrom(cur)
		}
		if leftOut == 0 {
			t.Fatalf("n=%d: no injected point among the worst", n)
		}
		if same < checked*95/100 {
			t.Fatalf("n=%d: h equals the reference in %d of %d cases", n, same, checked)
		}
	}
}

// prevInjected returns how many of prev's first candidates (1 in these
// tests, or none) were injected and left out of its negative update:
// recognized by the sum of the negative weights used.
func prevInjected(prev *cmaes.Step) int {
	if prev.WNegSum > -1+1e-12 {
		return 1
	}
	return 0
}

// Replaying the active update t−1 → t with the θ it used reproduces C^t and
// p_c^t bit for bit (the primary's update calls the same replay).
func TestActiveReplayReproducesState(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(3, 10), Sigma0: 2, Lambda: 100, Seed: 3, Active: true}})
	prev := new(cmaes.Step)
	for g := range 80 {
		step(t, s, rosenbrock)
		cur := s.Primary().LastStep()
		if g > 0 {
			pc := make([]float64, 10)
			c := mat.NewSymDense(10, nil)
			prev.Replay(prev.Hyper, pc, c)
			if !sameUpperBits(c, cur.C) || !slices.Equal(pc, cur.PC) {
				t.Fatalf("g=%d: the replay with the rates used differs from C^t, p_c^t", g)
			}
		}
		prev.CopyFrom(cur)
	}
}

// An active self-CMA-ES restored from its State continues bit for bit.
func TestActiveSnapshotRestore(t *testing.T) {
	cfg := Config{CMA: cmaes.Config{X0: uniformX0(7, 6), Sigma0: 2, Lambda: 20, Seed: 7, Active: true}}
	for _, at := range []int{0, 1, 2, 17} {
		a := mustNew(t, cfg)
		for g := range at {
			if g%5 == 3 {
				if err := a.Inject([][]float64{slices.Repeat([]float64{1}, 6)}, true); err != nil {
					t.Fatal(err)
				}
			}
			step(t, a, rosenbrock)
		}
		b, err := restoreCopy(t, a)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Primary().Params().Active {
			t.Fatal("decoded as passive")
		}
		for g := range 40 {
			if !slices.EqualFunc(a.Ask(), b.Ask(), slices.Equal) {
				t.Fatalf("snapshot at %d: generation +%d differs", at, g)
			}
			ra, rb := step(t, a, rosenbrock), step(t, b, rosenbrock)
			if ra.AuxMean != rb.AuxMean || ra.Hyper != rb.Hyper {
				t.Fatalf("snapshot at %d: generation +%d: records differ", at, g)
			}
		}
		ba, bb := stateBits(t, a), stateBits(t, b)
		if !bytes.Equal(ba, bb) {
			t.Fatalf("snapshot at %d: states differ", at)
		}
	}
}
