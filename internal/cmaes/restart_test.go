package cmaes

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func rastrigin(x []float64) float64 {
	s := 10 * float64(len(x))
	for _, v := range x {
		s += v*v - 10*math.Cos(2*math.Pi*v)
	}
	return s
}

// pycmaRestarts re-states, as plainly as it can, the restart loop of pycma
// 4.4.0's fmin (cma/evolution_strategy.py) with bipop = 1, the ES's
// deviation noted: the evaluations of a run are λ per generation (pycma
// adds the evaluation of the final mean). With sigmaDec and budget it is
// Loshchilov's NIPOP and NBIPOP on top of it: σ0/sigmaDec^k for the k-th
// large run, and the poptype of the best run so far (the first counts as
// small, as its evaluations do) weighing the budgets by budget.
type pycmaRestarts struct {
	n, maxrestarts     int
	popsize0           float64
	sigma0, incpopsize float64
	bipop              bool
	uniform            *Bounds
	sigmaDec, budget   float64
	bestF              float64
	bestPoptype        string

	irun, runsWithSmall int
	smallI, largeI      []int
	poptype             string
	maxiter0            float64
}

// started is what the reference says a run starts with.
type started struct {
	regime  string
	lambda  int
	sigma   float64
	maxiter int // generations; 0: none
	mean    []float64
}

func newPycmaRestarts(cfg Config) *pycmaRestarts {
	n := len(cfg.X0)
	p := &pycmaRestarts{n: n, popsize0: float64(cfg.Lambda), maxrestarts: cfg.Restarts.Max, sigma0: cfg.Sigma0,
		incpopsize: cfg.Restarts.IncPopSize, bipop: cfg.Restarts.BIPOP, poptype: "small",
		sigmaDec: cfg.Restarts.SigmaDec, budget: cfg.Restarts.Budget, bestF: math.Inf(1)}
	switch {
	case p.popsize0 == 0 && p.bipop:
		// pycma's default popsize option, '4 + 3 * np.log(N)', unrounded;
		// the first run's λ is its integer part.
		p.popsize0 = 4 + 3*math.Log(float64(n))
	case p.popsize0 == 0:
		// The ES's deviation: IPOP multiplies the first run's integer λ,
		// as it did before BIPOP existed (pycma the unrounded value).
		p.popsize0 = float64(DefaultLambda(n))
	}
	if p.maxrestarts == 0 {
		p.maxrestarts = 9
	}
	if p.incpopsize == 0 {
		p.incpopsize = 2
	}
	if cfg.Restarts.Point.Uniform {
		p.uniform = cfg.Restarts.Point.Region
		if p.uniform == nil {
			p.uniform = cfg.Bounds
		}
	}
	// '100 + 150 * (N+3)**2 // popsize**0.5'
	p.maxiter0 = 100 + math.Floor(150*float64((n+3)*(n+3))/math.Sqrt(p.popsize0))
	return p
}

// ended books a run of evals evaluations whose best value was best and
// returns whether fmin starts another (it also needs the stop to be one a
// restart mends).
func (p *pycmaRestarts) ended(evals int, best float64) bool {
	if best < p.bestF {
		p.bestF, p.bestPoptype = best, p.poptype
	}
	if p.bipop {
		if p.poptype == "small" {
			p.smallI = append(p.smallI, evals)
		} else {
			p.largeI = append(p.largeI, evals)
		}
	}
	p.irun++
	return p.irun-p.runsWithSmall <= p.maxrestarts
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// next is the run fmin starts, its uniform numbers drawn from r.
func (p *pycmaRestarts) next(r *rand.Rand) started {
	s := started{regime: RegimeLarge, sigma: p.sigma0}
	small, large := float64(sum(p.smallI)), float64(max(1, sum(p.largeI)))
	switch {
	case p.budget > 1 && p.bestPoptype == "large":
		small *= p.budget
	case p.budget > 1 && p.bestPoptype == "small":
		large *= p.budget
	}
	switch {
	case !p.bipop:
		s.lambda = int(p.popsize0 * math.Pow(p.incpopsize, float64(p.irun-p.runsWithSmall)))
		s.sigma = p.largeSigma(p.irun - p.runsWithSmall)
	case small < large:
		p.poptype, s.regime = "small", RegimeSmall
		p.runsWithSmall++
		sigmaFactor := math.Pow(0.01, r.Float64())
		s.sigma = sigmaFactor * p.sigma0
		mult := math.Pow(p.incpopsize, float64(p.irun-p.runsWithSmall))
		u := r.Float64()
		s.lambda = int(p.popsize0 * math.Pow(mult, u*u))
		s.maxiter = int(math.Ceil(math.Min(p.maxiter0, 0.5*float64(sum(p.largeI))/float64(s.lambda))))
	default:
		p.poptype = "large"
		s.lambda = int(p.popsize0 * math.Pow(p.incpopsize, float64(p.irun-p.runsWithSmall)))
		s.sigma = p.largeSigma(p.irun - p.runsWithSmall)
		s.maxiter = int(p.maxiter0)
	}
	if p.uniform != nil {
		for i := range p.n {
			lo, up := p.uniform.Lower[i], p.uniform.Upper[i]
			s.mean = append(s.mean, lo+(up-lo)*r.Float64())
		}
	}
	return s
}

// largeSigma is σ0 of the k-th large run: σ0, or σ0/sigmaDec^k.
func (p *pycmaRestarts) largeSigma(k int) float64 {
	if p.sigmaDec > 1 {
		return p.sigma0 / math.Pow(p.sigmaDec, float64(k))
	}
	return p.sigma0
}

// checkStarted fails unless e's current run is what want says.
func checkStarted(t *testing.T, where string, e *ES, want started, x0 []float64) {
	t.Helper()
	mean := want.mean
	if mean == nil {
		mean = x0
	}
	if e.Regime() != want.regime || e.Params().Lambda != want.lambda || e.Sigma() != want.sigma || e.s.RunSigma0 != want.sigma ||
		e.s.GenLimit != want.maxiter || !equal(e.Mean(), mean) {
		t.Fatalf("%s: run %d is %s, λ %d, σ %v, limit %d, m %v; pycma's: %s, λ %d, σ %v, limit %d, m %v", where, e.Run(),
			e.Regime(), e.Params().Lambda, e.Sigma(), e.s.GenLimit, e.Mean(), want.regime, want.lambda, want.sigma, want.maxiter, mean)
	}
}

// runAgainstPycma runs e on f to its end, and checks every run it starts
// against pycmaRestarts, drawing from a copy of e's stream taken before
// the tell. It returns the runs' regimes.
func runAgainstPycma(t *testing.T, cfg Config, f func([]float64) float64, maxGen int) (*ES, []string) {
	t.Helper()
	e := mustNew(t, cfg)
	ref := newPycmaRestarts(cfg)
	first := started{regime: RegimeDefault, lambda: e.Params().Lambda, sigma: cfg.Sigma0}
	if cfg.Restarts.BIPOP {
		first.maxiter = int(ref.maxiter0)
	}
	checkStarted(t, "new", e, first, cfg.X0)
	regimes := []string{e.Regime()}
	runEvals, runGens, runBest := 0, 0, math.Inf(1)
	for g := 0; e.Stopped() == nil; g++ {
		if g == maxGen {
			t.Fatalf("not stopped after %d generations", maxGen)
		}
		src := e.s.Rand
		limit := e.s.GenLimit
		rec := step(t, e, f)
		runEvals += rec.Lambda
		runGens++
		runBest = math.Min(runBest, rec.Best)
		if limit > 0 && runGens > limit {
			t.Fatalf("generation %d: run %d ran %d generations, its limit %d", g, rec.Run, runGens, limit)
		}
		stop := e.Stopped()
		if rec.Restarted {
			stop = e.RunEnds()[len(e.RunEnds())-1].Reasons
		}
		if len(stop) == 0 {
			continue
		}
		if r, ok := hasReason(stop, StopMaxIter); ok != (runGens == limit) || ok && r.Value != float64(limit) {
			t.Fatalf("generation %d: run of %d generations, limit %d, stopped by %v", g, runGens, limit, stop)
		}
		if more := ref.ended(runEvals, runBest); more != rec.Restarted {
			t.Fatalf("generation %d: restarted %v, pycma would %v (stopped by %v)", g, rec.Restarted, more, stop)
		}
		if !rec.Restarted {
			break
		}
		if small, large := e.smallEvals, e.largeEvals; cfg.Restarts.BIPOP && (small != sum(ref.smallI) || large != sum(ref.largeI)) {
			t.Fatalf("generation %d: evaluations small %d, large %d; pycma's %d, %d", g, small, large, sum(ref.smallI), sum(ref.largeI))
		}
		checkStarted(t, fmt.Sprintf("generation %d", g), e, ref.next(rand.New(&src)), cfg.X0)
		end := e.RunEnds()[len(e.RunEnds())-1]
		if end.Regime != regimes[len(regimes)-1] || end.Lambda != rec.Lambda || end.Generation != g || rec.Regime != end.Regime {
			t.Fatalf("generation %d: run end %+v, record regime %s", g, end, rec.Regime)
		}
		regimes = append(regimes, e.Regime())
		runEvals, runGens, runBest = 0, 0, math.Inf(1)
	}
	return e, regimes
}

// TestBIPOPSchedule checks the sequence of runs of BIPOP (regime, λ, σ0,
// generation limit, and when it ends) against pycmaRestarts, on Rastrigin,
// whose local minima stop runs early; and IPOP's with IncPopSize; and
// NIPOP's and NBIPOP's (SigmaDec, Budget).
func TestBIPOPSchedule(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"bipop", Config{X0: constVec(3, 3), Sigma0: 2, Seed: 4, Restarts: Restarts{BIPOP: true, Max: 5}}},
		{"bipop, incpopsize 3, λ0 = 5", Config{X0: constVec(4, 1), Sigma0: 1, Lambda: 5, Seed: 5, Restarts: Restarts{BIPOP: true, Max: 3, IncPopSize: 3}, Termination: Termination{TolX: 1e-9}}},
		{"bipop, default max", Config{X0: constVec(2, 2), Sigma0: 1, Seed: 6, Restarts: Restarts{BIPOP: true}, Termination: Termination{TolX: 1e-3}}},
		{"ipop, incpopsize 1.5", Config{X0: constVec(3, 3), Sigma0: 2, Seed: 7, Restarts: Restarts{IPOP: true, Max: 4, IncPopSize: 1.5}, Termination: Termination{TolX: 1e-4}}},
		{"nbipop", Config{X0: constVec(3, 3), Sigma0: 2, Seed: 5, Restarts: Restarts{BIPOP: true, Max: 5, SigmaDec: 1.6, Budget: 2}}},
		{"nbipop, budget 3", Config{X0: constVec(4, 3), Sigma0: 2, Seed: 9, Active: true, Restarts: Restarts{BIPOP: true, Max: 4, SigmaDec: 1.3, Budget: 3}}},
		{"nipop", Config{X0: constVec(3, 3), Sigma0: 2, Seed: 7, Restarts: Restarts{IPOP: true, Max: 4, SigmaDec: 1.6}, Termination: Termination{TolX: 1e-4}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, regimes := runAgainstPycma(t, c.cfg, rastrigin, 100000)
			larges, smalls, limited := 0, 0, 0
			for _, r := range regimes {
				switch r {
				case RegimeLarge:
					larges++
				case RegimeSmall:
					smalls++
				}
			}
			for _, end := range e.RunEnds() {
				if _, ok := hasReason(end.Reasons, StopMaxIter); ok {
					limited++
				}
			}
			t.Logf("runs %v; %d stopped by max_iter; stopped by %v", strings.Join(regimes, " "), limited, reasonNames(e.Stopped()))
			if want := e.Config().Restarts.Max; larges != want {
				t.Errorf("%d large restarts, want Max = %d", larges, want)
			}
			if c.cfg.Restarts.BIPOP && (smalls < 3 || limited == 0) {
				t.Errorf("%d small runs, %d stopped by their limit: the schedule is not tested", smalls, limited)
			}
			if c.cfg.Restarts.IPOP && smalls != 0 {
				t.Error("IPOP ran small runs")
			}
		})
	}
}

// TestRestartPoints checks that with Point.Uniform every restart's mean is
// drawn from the ES's stream, after the draws of σ and λ, uniformly in the
// region (or the bounds), and lies inside it; the first run starts at X0.
func TestRestartPoints(t *testing.T) {
	n := 3
	region := &Bounds{Lower: []float64{-1, 0, 2}, Upper: []float64{1, 0.5, 5}}
	bounds := &Bounds{Lower: constVec(n, -2), Upper: constVec(n, 6)}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"bipop, region", Config{X0: constVec(n, 3), Sigma0: 1, Seed: 8, Restarts: Restarts{BIPOP: true, Max: 3, Point: RestartPoint{Uniform: true, Region: region}}}},
		{"bipop, bounds", Config{X0: constVec(n, 3), Sigma0: 1, Seed: 9, Bounds: bounds, Restarts: Restarts{BIPOP: true, Max: 3, Point: RestartPoint{Uniform: true}}}},
		{"ipop, region in bounds", Config{X0: constVec(n, 3), Sigma0: 1, Seed: 10, Bounds: bounds, Restarts: Restarts{IPOP: true, Max: 3, Point: RestartPoint{Uniform: true, Region: region}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Termination.TolX = 1e-3
			e, regimes := runAgainstPycma(t, c.cfg, rastrigin, 100000)
			if len(regimes) < 4 {
				t.Fatalf("runs %v: too few restarts", regimes)
			}
			box := c.cfg.Restarts.Point.Region
			if box == nil {
				box = c.cfg.Bounds
			}
			// runAgainstPycma compared each mean with the reference's draw;
			// here, that the draws lie in the box and differ.
			seen := map[float64]bool{}
			e2 := mustNew(t, c.cfg)
			for e2.Stopped() == nil {
				if rec := step(t, e2, rastrigin); rec.Restarted {
					m := e2.Mean()
					for i, v := range m {
						if v < box.Lower[i] || v >= box.Upper[i] {
							t.Fatalf("run %d starts at %v, outside %v", e2.Run(), m, box)
						}
					}
					if seen[m[0]] {
						t.Fatalf("run %d starts where another did", e2.Run())
					}
					seen[m[0]] = true
				}
			}
			if e2.Run() != e.Run() {
				t.Fatal("the same configuration ran differently")
			}
		})
	}
}

// TestRestartsContinue encodes and decodes the ES after every generation
// (the ones that restart included) of IPOP with IncPopSize, BIPOP and
// uniform restart points, with and without bounds, and checks that the
// decoded ES encodes to the same bytes and, told the same values, asks the
// same points and stays the same state for 3 generations.
func TestRestartsContinue(t *testing.T) {
	n := 3
	bounds := &Bounds{Lower: constVec(n, -1), Upper: constVec(n, 4)}
	region := &Bounds{Lower: constVec(n, 0), Upper: constVec(n, 3)}
	cases := map[string]Config{
		"ipop 1.5, bounds":        {Bounds: bounds, Restarts: Restarts{IPOP: true, Max: 3, IncPopSize: 1.5}},
		"bipop":                   {Restarts: Restarts{BIPOP: true, Max: 3}},
		"bipop, uniform, bounds":  {Bounds: bounds, Restarts: Restarts{BIPOP: true, Max: 3, Point: RestartPoint{Uniform: true}}},
		"bipop, uniform region":   {Restarts: Restarts{BIPOP: true, Max: 3, Point: RestartPoint{Uniform: true, Region: region}}},
		"ipop, uniform in bounds": {Bounds: bounds, Restarts: Restarts{IPOP: true, Max: 3, Point: RestartPoint{Uniform: true, Region: region}}},
		"active, bipop, bounds":   {Active: true, Bounds: bounds, Restarts: Restarts{BIPOP: true, Max: 3}},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			cfg.X0, cfg.Sigma0, cfg.Seed = constVec(n, 1), 1, 31
			cfg.Termination = Termination{TolX: 1e-2}
			e := mustNew(t, cfg)
			f := func(x []float64) float64 { return rastrigin(x) }
			restarts, regimes := 0, map[string]bool{}
			for g := 0; e.Stopped() == nil; g++ {
				if g > 3000 {
					t.Fatal("not stopped after 3000 generations")
				}
				rec := step(t, e, f)
				if rec.Restarted {
					restarts++
					regimes[e.Regime()] = true
					if e.Params().Active != cfg.Active {
						t.Fatalf("generation %d: the restarted run's parameters are not those of Active %v", g, cfg.Active)
					}
				}
				checkContinues(t, fmt.Sprintf("generation %d", g), e, f, 3)
			}
			if restarts < 3 || cfg.Restarts.BIPOP && !regimes[RegimeSmall] {
				t.Fatalf("%d restarts, regimes %v: restarts not tested", restarts, regimes)
			}
		})
	}
}

// checkContinues encodes e, decodes it and fails unless the decoded ES
// encodes to the same bytes and continues as a copy of e does for gens
// generations of f, asking the same points and ending in the same state.
func checkContinues(t *testing.T, where string, e *ES, f func([]float64) float64, gens int) {
	t.Helper()
	a, err := restoreCopy(t, e)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	b, _ := restoreCopy(t, e)
	if !bytes.Equal(stateBits(t, a), stateBits(t, e)) {
		t.Fatalf("%s: the restored ES is another state", where)
	}
	if !samePoints(a.Ask(), e.Ask()) || a.Regime() != e.Regime() || a.s.GenLimit != e.s.GenLimit {
		t.Fatalf("%s: the decoded ES differs", where)
	}
	es, ls := e.smallEvals, e.largeEvals
	if as, al := a.smallEvals, a.largeEvals; as != es || al != ls || a.largeRuns != e.largeRuns {
		t.Fatalf("%s: decoded bookkeeping %d, %d, %d; want %d, %d, %d", where, as, al, a.largeRuns, es, ls, e.largeRuns)
	}
	// a continues for b, the original's stand-in: b decoded too, but
	// compared with e at the end of the run below.
	for g := range gens {
		if a.Stopped() != nil {
			break
		}
		X := a.Ask()
		if !samePoints(X, b.Ask()) {
			t.Fatalf("%s, +%d: the decoded ES asks other points", where, g)
		}
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = f(x)
		}
		ra, err := a.Tell(v)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Tell(v)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Restarted != rb.Restarted || ra.Regime != rb.Regime {
			t.Fatalf("%s, +%d: records differ", where, g)
		}
	}
	ba, bb := stateBits(t, a), stateBits(t, b)
	if !bytes.Equal(ba, bb) {
		t.Fatalf("%s: after %d generations the states differ", where, gens)
	}
}

// TestRestartsConfigErrors checks the validation of Restarts: each bad
// configuration is refused with an error that says what is wrong, and the
// good ones are taken, resolved as documented.
func TestRestartsConfigErrors(t *testing.T) {
	x0 := []float64{0, 0}
	box := func(lo, up float64) *Bounds { return &Bounds{Lower: []float64{lo, lo}, Upper: []float64{up, up}} }
	for _, c := range []struct {
		name string
		rs   Restarts
		b    *Bounds
		want string // in the error; "" for none
	}{
		{"ipop and bipop", Restarts{IPOP: true, BIPOP: true}, nil, "IPOP and BIPOP"},
		{"negative max", Restarts{BIPOP: true, Max: -1}, nil, "restarts max"},
		{"incpopsize below 1", Restarts{IPOP: true, IncPopSize: 0.5}, nil, "incpopsize"},
		{"negative incpopsize", Restarts{BIPOP: true, IncPopSize: -2}, nil, "incpopsize"},
		{"nan incpopsize", Restarts{IPOP: true, IncPopSize: math.NaN()}, nil, "incpopsize"},
		{"inf incpopsize", Restarts{IPOP: true, IncPopSize: math.Inf(1)}, nil, "incpopsize"},
		{"uniform without a box", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true}}, nil, "need a region or bounds"},
		{"region length", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: &Bounds{Lower: []float64{0}, Upper: []float64{1, 1}}}}, nil, "restart region have 1 and 2 values"},
		{"region order", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: box(1, 1)}}, nil, "not below upper"},
		{"region not finite", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: box(math.Inf(-1), 1)}}, nil, "not finite"},
		{"region nan", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: box(math.NaN(), 1)}}, nil, "not finite"},
		{"region outside bounds", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: box(-2, 1)}}, box(-1, 1), "not inside the bounds"},
		{"region inside bounds", Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: box(-1, 0.5)}}, box(-1, 1), ""},
		{"uniform in bounds", Restarts{IPOP: true, Point: RestartPoint{Uniform: true}}, box(-1, 1), ""},
		{"region, no restarts", Restarts{Point: RestartPoint{Uniform: true, Region: box(3, 4)}}, nil, ""},
		{"incpopsize 1", Restarts{BIPOP: true, IncPopSize: 1}, nil, ""},
		{"sigma decrease below 1", Restarts{IPOP: true, SigmaDec: 0.5}, nil, "sigma decrease"},
		{"nan sigma decrease", Restarts{BIPOP: true, SigmaDec: math.NaN()}, nil, "sigma decrease"},
		{"budget below 1", Restarts{BIPOP: true, Budget: 0.9}, nil, "budget ratio"},
		{"inf budget", Restarts{BIPOP: true, Budget: math.Inf(1)}, nil, "budget ratio"},
		{"budget without BIPOP", Restarts{IPOP: true, Budget: 2}, nil, "needs BIPOP"},
		{"nbipop", Restarts{BIPOP: true, SigmaDec: 1.6, Budget: 2}, nil, ""},
		{"nipop", Restarts{IPOP: true, SigmaDec: 1.6}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(Config{X0: x0, Sigma0: 1, Bounds: c.b, Restarts: c.rs})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("New: no error, want one with %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("New: %v, want %q in it", err, c.want)
			case c.want == "":
				rs := e.Config().Restarts
				if (rs.IPOP || rs.BIPOP) && (rs.Max != DefaultMaxRestarts || rs.IncPopSize == 0) {
					t.Fatalf("resolved %+v: Max and IncPopSize not filled in", rs)
				}
			}
		})
	}
	// New copies the region: changing the caller's afterwards changes
	// nothing.
	region := box(-1, 1)
	e := mustNew(t, Config{X0: x0, Sigma0: 1, Restarts: Restarts{BIPOP: true, Point: RestartPoint{Uniform: true, Region: region}}})
	region.Lower[0] = -5
	if e.Config().Restarts.Point.Region.Lower[0] != -1 {
		t.Fatal("the ES shares the caller's region")
	}
}
