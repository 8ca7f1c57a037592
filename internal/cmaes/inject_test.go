package cmaes

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// shiftedSphere is the sphere with its optimum at opt.
func shiftedSphere(opt []float64) func([]float64) float64 {
	return func(x []float64) float64 {
		var s float64
		for i := range x {
			s += (x[i] - opt[i]) * (x[i] - opt[i])
		}
		return s
	}
}

func sameBitsRows(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
	})
}

// The queued points replace candidates 0, 1, ... of the next batch (not the
// pending one); they are handed out as given; the other candidates are the
// ones sampled without injection; Record.Injected counts them.
func TestInjectReplacesCandidatesOfTheNextBatch(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		cfg := Config{X0: constVec(4, 0.5), Sigma0: 0.3, Seed: 11}
		if bounded {
			cfg.Bounds = &Bounds{Lower: constVec(4, 0), Upper: constVec(4, 1)}
		}
		a, b := mustNew(t, cfg), mustNew(t, cfg)
		points := [][]float64{{0, 0.001, 0.5, 1}, {0.99, 0.02, 0.7, 0.3}}
		pending := a.Ask()
		if err := a.Inject(points, true); err != nil {
			t.Fatal(err)
		}
		if a.Injected() != 2 || a.InjectedInBatch() != 0 {
			t.Fatalf("bounded %v: Injected, InjectedInBatch = %d, %d, want 2, 0", bounded, a.Injected(), a.InjectedInBatch())
		}
		if !sameBitsRows(pending, a.Ask()) {
			t.Fatalf("bounded %v: Inject changed the pending batch", bounded)
		}
		// Values that rank the injected points last leave both runs' updates
		// equal, so the next batches differ only in the injected candidates.
		tellSame := func(e *ES) Record {
			v := make([]float64, e.Params().Lambda)
			for k := range v {
				v[k] = float64(k)
			}
			rec, err := e.Tell(v)
			if err != nil {
				t.Fatal(err)
			}
			return rec
		}
		if rec := tellSame(a); rec.Injected != 0 {
			t.Fatalf("bounded %v: record of the pending generation: Injected %d, want 0", bounded, rec.Injected)
		}
		tellSame(b)
		got, want := a.Ask(), b.Ask()
		if a.Injected() != 0 || a.InjectedInBatch() != 2 {
			t.Fatalf("bounded %v: after the tell Injected, InjectedInBatch = %d, %d, want 0, 2", bounded, a.Injected(), a.InjectedInBatch())
		}
		if !sameBitsRows(got[:2], points) {
			t.Fatalf("bounded %v: candidates 0, 1 = %v, want the injected %v", bounded, got[:2], points)
		}
		if !sameBitsRows(got[2:], want[2:]) {
			t.Fatalf("bounded %v: the sampled candidates differ from a run without injection", bounded)
		}
		g := a.Genotypes()
		for k, x := range points {
			for i, v := range x {
				if bounded {
					if y := transform1(g[k][i], 0, 1); math.Abs(y-v) > 1e-15 {
						t.Fatalf("genotype %v of point %v maps to %v", g[k], x, y)
					}
				} else if g[k][i] != v {
					t.Fatalf("genotype %v of point %v", g[k], x)
				}
			}
		}
		v := make([]float64, a.Params().Lambda)
		if rec, err := a.Tell(v); err != nil || rec.Injected != 2 {
			t.Fatalf("bounded %v: record of the injected generation: Injected %d (%v), want 2", bounded, rec.Injected, err)
		}
		if a.InjectedInBatch() != 0 {
			t.Fatalf("bounded %v: the batch after holds %d injected points", bounded, a.InjectedInBatch())
		}
	}
}

// Config.Inject puts points into the first batch; the rest of it is the
// batch sampled without them.
func TestConfigInjectWarmStart(t *testing.T) {
	cfg := Config{X0: constVec(3, 1), Sigma0: 0.5, Seed: 3}
	plain := mustNew(t, cfg).Ask()
	best := []float64{0.1, 0.2, 0.3}
	cfg.Inject = [][]float64{best}
	e := mustNew(t, cfg)
	best[0] = 99 // the caller's slice is not kept
	got := e.Ask()
	if !slices.Equal(got[0], []float64{0.1, 0.2, 0.3}) || !sameBitsRows(got[1:], plain[1:]) {
		t.Fatalf("first batch %v, want the injected point then %v", got, plain[1:])
	}
	if e.InjectedInBatch() != 1 || e.Config().Inject != nil {
		t.Fatalf("InjectedInBatch %d, Config().Inject %v", e.InjectedInBatch(), e.Config().Inject)
	}
	// Its step is clipped: a far point moves the mean by a bounded step.
	cfg.Inject = [][]float64{{1e6, -1e6, 1e6}}
	e = mustNew(t, cfg)
	v := make([]float64, e.Params().Lambda)
	for k := range v {
		v[k] = float64(k) // the injected point ranks first
	}
	if _, err := e.Tell(v); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.Mean() {
		if math.Abs(m-1) > 0.5*clipLength(3) {
			t.Fatalf("mean %v after a far injected point: the step was not clipped", e.Mean())
		}
	}

	bad := []Config{
		{X0: constVec(3, 1), Sigma0: 1, Inject: [][]float64{{1, 2}}},
		{X0: constVec(3, 1), Sigma0: 1, Lambda: 2, Inject: [][]float64{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}},
		{X0: constVec(3, 1), Sigma0: 1, Inject: [][]float64{{1, math.NaN(), 3}}},
		{X0: constVec(3, 1), Sigma0: 1, Bounds: &Bounds{Lower: constVec(3, 0), Upper: constVec(3, 2)}, Inject: [][]float64{{1, 2.5, 1}}},
	}
	for i, c := range bad {
		if _, err := New(c); !errors.Is(err, ErrInvalidInjection) {
			t.Errorf("bad config %d: %v, want ErrInvalidInjection", i, err)
		}
	}
}

// Bad points are refused whole: nothing is queued, the state is unchanged.
func TestInjectRejectsBadPoints(t *testing.T) {
	b := &Bounds{Lower: constVec(3, -1), Upper: constVec(3, 1)}
	e := mustNew(t, Config{X0: constVec(3, 0), Sigma0: 0.3, Seed: 1, Bounds: b})
	lambda := e.Params().Lambda
	if err := e.Inject([][]float64{{0, 0, 0}}, true); err != nil {
		t.Fatal(err)
	}
	before := stateBits(t, e)
	tooMany := make([][]float64, lambda) // one already waits
	for k := range tooMany {
		tooMany[k] = []float64{0, 0, 0}
	}
	for name, pts := range map[string][][]float64{
		"dimension":      {{0, 0, 0}, {0, 0}},
		"NaN":            {{0, math.NaN(), 0}},
		"+Inf":           {{math.Inf(1), 0, 0}},
		"-Inf":           {{0, 0, math.Inf(-1)}},
		"out of bounds":  {{0, 0, 1.0000001}},
		"more than λ":    tooMany,
		"below the box":  {{-2, 0, 0}},
		"empty point":    {{}},
		"nil point":      {nil},
		"second invalid": {{0.5, 0.5, 0.5}, {0.5, 0.5, 7}},
	} {
		if err := e.Inject(pts, true); !errors.Is(err, ErrInvalidInjection) {
			t.Errorf("%s: %v, want ErrInvalidInjection", name, err)
		}
	}
	if after := stateBits(t, e); !bytes.Equal(before, after) || e.Injected() != 1 {
		t.Fatal("a refused Inject changed the state")
	}
	// Up to λ may wait.
	if err := e.Inject(tooMany[1:], false); err != nil || e.Injected() != lambda {
		t.Fatalf("filling the queue to λ: %v, %d waiting", err, e.Injected())
	}
	if err := e.Inject([][]float64{{0, 0, 0}}, true); !errors.Is(err, ErrInvalidInjection) {
		t.Fatalf("λ + 1 waiting: %v", err)
	}
	e.StopNow()
	if err := e.Inject([][]float64{}, true); !errors.Is(err, ErrStopped) {
		t.Fatalf("inject into a stopped ES: %v, want ErrStopped", err)
	}
}

// mahalanobisChol is ‖C^{−1/2} y‖ computed apart from the ES: ‖L^{−1} y‖
// with C = L Lᵀ (gonum's Cholesky), which equals it for any square root.
func mahalanobisChol(t *testing.T, c *mat.SymDense, y []float64) float64 {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("C is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := mat.NewVecDense(len(y), nil)
	if err := z.SolveVec(&l, mat.NewVecDense(len(y), append([]float64(nil), y...))); err != nil {
		t.Fatal(err)
	}
	return mat.Norm(z, 2)
}

// The step of an injected point is clipped as in Hansen 2011 and pycma:
// y' = y · min(1, c_y/‖C^{−1/2} y‖), c_y = √n + 2n/(n + 2), computed here
// independently; and the whole update (m, p_σ, h_σ, p_c, C, σ) is Algorithm 1
// applied to the points m + σ y'. Without clip the raw step is used.
func TestInjectedStepIsClipped(t *testing.T) {
	const n = 6
	if cy := math.Sqrt(6) + 12.0/8; clipLength(n) != cy {
		t.Fatalf("c_y = %v, want √6 + 12/8 = %v", clipLength(n), cy)
	}
	e := mustNew(t, Config{X0: constVec(n, 1), Sigma0: 0.5, Lambda: 12, Seed: 5})
	for range 25 { // a C far from the identity
		step(t, e, ellipsoid)
	}
	r := rand.New(rand.NewPCG(9, 9))
	clippedSeen, keptSeen := 0, 0
	for g := range 30 {
		// The points are placed against the distribution that samples their
		// batch, the one after the pending generation's tell: a copy of the
		// ES, told the same values, gives it.
		X := e.Ask()
		f := make([]float64, len(X))
		for k, x := range X {
			f[k] = ellipsoid(x)
		}
		next, err := restoreCopy(t, e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := next.Tell(f); err != nil {
			t.Fatal(err)
		}
		m, sigma, C := next.Mean(), next.Sigma(), next.C()
		// Five points per generation: a far one, one just outside and one
		// just inside c_y (in the Mahalanobis norm), one at the mean, and a
		// far one not clipped.
		var pts [][]float64
		var clip []bool
		for k, scale := range []float64{1e3, 1.001, 0.999, 0, 3} {
			dir := make([]float64, n)
			for i := range dir {
				dir[i] = r.NormFloat64()
			}
			s := scale * clipLength(n) / mahalanobisChol(t, C, dir)
			x := make([]float64, n)
			for i := range x {
				x[i] = m[i] + sigma*s*dir[i]
			}
			pts = append(pts, x)
			clip = append(clip, k != 4)
		}
		if err := e.Inject(pts[:4], true); err != nil {
			t.Fatal(err)
		}
		if err := e.Inject(pts[4:], false); err != nil {
			t.Fatal(err)
		}
		// Tell the pending generation: the next batch takes the points.
		if _, err := e.Tell(f); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m, e.Mean()) || sigma != e.Sigma() {
			t.Fatalf("generation %d: the copy's distribution differs", g)
		}

		// The generation with the injected points.
		h, tt := e.Hyper(), e.s.T
		ps, pc := append([]float64(nil), e.s.PSigma...), append([]float64(nil), e.s.PC...)
		X = e.Ask()
		if !sameBitsRows(X[:5], pts) {
			t.Fatalf("generation %d: the injected points are not handed out as given", g)
		}
		f = make([]float64, len(X))
		for k, x := range X {
			f[k] = ellipsoid(x)
		}
		f[0] = -1 // the far point ranks first: its step enters every term
		f[4] = -0.5
		// The points as the update must see them.
		Xc := make([][]float64, len(X))
		for k, x := range X {
			Xc[k] = append([]float64(nil), x...)
			if k >= 5 || !clip[k] {
				continue
			}
			y := make([]float64, n)
			for i := range y {
				y[i] = (x[i] - m[i]) / sigma
			}
			norm := mahalanobisChol(t, C, y)
			fac := 1.0
			if norm > clipLength(n) {
				fac = clipLength(n) / norm
				clippedSeen++
			} else {
				keptSeen++
			}
			for i := range y {
				Xc[k][i] = m[i] + sigma*fac*y[i]
			}
		}
		wantM, wantPs, wantPc, wantHs, wantC, wantSigma := naiveUpdate(e.Params(), h, tt, Xc, f, m, sigma, C, ps, pc)
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
				if math.Abs(got[i]-want[i]) > 1e-11*scale {
					t.Fatalf("generation %d: %s[%d] = %.17g, want %.17g", g, what, i, got[i], want[i])
				}
			}
		}
		for k := range 5 {
			near("kept point", st.X.RawRowView(k), Xc[k], 1+maxAbs(Xc[k]))
		}
		if !slices.Equal(st.X.RawRowView(3), m) {
			t.Fatalf("generation %d: the mean, injected, moved", g)
		}
		if !slices.Equal(st.X.RawRowView(4), pts[4]) {
			t.Fatalf("generation %d: the point injected without clip was changed", g)
		}
		near("m", e.Mean(), wantM, 1+maxAbs(wantM))
		near("p_σ", st.PSigma, wantPs, 1+maxAbs(wantPs))
		if st.HSigma != wantHs {
			t.Fatalf("generation %d: h_σ = %v, want %v", g, st.HSigma, wantHs)
		}
		got := e.C()
		for i := range n {
			near("C row", got.RawSymmetric().Data[i*n+i:i*n+n], wantC.RawSymmetric().Data[i*n+i:i*n+n], maxAbs(wantC.RawSymmetric().Data))
		}
		if math.Abs(e.Sigma()-wantSigma) > 1e-11*wantSigma {
			t.Fatalf("generation %d: σ = %.17g, want %.17g", g, e.Sigma(), wantSigma)
		}
		near("p_c", e.s.PC, wantPc, 1+maxAbs(wantPc))
		checkInvariants(t, e)
	}
	if clippedSeen < 30 || keptSeen < 30 {
		t.Fatalf("%d steps clipped, %d kept: both cases must be checked", clippedSeen, keptSeen)
	}
}

// The replay of an update with injected points, with the rates it used,
// reproduces C and p_c (Algorithm 3's check).
func TestReplayWithInjectedPoints(t *testing.T) {
	e := mustNew(t, Config{X0: uniformX0(2, 8), Sigma0: 2, Lambda: 16, Seed: 6})
	r := rand.New(rand.NewPCG(4, 4))
	for g := range 40 {
		pts := [][]float64{make([]float64, 8), make([]float64, 8)}
		for i := range 8 {
			pts[0][i] = 1e4 * r.NormFloat64()
			pts[1][i] = 1 + 0.01*r.NormFloat64()
		}
		if err := e.Inject(pts, true); err != nil {
			t.Fatal(err)
		}
		used := e.Hyper()
		step(t, e, rosenbrock)
		st := e.LastStep()
		pc, c := make([]float64, 8), mat.NewSymDense(8, nil)
		st.Replay(used, pc, c)
		if !mat.Equal(c, e.C()) || !slices.Equal(pc, e.s.PC) {
			t.Fatalf("generation %d: the replay does not reproduce C and p_c", g)
		}
	}
}

// A restarted run's first batch takes the waiting points.
func TestInjectAcrossIPOPRestart(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 2), Sigma0: 1, Seed: 2, Restarts: Restarts{IPOP: true, Max: 2},
		Termination: Termination{TolFun: 1e-3}})
	p := []float64{0.25, 0.5, 0.75}
	for g := 0; ; g++ {
		if g > 5000 || e.Stopped() != nil {
			t.Fatal("no restart")
		}
		if e.Injected() == 0 {
			if err := e.Inject([][]float64{p}, true); err != nil {
				t.Fatal(err)
			}
		}
		if rec := step(t, e, sphere); rec.Restarted {
			break
		}
	}
	if got := e.Ask(); e.InjectedInBatch() != 1 || !slices.Equal(got[0], p) || len(got) != 2*DefaultLambda(3) {
		t.Fatalf("first batch of the new run: %d injected, %v, λ %d", e.InjectedInBatch(), got[0], len(got))
	}
}

// median returns the median of v (sorted in place).
func median(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Injecting the optimum into every batch of a 10-D sphere run about halves
// the evaluations until the distribution itself samples a point with
// f ≤ 1e-8 (Hansen 2011 reports twice as fast with injected solutions of
// very good quality). The injected candidates are left out of that test:
// the optimum, evaluated, reaches the target at once and says nothing. The
// optimum lies 5√10 ≈ 16 away from x0 with σ0 = 1, so its steps are clipped
// at first.
func TestInjectingTheOptimumSpeedsUpTheSphere(t *testing.T) {
	const n = 10
	opt := constVec(n, 5)
	f := shiftedSphere(opt)
	run := func(seed uint64, inject bool) float64 {
		e := mustNew(t, Config{X0: make([]float64, n), Sigma0: 1, Seed: seed, Termination: Termination{MaxEvaluations: 100000}})
		for e.Stopped() == nil {
			if inject {
				if err := e.Inject([][]float64{opt}, true); err != nil {
					t.Fatal(err)
				}
			}
			X := e.Ask()
			v := make([]float64, len(X))
			for k, x := range X {
				v[k] = f(x)
				if k >= e.InjectedInBatch() && v[k] <= 1e-8 {
					return float64(e.Evaluations() + k + 1)
				}
			}
			if _, err := e.Tell(v); err != nil {
				t.Fatal(err)
			}
		}
		t.Fatalf("seed %d, inject %v: stopped by %v", seed, inject, e.Stopped())
		return 0
	}
	var with, without []float64
	for seed := range uint64(11) {
		with = append(with, run(seed, true))
		without = append(without, run(seed, false))
	}
	mw, mo := median(with), median(without)
	t.Logf("evaluations to f ≤ 1e-8, median of 11: %v with the optimum injected, %v without", mw, mo)
	if mw > 0.65*mo {
		t.Fatalf("median %v evaluations with the optimum injected, %v without: want at most 65 %%", mw, mo)
	}
}

// inverse1 is the inverse of transform1 on [lo, up], into [lo − a_l, up + a_u].
func TestInverseTransform(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 10000 {
		lo := -5 + 10*r.Float64()
		up := lo + math.Exp(-5+10*r.Float64())
		y := lo + (up-lo)*r.Float64()
		switch r.IntN(4) {
		case 0:
			y = lo
		case 1:
			y = up
		}
		x := inverse1(y, lo, up)
		al, au := margins(lo, up)
		if x < lo-al || x > up+au {
			t.Fatalf("inverse1(%v) on [%v, %v] = %v outside [l − a_l, u + a_u]", y, lo, up, x)
		}
		if back := transform1(x, lo, up); math.Abs(back-y) > 1e-12*(up-lo+math.Abs(y)) {
			t.Fatalf("transform1(inverse1(%v)) = %v on [%v, %v]", y, back, lo, up)
		}
		if y > lo+al && y < up-au && x != y {
			t.Fatalf("inverse1(%v) = %v inside the identity part", y, x)
		}
	}
}
