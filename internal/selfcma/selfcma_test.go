package selfcma

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/testfn"
	"gonum.org/v1/gonum/mat"
)

// The shared test functions, under the short names the tests use.
var (
	sphere     = testfn.Sphere
	rosenbrock = testfn.Rosenbrock
	uniformX0  = testfn.UniformX0
)

// mustNew is New, with the paper's Algorithm 2 in every run (EveryLambda,
// AdaptRestarts) when cfg names no MinLambda: the tests of the auxiliary's
// machinery run it at small λ and through restarts, where the default gate
// would close (gate_test.go tests the gate).
func mustNew(tb testing.TB, cfg Config) *ES {
	tb.Helper()
	if cfg.MinLambda == 0 {
		cfg.MinLambda, cfg.AdaptRestarts = EveryLambda, true
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func step(tb testing.TB, s *ES, f func([]float64) float64) Record {
	tb.Helper()
	X := s.Ask()
	v := make([]float64, len(X))
	for k, x := range X {
		v[k] = f(x)
	}
	rec, err := s.Tell(v)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// hReference is Algorithm 3 computed the slow, obvious way: C_μ rebuilt
// from the points of generation t−1, C' formed naively, C'^{−1/2} from an
// eigendecomposition, explicit Mahalanobis distances, ranks by sorting.
func hReference(t *testing.T, theta cmaes.Hyper, prev, cur *cmaes.Step, p cmaes.Params) float64 {
	t.Helper()
	n := p.N
	pc := make([]float64, n)
	for i := range n {
		pc[i] = (1-theta.Cc)*prev.PC[i] + prev.HSigma*math.Sqrt(theta.Cc*(2-theta.Cc)*prev.MuW)*prev.Yw[i]
	}
	c := mat.NewSymDense(n, nil)
	for i := range n {
		for j := range n {
			var cmu float64
			for k, w := range p.Weights {
				x := prev.X.RawRowView(prev.Order[k])
				cmu += w * (x[i] - prev.Mean[i]) / prev.Sigma * (x[j] - prev.Mean[j]) / prev.Sigma
			}
			c.SetSym(i, j, (1-theta.C1-theta.CMu)*prev.C.At(i, j)+theta.C1*pc[i]*pc[j]+theta.CMu*cmu)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(c, true) {
		t.Fatal("eigendecomposition failed")
	}
	var b mat.Dense
	eig.VectorsTo(&b)
	vals := eig.Values(nil)
	lambda := len(cur.Order)
	d := make([]float64, lambda)
	for k := range lambda {
		x := cur.X.RawRowView(k)
		// ‖D^{−1} Bᵀ (x − m)‖ = ‖C'^{−1/2}(x − m)‖.
		for a := range n {
			var s float64
			for i := range n {
				s += b.At(i, a) * (x[i] - cur.Mean[i])
			}
			d[k] += s * s / vals[a]
		}
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
	for _, k := range cur.Order[:p.Mu] {
		h += float64(rank[k])
	}
	return h / float64(p.Mu)
}

func TestHEqualsReference(t *testing.T) {
	for _, n := range []int{2, 5, 12} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(uint64(n), n), Sigma0: 2, Lambda: 16, Seed: uint64(n)}})
		prev := new(cmaes.Step)
		r := rand.New(rand.NewPCG(uint64(n), 7))
		ws := &workspace{}
		checked := 0
		for g := range 30 {
			step(t, s, rosenbrock)
			cur := s.Primary().LastStep()
			if g > 0 {
				for range 20 {
					u := []float64{r.Float64() * 0.5, r.Float64() * 0.5, r.Float64()}
					theta := cmaes.Hyper{C1: Scale * u[0], CMu: Scale * u[1], Cc: Scale * u[2]}
					got, ok := ws.h(theta, prev, cur, s.Primary().Params().Mu)
					if !ok {
						t.Fatalf("n=%d g=%d: C' not positive definite for θ %+v", n, g, theta)
					}
					if want := hReference(t, theta, prev, cur, s.Primary().Params()); got != want {
						t.Fatalf("n=%d g=%d θ %+v: h = %v, reference %v", n, g, theta, got, want)
					}
					checked++
				}
			}
			prev.CopyFrom(cur)
		}
		if checked == 0 {
			t.Fatal("nothing checked")
		}
	}
}

// Replaying the update t−1 → t with the θ it used reproduces C^t and p_c^t.
func TestReplayReproducesState(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(3, 10), Sigma0: 2, Lambda: 100, Seed: 3}})
	prev := new(cmaes.Step)
	for g := range 60 {
		step(t, s, rosenbrock)
		cur := s.Primary().LastStep()
		if g > 0 {
			pc := make([]float64, 10)
			c := mat.NewSymDense(10, nil)
			prev.Replay(prev.Hyper, pc, c)
			for i := range 10 {
				if math.Abs(pc[i]-cur.PC[i]) > 1e-12*math.Max(1, math.Abs(cur.PC[i])) {
					t.Fatalf("g=%d: p_c[%d] = %v, want %v", g, i, pc[i], cur.PC[i])
				}
				for j := range 10 {
					if w := cur.C.At(i, j); math.Abs(c.At(i, j)-w) > 1e-12*math.Abs(cur.C.At(i, i)) {
						t.Fatalf("g=%d: C[%d][%d] = %v, want %v", g, i, j, c.At(i, j), w)
					}
				}
			}
		}
		prev.CopyFrom(cur)
	}
}

func TestHyperparametersStayFeasible(t *testing.T) {
	for _, init := range []string{InitDefault, InitUniform} {
		s := mustNew(t, Config{Init: init, CMA: cmaes.Config{X0: uniformX0(5, 10), Sigma0: 2, Lambda: 100, Seed: 5}})
		def := s.Primary().Params().Hyper()
		u0, sig := s.AuxMean()
		if sig != AuxSigma0 {
			t.Fatalf("%s: auxiliary σ0 = %v", init, sig)
		}
		if init == InitDefault && (u0[0] != def.C1/Scale || u0[1] != def.CMu/Scale || u0[2] != def.Cc/Scale) {
			t.Fatalf("default init: auxiliary mean %v, want defaults/0.9", u0)
		}
		if init == InitUniform && (infeasibility([]float64{u0[0], 0, 0}) > 0 || u0[1] < 0 || u0[1] > 1 || u0[2] < 0 || u0[2] > 1) {
			t.Fatalf("uniform init: auxiliary mean %v outside [0, 1]³", u0)
		}
		changed := false
		for range 150 {
			rec := step(t, s, rosenbrock)
			h := s.Primary().Hyper()
			if !h.Valid() || h.C1+h.CMu > Scale+1e-15 {
				t.Fatalf("%s: θ %+v infeasible", init, h)
			}
			want := def
			if rec.AuxFeasible {
				want = cmaes.Hyper{C1: Scale * rec.AuxMean[0], CMu: Scale * rec.AuxMean[1], Cc: Scale * rec.AuxMean[2]}
			}
			if h != want {
				t.Fatalf("%s: θ %+v, want %+v (aux mean %v, feasible %v)", init, h, want, rec.AuxMean, rec.AuxFeasible)
			}
			changed = changed || h != def
		}
		if !changed {
			t.Fatalf("%s: θ never left the defaults", init)
		}
	}
}

func TestObjectivePenalty(t *testing.T) {
	for _, u := range [][]float64{{-0.1, 0.2, 0.3}, {0.2, 0.2, 1.1}, {0.6, 0.5, 0.5}} {
		if v := objective(u, nil, nil, 1, nil); v < penaltyFactor*1e-3 || v > penaltyFactor*1 {
			t.Errorf("objective(%v) = %g, want a penalty", u, v)
		}
	}
	// Larger violations get larger penalties.
	if objective([]float64{-0.2, 0, 0}, nil, nil, 1, nil) <= objective([]float64{-0.1, 0, 0}, nil, nil, 1, nil) {
		t.Error("penalty does not grow with the violation")
	}
}

// runTrace runs n generations and returns the concatenated bits of every
// batch and θ.
func runTrace(t *testing.T, cfg Config, gens int) []uint64 {
	s := mustNew(t, cfg)
	var out []uint64
	for range gens {
		for _, x := range s.Ask() {
			for _, v := range x {
				out = append(out, math.Float64bits(v))
			}
		}
		step(t, s, rosenbrock)
		h := s.Primary().Hyper()
		out = append(out, math.Float64bits(h.C1), math.Float64bits(h.CMu), math.Float64bits(h.Cc))
	}
	return out
}

func TestIndependentOfGOMAXPROCS(t *testing.T) {
	cfg := Config{CMA: cmaes.Config{X0: uniformX0(6, 8), Sigma0: 2, Lambda: 30, Seed: 6}}
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	one := runTrace(t, cfg, 60)
	runtime.GOMAXPROCS(4)
	four := runTrace(t, cfg, 60)
	if !slices.Equal(one, four) {
		t.Fatal("GOMAXPROCS 1 and 4 give different runs")
	}
}

func TestSnapshotRestoreContinuesBitForBit(t *testing.T) {
	cfgs := map[string]Config{
		"default": {CMA: cmaes.Config{X0: uniformX0(7, 6), Sigma0: 2, Lambda: 20, Seed: 7}},
		"uniform, ipop, bounds": {Init: InitUniform, CMA: cmaes.Config{X0: make([]float64, 6), Sigma0: 1, Seed: 7,
			Bounds:   &cmaes.Bounds{Lower: []float64{-2, -2, -2, -2, -2, -2}, Upper: []float64{3, 3, 3, 3, 3, 3}},
			Restarts: cmaes.Restarts{IPOP: true, Max: 4}, Termination: cmaes.Termination{TolX: 0.05}}},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			restarted := false
			for _, at := range []int{0, 1, 2, 17, 55} {
				a := mustNew(t, cfg)
				for range at {
					step(t, a, rosenbrock)
				}
				b, err := restoreCopy(t, a)
				if err != nil {
					t.Fatal(err)
				}
				for g := range 50 {
					if !slices.EqualFunc(a.Ask(), b.Ask(), slices.Equal) {
						t.Fatalf("snapshot at %d: generation +%d differs", at, g)
					}
					if a.Primary().Stopped() != nil {
						break
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
				restarted = restarted || a.Primary().Run() > 0
			}
			if cfg.CMA.Restarts.IPOP && !restarted {
				t.Fatal("the IPOP case never restarted")
			}
		})
	}
}

// The paper's claim on the simplest case: self-CMA-ES needs fewer
// evaluations than CMA-ES on the 10-D sphere with λ = 100 (docs/algorithm.md
// §4: 6708 against 7876, medians of 15 runs).
func TestFasterThanCMAOnSphere(t *testing.T) {
	var selfEvals, cmaEvals []int
	for seed := range uint64(7) {
		cfg := cmaes.Config{X0: uniformX0(seed, 10), Sigma0: 2, Lambda: 100, Seed: seed,
			Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-8, MaxEvaluations: 50000}}
		s := mustNew(t, Config{CMA: cfg})
		for s.Primary().Stopped() == nil {
			step(t, s, sphere)
		}
		c, _ := cmaes.New(cfg)
		for c.Stopped() == nil {
			X := c.Ask()
			v := make([]float64, len(X))
			for k, x := range X {
				v[k] = sphere(x)
			}
			if _, err := c.Tell(v); err != nil {
				t.Fatal(err)
			}
		}
		for _, es := range []interface{ Best() (cmaes.Best, bool) }{s.Primary(), c} {
			if b, _ := es.Best(); b.F > 1e-8 {
				t.Fatalf("seed %d: not converged, f = %g", seed, b.F)
			}
		}
		selfEvals, cmaEvals = append(selfEvals, s.Primary().Evaluations()), append(cmaEvals, c.Evaluations())
	}
	slices.Sort(selfEvals)
	slices.Sort(cmaEvals)
	ms, mc := selfEvals[len(selfEvals)/2], cmaEvals[len(cmaEvals)/2]
	t.Logf("median evaluations: self-CMA-ES %d %v, CMA-ES %d %v", ms, selfEvals, mc, cmaEvals)
	if float64(mc)/float64(ms) < 1.08 {
		t.Fatalf("CMA / self = %.3f, want at least 1.08", float64(mc)/float64(ms))
	}
}

func TestRestartRestartsAux(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: []float64{3, 3, 3}, Sigma0: 1, Seed: 2,
		Restarts: cmaes.Restarts{IPOP: true, Max: 2}, Termination: cmaes.Termination{TolX: 1e-3}}})
	for s.Primary().Stopped() == nil {
		rec := step(t, s, sphere)
		if rec.Restarted {
			u, sig := s.AuxMean()
			def := s.Primary().Params().Hyper()
			if sig != AuxSigma0 || u[0] != def.C1/Scale || s.hasPrev {
				t.Fatalf("after restart: aux mean %v σ %v hasPrev %v, want a fresh auxiliary at the new defaults", u, sig, s.hasPrev)
			}
		}
	}
	if s.Primary().Run() != 2 {
		t.Fatalf("runs %d, want 2", s.Primary().Run())
	}
}

// The default population size is CMA-ES's, below the default gate: a
// self-CMA-ES with neither λ nor MinLambda set is CMA-ES and solves the 10-D
// sphere in CMA-ES's evaluations (gate.go; at λ = 10 with the auxiliary
// running it does not: see the package doc).
func TestDefaultLambda(t *testing.T) {
	for _, n := range []int{1, 2, 10, 100, 1 << 20} {
		if got, want := DefaultLambda(n), cmaes.DefaultLambda(n); got != want {
			t.Fatalf("DefaultLambda(%d) = %d, want %d", n, got, want)
		}
	}
	for seed := range uint64(3) {
		cfg := cmaes.Config{X0: uniformX0(seed, 10), Sigma0: 2, Seed: seed,
			Termination: cmaes.Termination{HasTarget: true, TargetFitness: 1e-8, MaxEvaluations: 30000}}
		s, err := New(Config{CMA: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if s.Primary().Params().Lambda != 10 || s.Adapting() {
			t.Fatalf("λ = %d, adapting %v; want 10, false", s.Primary().Params().Lambda, s.Adapting())
		}
		for s.Primary().Stopped() == nil {
			step(t, s, sphere)
		}
		plain, _ := cmaes.New(cfg)
		for plain.Stopped() == nil {
			X := plain.Ask()
			v := make([]float64, len(X))
			for k, x := range X {
				v[k] = sphere(x)
			}
			if _, err := plain.Tell(v); err != nil {
				t.Fatal(err)
			}
		}
		if b, _ := s.Primary().Best(); b.F > 1e-8 || s.Primary().Evaluations() != plain.Evaluations() {
			t.Fatalf("seed %d: stopped by %v at f = %g after %d evaluations, CMA-ES after %d",
				seed, s.Primary().Stopped(), b.F, s.Primary().Evaluations(), plain.Evaluations())
		}
	}
}

// StopNow stops the primary at the caller's request; the state keeps it.
func TestStopNow(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(4, 3), Sigma0: 1, Lambda: 20, Seed: 3}})
	for range 3 {
		step(t, s, rosenbrock)
	}
	s.StopNow()
	if why := s.Primary().Stopped(); len(why) != 1 || why[0].Name != cmaes.StopRequested || why[0].Value != 3 {
		t.Fatalf("after StopNow: %v", why)
	}
	if _, err := s.Tell(make([]float64, 20)); err == nil {
		t.Fatal("Tell after StopNow succeeded")
	}
	back, err := restoreCopy(t, s)
	if err != nil || len(back.Primary().Stopped()) != 1 || back.Primary().Stopped()[0].Name != cmaes.StopRequested {
		t.Fatalf("restored: %v, %v", back, err)
	}
}
