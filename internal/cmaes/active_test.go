package cmaes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The parameters of active CMA-ES against pycma 4.4.0 (CMA_active=True, its
// default), printed by
//
//	PYTHONPATH=vendor python3 -c 'import cma
//	es = cma.CMAEvolutionStrategy(n*[1.0], 1, {"popsize": lam, "verbose": -9})
//	es.adapt_sigma.initialize(es); sp = es.sp; w = list(sp.weights); mu = sp.weights.mu
//	print(sp.weights.mueff, es.sm.parameters(mueff=sp.weights.mueff, lam=lam)["c1"],
//	      es.sm.parameters()["cmu"], sp.cc, es.adapt_sigma.cs, es.adapt_sigma.damps,
//	      w[0], w[mu-1], w[mu], w[-1], sum(w[mu:]))'
//
// (n = 1 is left out: pycma mirrors samples for λ < 6, which changes its d_σ.)
func TestNewParamsActive(t *testing.T) {
	tests := []struct {
		n, lambda, mu                    int
		muW, c1, cMu, cc, cSigma, dSigma float64
		w1, wMu, wMu1, wLast, sumNeg     float64 // w_1, w_μ, w_{μ+1}, w_λ, Σ w^- as the update uses them with the default rates
	}{
		{2, 6, 3, 2.0286114646100617, 0.1548153998964136, 0.08559277942666424, 0.6245545390268264, 0.5731731629916698, 1.5731731629916696, 0.6370425712412168, 0.07838717132075033, -0.28638378259655295, -1.1559817781589212, -2.207323654840602},
		{3, 7, 3, 2.2548150822016044, 0.09640963257927214, 0.0695884692329107, 0.5588013228860189, 0.5154343301251543, 1.5154343301251543, 0.5856451065097651, 0.12153234023535246, 0.0, -1.0636566969842556, -2.258447524533352},
		{10, 10, 5, 3.1672992814107017, 0.015283824524751714, 0.02355177665041747, 0.29499038303562225, 0.3196142529106334, 1.3196142529106334, 0.45627264690340597, 0.025509591835974777, -0.08001260758087224, -0.5497499176973853, -1.648945714440647},
		{10, 100, 50, 26.96665506465105, 0.012931871565203196, 0.2954229629087601, 0.3453076473556917, 0.7247705623048482, 2.797622661496977, 0.0823582365646732, 0.00020894882041167014, -0.00012036892626497329, -0.008346853112113736, -0.23412031303052355},
		{20, 13, 6, 3.9808691729539927, 0.0043699525897598675, 0.010172819274262697, 0.17210543895845654, 0.22167073768510395, 1.221670737685104, 0.3818347890600878, 0.03024810387256846, 0.0, -0.376332177716596, -1.4295714365845344},
		{100, 17, 8, 5.096188878610173, 0.000194802926953566, 0.0006806381419706107, 0.03891342005784185, 0.06564698489582318, 1.0656469848958232, 0.3150958752676225, 0.01689083086664692, 0.0, -0.26172644923877597, -1.2862063039687501},
		{100, 100, 50, 26.96665506465105, 0.0001943888368570924, 0.004842070487616389, 0.04084268020448755, 0.2228775915656349, 1.222877591565635, 0.0823582365646732, 0.00020894882041167014, -0.0005347730513646248, -0.03708325933082849, -1.0401458089786677},
		// c_μ = 1 − c_1: α_posdef^- = 0, no negative update.
		{2, 100, 50, 26.96665506465105, 0.05283086940947183, 0.9471691305905282, 0.5303336810494997, 0.9061522078574489, 5.790216003642473, 0.0823582365646732, 0.00020894882041167014, 0, 0, 0},
	}
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-13*math.Abs(want)+1e-17 }
	for _, tt := range tests {
		p, err := NewParamsActive(tt.n, tt.lambda, true)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Active || p.Lambda != tt.lambda || p.Mu != tt.mu || len(p.Weights) != tt.mu || len(p.WeightsNeg) != tt.lambda-tt.mu {
			t.Fatalf("n=%d λ=%d: active %v, λ %d, μ %d, %d and %d weights", tt.n, tt.lambda, p.Active, p.Lambda, p.Mu, len(p.Weights), len(p.WeightsNeg))
		}
		alpha := p.AlphaNeg(p.Hyper())
		var sumPos, sumNeg, sumUnit float64
		for _, w := range p.Weights {
			sumPos += w
		}
		for i, w := range p.WeightsNeg {
			sumUnit += w
			sumNeg += alpha * w
			if w > 0 || i > 0 && !(w < p.WeightsNeg[i-1]) {
				t.Errorf("n=%d λ=%d: negative weights not decreasing and ≤ 0 at %d", tt.n, tt.lambda, i)
			}
		}
		if math.Abs(sumPos-1) > 1e-15 || math.Abs(sumUnit+1) > 1e-15 {
			t.Errorf("n=%d λ=%d: Σw^+ = %v, Σw°^- = %v, want 1 and −1", tt.n, tt.lambda, sumPos, sumUnit)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"μ_w", p.MuW, tt.muW}, {"c_1", p.C1, tt.c1}, {"c_μ", p.CMu, tt.cMu}, {"c_c", p.Cc, tt.cc},
			{"c_σ", p.CSigma, tt.cSigma}, {"d_σ", p.DSigma, tt.dSigma},
			{"w_1", p.Weights[0], tt.w1}, {"w_μ", p.Weights[p.Mu-1], tt.wMu},
			{"w_μ+1", alpha * p.WeightsNeg[0], tt.wMu1}, {"w_λ", alpha * p.WeightsNeg[len(p.WeightsNeg)-1], tt.wLast},
			{"Σw^-", sumNeg, tt.sumNeg},
		} {
			if !close(c.got, c.want) {
				t.Errorf("n=%d λ=%d: %s = %.17g, want %.17g (pycma)", tt.n, tt.lambda, c.name, c.got, c.want)
			}
		}
		// The tutorial's three bounds on Σ|w^-| (eqs. 50–53).
		h := p.Hyper()
		for _, bound := range []float64{1 + h.C1/h.CMu, 1 + 2*p.MuWNeg/(p.MuW+2), (1 - h.C1 - h.CMu) / (float64(tt.n) * h.CMu)} {
			if alpha > bound*(1+1e-15) {
				t.Errorf("n=%d λ=%d: Σ|w^-| = %v above the bound %v", tt.n, tt.lambda, alpha, bound)
			}
		}
	}
}

// The passive parameters are those of NewParams, whatever NewParamsActive
// adds.
func TestNewParamsActiveFalseIsNewParams(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10, 40} {
		for _, lambda := range []int{0, 7, 100} {
			a, _ := NewParams(n, lambda)
			b, _ := NewParamsActive(n, lambda, false)
			if !slices.Equal(a.Weights, b.Weights) || b.Active || b.WeightsNeg != nil ||
				a.MuW != b.MuW || a.C1 != b.C1 || a.CMu != b.CMu || a.Cc != b.Cc || a.CSigma != b.CSigma || a.DSigma != b.DSigma ||
				b.AlphaNeg(b.Hyper()) != 0 {
				t.Fatalf("n=%d λ=%d: NewParamsActive(false) differs from NewParams", n, lambda)
			}
		}
	}
}

// naiveActiveC is the active covariance update written out from Hansen's
// tutorial (arXiv:1604.00772v2, eqs. 46–47) with the weights of p scaled for
// h: y_i = (x_{i:λ} − m)/σ, w°_i = w_i for w_i ≥ 0 and w_i n/‖C^{−1/2} y_i‖²
// otherwise (the norm from C by a fresh eigendecomposition), C' = (1 + c_1
// δ(h_σ) − c_1 − c_μ Σw) C + c_1 p_c p_cᵀ + c_μ Σ w°_i y_i y_iᵀ.
func naiveActiveC(p Params, h Hyper, st *Step, pcNew []float64) *mat.SymDense {
	n := p.N
	var eig mat.EigenSym
	if !eig.Factorize(st.C, true) {
		panic("eigen")
	}
	inv := mat.NewSymDense(n, nil) // C^{−1}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	vals := eig.Values(nil)
	for i := range n {
		for j := i; j < n; j++ {
			var s float64
			for k := range n {
				s += vecs.At(i, k) * vecs.At(j, k) / vals[k]
			}
			inv.SetSym(i, j, s)
		}
	}
	alpha := p.AlphaNeg(h)
	w := append(slices.Clone(p.Weights), p.WeightsNeg...)
	var sumW float64
	for i := range w {
		if i >= p.Mu {
			w[i] *= alpha
		}
		sumW += w[i]
	}
	delta := (1 - st.HSigma) * h.Cc * (2 - h.Cc)
	c := mat.NewSymDense(n, nil)
	a := 1 + h.C1*delta - h.C1 - h.CMu*sumW
	for i := range n {
		for j := i; j < n; j++ {
			c.SetSym(i, j, a*st.C.At(i, j)+h.C1*pcNew[i]*pcNew[j])
		}
	}
	y := make([]float64, n)
	for r, k := range st.Order {
		for i := range n {
			y[i] = (st.X.At(k, i) - st.Mean[i]) / st.Sigma
		}
		wi := w[r]
		if wi < 0 {
			yv := mat.NewVecDense(n, y)
			wi *= float64(n) / mat.Inner(yv, inv, yv)
		}
		for i := range n {
			for j := i; j < n; j++ {
				c.SetSym(i, j, c.At(i, j)+h.CMu*wi*y[i]*y[j])
			}
		}
	}
	return c
}

// The active update is the tutorial's (eq. 47) with pycma's weights, for
// the default rates and for others (as self-CMA-ES replays it), to rounding.
func TestActiveUpdateIsTutorial(t *testing.T) {
	for _, lambda := range []int{0, 9, 30} {
		e := mustNew(t, Config{X0: uniformX0(3, 6), Sigma0: 1, Lambda: lambda, Seed: 11, Active: true})
		p := e.Params()
		for g := range 60 {
			step(t, e, ellipsoid)
			st := e.LastStep()
			if st == nil || !st.Active || math.Abs(st.WNegSum+1) > 1e-15 {
				t.Fatalf("λ=%d generation %d: step %v, want an active step with Σw°^- = −1", p.Lambda, g, st != nil)
			}
			for _, h := range []Hyper{st.Hyper, {C1: 0.1, CMu: 0.3, Cc: 0.5}, {C1: 0.02, CMu: 0.7, Cc: 0.9}} {
				pc := make([]float64, 6)
				c := mat.NewSymDense(6, nil)
				st.Replay(h, pc, c)
				want := naiveActiveC(p, h, st, pc)
				for i := range 6 {
					for j := i; j < 6; j++ {
						if d := math.Abs(c.At(i, j) - want.At(i, j)); d > 1e-12*math.Sqrt(want.At(i, i)*want.At(j, j)) {
							t.Fatalf("λ=%d generation %d θ=%+v: C'[%d,%d] = %v, tutorial %v", p.Lambda, g, h, i, j, c.At(i, j), want.At(i, j))
						}
					}
				}
			}
		}
	}
}

// Replaying an active update with the rates it used gives C^{t+1} and
// p_c^{t+1} bit for bit, with the rates changed every generation as
// self-CMA-ES does (compare TestReplayReproducesUpdate).
func TestActiveReplayReproducesUpdate(t *testing.T) {
	e := mustNew(t, Config{X0: uniformX0(1, 8), Sigma0: 2, Lambda: 20, Seed: 5, Active: true})
	checked := 0
	for g := range 200 {
		used := e.Hyper()
		step(t, e, rosenbrock)
		st := e.LastStep()
		if st == nil || st.Hyper != used {
			t.Fatalf("generation %d: step %v", g, st)
		}
		pc := make([]float64, 8)
		c := mat.NewSymDense(8, nil)
		st.Replay(used, pc, c)
		if e.s.DecomposedC { // no safeguard acted: C is the update's
			if !sameSymBits(c, e.s.C) || !slices.Equal(pc, e.s.PC) {
				t.Fatalf("generation %d: replayed C or p_c differs from the update's", g)
			}
			checked++
		}
		next := e.Params().Hyper()
		switch g % 3 {
		case 0:
			next = Hyper{C1: next.C1 * 1.5, CMu: next.CMu * 2, Cc: next.Cc * 0.7}
		case 1:
			next = Hyper{C1: 0.05, CMu: 0.6, Cc: 0.3}
		}
		if err := e.SetHyper(next); err != nil {
			t.Fatal(err)
		}
	}
	if checked < 190 {
		t.Fatalf("only %d of 200 generations without a safeguard", checked)
	}
}

// minEig returns the smallest eigenvalue of c.
func minEig(tb testing.TB, c *mat.SymDense) float64 {
	tb.Helper()
	var eig mat.EigenSym
	if !eig.Factorize(c, false) {
		tb.Fatal("eigendecomposition failed")
	}
	return eig.Values(nil)[0]
}

// Active updates keep C symmetric positive definite, before any safeguard,
// over long runs, with the default rates and with rates far from them (the
// negative weights follow the rates: alphaNeg).
func TestActiveCStaysPositiveDefinite(t *testing.T) {
	tests := []struct {
		name   string
		f      func([]float64) float64
		n, lam int
		hyper  func(Params) Hyper
		gens   int
	}{
		{"ellipsoid n=10", ellipsoid, 10, 0, Params.Hyper, 1500},
		{"rosenbrock n=8 λ=50", rosenbrock, 8, 50, Params.Hyper, 800},
		{"ellipsoid n=5 large c_μ", ellipsoid, 5, 20, func(Params) Hyper { return Hyper{C1: 0.05, CMu: 0.85, Cc: 0.9} }, 600},
		{"sphere n=20 λ=100 large c_1", sphere, 20, 100, func(Params) Hyper { return Hyper{C1: 0.2, CMu: 0.5, Cc: 0.3} }, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: uniformX0(2, tt.n), Sigma0: 1, Lambda: tt.lam, Seed: 3, Active: true,
				Termination: Termination{TolFun: -1, TolX: -1, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
			if err := e.SetHyper(tt.hyper(e.Params())); err != nil {
				t.Fatal(err)
			}
			for g := range tt.gens {
				if e.Stopped() != nil {
					break
				}
				step(t, e, tt.f)
				if err := e.SetHyper(tt.hyper(e.Params())); err != nil {
					t.Fatal(err)
				}
				if e.LastStep() == nil {
					continue
				}
				// C' as the update computed it, before any safeguard (one
				// may move σ into C when extreme rates shrink C: that is no
				// loss of definiteness).
				pc := make([]float64, tt.n)
				c := mat.NewSymDense(tt.n, nil)
				e.LastStep().Replay(e.LastStep().Hyper, pc, c)
				if m := minEig(t, c); !(m > 0) {
					t.Fatalf("generation %d: the update's C has eigenvalue %v", g, m)
				}
			}
			t.Logf("%d generations, stop %v", e.Generation(), e.Stopped())
		})
	}
}

// evalsToTarget runs an ES (no restarts) until the best value is ≤ target
// and returns the evaluations, or 0 if a criterion stopped it first.
func evalsToTarget(tb testing.TB, cfg Config, f func([]float64) float64, target float64, maxEvals int) int {
	tb.Helper()
	cfg.Termination.HasTarget, cfg.Termination.TargetFitness = true, target
	cfg.Termination.MaxEvaluations = maxEvals
	e := mustNew(tb, cfg)
	for e.Stopped() == nil {
		step(tb, e, f)
	}
	if b, ok := e.Best(); ok && b.F <= target {
		return e.Evaluations()
	}
	return 0
}

func medianInt(v []int) float64 {
	s := slices.Clone(v)
	sort.Ints(s)
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

// Active CMA-ES needs fewer evaluations than Algorithm 1 on ill-conditioned
// functions, over 21 seeds (evaluations counted, not time).
func TestActiveConvergesFaster(t *testing.T) {
	if testing.Short() {
		t.Skip("convergence over 21 seeds")
	}
	tests := []struct {
		name     string
		f        func([]float64) float64
		n        int
		minRatio float64 // passive/active medians at least this
	}{
		{"ellipsoid n=10", ellipsoid, 10, 1.2},
		{"rosenbrock n=10", rosenbrock, 10, 1.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs [2][]int
			for seed := range uint64(21) {
				for k, active := range []bool{false, true} {
					ev := evalsToTarget(t, Config{X0: uniformX0(seed, tt.n), Sigma0: 1, Seed: seed, Active: active}, tt.f, 1e-8, 200000)
					if ev == 0 {
						ev = 1 << 30 // a failure ranks last in the median
					}
					runs[k] = append(runs[k], ev)
				}
			}
			passive, active := medianInt(runs[0]), medianInt(runs[1])
			t.Logf("median evaluations to 1e-8: passive %v, active %v (ratio %.2f)", passive, active, passive/active)
			if passive/active < tt.minRatio {
				t.Errorf("passive/active = %.2f, want at least %.2f", passive/active, tt.minRatio)
			}
		})
	}
}

// BenchmarkGenerationActive is BenchmarkGeneration for Algorithm 1 and for
// active CMA-ES side by side: the cost of the negative part (λ − μ
// Mahalanobis norms and a rank-(λ − μ) product).
func BenchmarkGenerationActive(b *testing.B) {
	for _, c := range []benchCase{{10, 100}, {100, 0}, {100, 100}, {400, 100}} {
		for _, active := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/active=%v", c, active), func(b *testing.B) {
				e := mustNew(b, Config{X0: uniformX0(1, c.n), Sigma0: 1, Lambda: c.lambda, Seed: 1, Termination: never, Active: active})
				r := rand.New(rand.NewPCG(2, 2))
				f := make([]float64, e.Params().Lambda)
				b.ReportAllocs()
				for b.Loop() {
					_ = e.Ask()
					for k := range f {
						f[k] = r.Float64()
					}
					if _, err := e.Tell(f); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
