package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/selfcma/selfcma/internal/bbob"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// instance returns the BBOB instance of run r ≥ 1 under -runs: r for
// r ≤ 5, then 30 + (r − 5), so that 15 runs use instances 1–5 and 31–40
// (docs/algorithm.md §4) and further runs continue with 41, 42, ...
func instance(r int) int {
	if r <= 5 {
		return r
	}
	return 30 + (r - 5)
}

// runKey is the number that x0 and the ES's seed of a run on instance inst
// are drawn from: the run number r of -runs that uses inst (inst for
// inst ≤ 5, inst − 25 for inst ≥ 31), so that -instances 1-5,31-40 and
// -runs 15 make the same runs; instances 6–30, which -runs never uses, get
// 2^32 + inst.
func runKey(inst int) uint64 {
	switch {
	case inst <= 5:
		return uint64(inst)
	case inst >= 31:
		return uint64(inst - 25)
	}
	return 1<<32 + uint64(inst)
}

// initialMean returns x0 of the run with key k (runKey) in dimension n:
// uniform in [−x0Bound, x0Bound]^n, from a PCG stream seeded by (seed, k).
// It does not depend on the function or the algorithm.
func initialMean(seed, k uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, k))
	x := make([]float64, n)
	for i := range x {
		x[i] = -x0Bound + 2*x0Bound*rng.Float64()
	}
	return x
}

// esSeed returns the seed of the ES of the run with key k (runKey): a
// SplitMix64 hash of (seed, function, n, k). It does not depend on the
// algorithm.
func esSeed(seed uint64, function, n int, k uint64) uint64 {
	h := splitMix64(seed)
	for _, v := range []uint64{uint64(function), uint64(n), k} {
		h = splitMix64(h ^ v)
	}
	return h
}

// splitMix64 is the finalizer of Steele, Lea and Flood's SplitMix64.
func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// job is one run of one algorithm on one function instance.
type job struct {
	Algorithm string
	Function  int
	Dimension int
	Run       int // from 1, the position of Instance in options.instances
	Instance  int
}

// tracePoint is what the plots need of one generation.
type tracePoint struct {
	Hyper  cmaes.Hyper // rates the update used
	DeltaF float64     // best f − f_opt so far
}

// runResult is the outcome of a job.
type runResult struct {
	job
	Label         string      // the algorithm and its configuration (options.label)
	Config        algConfig   // what the run ran with
	configJSON    string      // -summary: the config of the line read, "" for none
	Lambda        int         // initial λ
	Defaults      cmaes.Hyper // default rates of the initial λ
	EvalsToTarget int         // evaluations at the end of the generation that reached the target; 0 = not reached
	Evaluations   int         // evaluations of the whole run
	FinalDeltaF   float64     // best f − f_opt
	Generations   int
	Restarts      int
	Stop          []string
	Trace         []tracePoint // one per generation
	Runs          []restartRun // -per-run: one per run of the ES (the first and each restart)
}

// restartRun is one run of a restarting ES (-per-run).
type restartRun struct {
	Regime      string   `json:"regime"`
	Lambda      int      `json:"lambda"`
	Sigma0      float64  `json:"sigma0"`
	Evaluations int      `json:"evaluations"`  // of this run
	Stop        []string `json:"stop"`         // why it ended
	BestDeltaF  float64  `json:"best_delta_f"` // best f − f_opt of its generations
	Target      bool     `json:"target"`       // it reached the target
}

// Success reports whether the run reached the target.
func (r runResult) Success() bool { return r.EvalsToTarget > 0 }

// Cost is the run's contribution to the ERT: the evaluations up to the
// target, or all of them.
func (r runResult) Cost() int {
	if r.Success() {
		return r.EvalsToTarget
	}
	return r.Evaluations
}

func (r runResult) describe() string {
	out := fmt.Sprintf("f%d %d-D %s run %d (instance %d): ", r.Function, r.Dimension, r.Label, r.Run, r.Instance)
	if r.Success() {
		out += fmt.Sprintf("target after %d evaluations", r.EvalsToTarget)
	} else {
		out += fmt.Sprintf("failed, f − f_opt = %.3g after %d evaluations", r.FinalDeltaF, r.Evaluations)
	}
	if r.Restarts > 0 {
		out += fmt.Sprintf(", %d restarts", r.Restarts)
	}
	return out + ", stop: " + strings.Join(r.Stop, ",")
}

// optimizer is what a run needs of cmaes.ES and selfcma.ES.
type optimizer interface {
	Ask() [][]float64
	Stopped() []cmaes.StopReason
	Best() (cmaes.Best, bool)
	Generation() int
	Evaluations() int
	Run() int
	Regime() string
	Sigma() float64
	Status() cmaes.Status
	Params() cmaes.Params
}

// jobs lists the jobs of the experiment, in the order of the output.
func (o options) jobs() []job {
	var js []job
	for _, f := range o.functions {
		for _, n := range o.dims {
			for _, a := range o.algorithms {
				for i, inst := range o.instances {
					js = append(js, job{Algorithm: a, Function: f, Dimension: n, Run: i + 1, Instance: inst})
				}
			}
		}
	}
	return js
}

// runAll runs every job on o.workers goroutines and returns the results in
// the order of o.jobs(), whatever the schedule. progress, if not nil, is
// called after each run (from one goroutine at a time).
func runAll(o options, progress func(done, total int, r runResult)) ([]runResult, error) {
	js := o.jobs()
	results := make([]runResult, len(js))
	errs := make([]error, len(js))

	// Hand out the big dimensions first, so that no long run starts last.
	order := make([]int, len(js))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return js[b].Dimension - js[a].Dimension })

	next := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for range max(1, o.workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = runJob(o, js[i])
				if progress != nil && errs[i] == nil {
					mu.Lock()
					done++
					progress(done, len(js), results[i])
					mu.Unlock()
				}
			}
		}()
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	sortResults(results)
	return results, nil
}

// sortResults orders results by function, dimension, algorithm (algOrder)
// and run.
func sortResults(rs []runResult) {
	slices.SortStableFunc(rs, func(a, b runResult) int {
		if c := a.Function - b.Function; c != 0 {
			return c
		}
		if c := a.Dimension - b.Dimension; c != 0 {
			return c
		}
		if c := slices.Index(algOrder, a.Algorithm) - slices.Index(algOrder, b.Algorithm); c != 0 {
			return c
		}
		return a.Run - b.Run
	})
}

// termination is a run's: the budget, the target and the local criteria at
// their defaults, or, with noLocalStops, without those.
func (o options) termination(n int, targetF float64) cmaes.Termination {
	t := cmaes.Termination{MaxEvaluations: o.maxEvaluations(n), HasTarget: true, TargetFitness: targetF}
	if o.noLocalStops {
		t.TolFun, t.TolX, t.ConditionCov, t.TolUpSigma = -1, -1, -1, -1
		t.NoEffectAxis, t.NoEffectCoord, t.NoStagnation, t.NoEqualFunVal = true, true, true, true
	}
	return t
}

// esConfig is the cmaes.Config of job j under configuration c.
func (o options) esConfig(c algConfig, j job, targetF float64) cmaes.Config {
	k := runKey(j.Instance)
	cfg := cmaes.Config{
		X0:          initialMean(o.seed, k, j.Dimension),
		Sigma0:      sigma0,
		Lambda:      c.Lambda,
		Seed:        esSeed(o.seed, j.Function, j.Dimension, k),
		Termination: o.termination(j.Dimension, targetF),
		Numerics:    c.Numerics,
		Active:      c.Active,
	}
	if o.numerics == 0 && c.Algorithm == algCMA && !c.Paper {
		// A new session's: lazy from cmaes.LazyMinDimension on.
		cfg.Numerics = defaults.Numerics(defaults.CMAES, j.Dimension)
	}
	cfg.Termination.FlatFitness, cfg.Termination.UpSigmaMoved = c.FlatFitness, c.UpSigmaMoved
	cfg.Termination.TolWorse, cfg.Termination.TolWorseDelta = c.TolWorse, c.TolWorseDelta
	cfg.MirroredFirstRun, cfg.MirroredSmallRuns = c.Mirrored, c.MirroredSm
	cfg.MeanRateSmallRuns = c.MeanRate == meanRateSmall || c.MeanRate == meanRateBoth
	cfg.MeanRateLargeRuns = c.MeanRate == meanRateLarge || c.MeanRate == meanRateBoth
	cfg.MeanRateAlpha, cfg.MeanRateEtaMin = c.MeanRateAlpha, c.MeanRateEtaMin
	if c.TolFun != 0 {
		cfg.Termination.TolFun = c.TolFun
	}
	if c.TolX != 0 {
		cfg.Termination.TolX = c.TolX
	}
	if cfg.Lambda == 0 && c.Paper && c.Algorithm == algSelf {
		// The paper's λ, whatever selfcma's default becomes.
		cfg.Lambda = max(selfcma.PaperLambda, cmaes.DefaultLambda(j.Dimension))
	}
	if c.Restarts != defaults.RestartsNone {
		cfg.Restarts, _ = defaults.Restarts(c.Restarts) // checkNames knows the name
		cfg.Restarts.Max, cfg.Restarts.IncPopSize = c.MaxRestarts, c.IncPopSize
		if c.SigmaDec != 0 {
			cfg.Restarts.SigmaDec = c.SigmaDec
		}
		if c.BudgetRatio != 0 {
			cfg.Restarts.Budget = c.BudgetRatio
		}
		cfg.Restarts.SpareBestSmall = c.SpareBest && cfg.Restarts.BIPOP
	}
	if c.Restarts != defaults.RestartsNone && c.RestartPoint == defaults.PointUniform {
		lo, up := make([]float64, j.Dimension), make([]float64, j.Dimension)
		for i := range lo {
			lo[i], up[i] = -x0Bound, x0Bound
		}
		cfg.Restarts.Point = cmaes.RestartPoint{Uniform: true, Region: &cmaes.Bounds{Lower: lo, Upper: up}}
	}
	return cfg
}

// runJob runs one algorithm on one BBOB instance until the target, the
// budget or a termination criterion (after the restarts, if any).
func runJob(o options, j job) (runResult, error) {
	p, err := bbob.New(j.Function, j.Dimension, j.Instance)
	if err != nil {
		return runResult{}, err
	}
	fopt := p.FOpt()
	targetF := fopt + o.target
	c := o.config(j.Algorithm)
	cfg := o.esConfig(c, j, targetF)

	var (
		es   optimizer
		tell func([]float64) (cmaes.Record, error)
	)
	switch j.Algorithm {
	case algCMA:
		e, err := cmaes.New(cfg)
		if err != nil {
			return runResult{}, fmt.Errorf("%s: %w", p, err)
		}
		es, tell = e, e.Tell
		if c.RateScale != 0 {
			tell = scaledTell(e, c.RateScale, c.RateScaleFirst)
		}
		if c.RateSNR {
			tell = snrTell(e, c.RateSNRMin, cmp.Or(c.RateSNRMax, snrEtaMax))
		}
	case algSelf:
		rates, err := selfcma.ParseSNRRates(cmp.Or(c.SNRRates, flagDefault))
		if err != nil {
			return runResult{}, fmt.Errorf("%s: %w", p, err)
		}
		sc := selfcma.Config{CMA: cfg, Init: c.Init, MinLambda: c.MinLambda, AdaptRestarts: c.AdaptRestarts, SNR: c.SNR,
			SNRParams: selfcma.SNRParams{Alpha: c.SNRAlpha, Beta: c.SNRBeta, EtaMax: c.SNREtaMax, Eta0: c.SNREta0,
				Rates: rates, RestartMaxLambda: int(c.SNRRestarts * float64(j.Dimension)), SmallRestarts: c.SNRSmall},
			SNRCMuMax: c.SNRCMuMax}
		if c.Paper {
			// Algorithm 2 in every run, at every λ (the paper's).
			sc.AdaptRestarts = true
			if sc.MinLambda == 0 {
				sc.MinLambda = selfcma.EveryLambda
			}
		}
		e, err := selfcma.New(sc)
		if err != nil {
			return runResult{}, fmt.Errorf("%s: %w", p, err)
		}
		es = e.Primary() // read; the self-CMA-ES is told
		tell = func(f []float64) (cmaes.Record, error) {
			rec, err := e.Tell(f)
			return rec.Record, err
		}
	default:
		return runResult{}, fmt.Errorf("unknown algorithm %q", j.Algorithm)
	}

	params := es.Params()
	res := runResult{job: j, Label: o.label(c), Config: c, Lambda: params.Lambda, Defaults: params.Hyper()}
	cur := restartRun{Regime: es.Regime(), Lambda: params.Lambda, Sigma0: es.Sigma(), BestDeltaF: math.Inf(1)}
	runStart := 0
	for es.Stopped() == nil {
		X := es.Ask()
		f := make([]float64, len(X))
		for k, x := range X {
			f[k] = p.Eval(x)
		}
		rec, err := tell(f)
		if err != nil {
			return runResult{}, fmt.Errorf("%s %s run %d, generation %d: %w", j.Algorithm, p, j.Run, es.Generation(), err)
		}
		if res.EvalsToTarget == 0 && rec.BestSoFar <= targetF {
			res.EvalsToTarget = rec.Evaluations
		}
		res.Trace = append(res.Trace, tracePoint{Hyper: rec.Hyper, DeltaF: rec.BestSoFar - fopt})
		if o.perRun {
			cur.BestDeltaF = math.Min(cur.BestDeltaF, rec.Best-fopt)
			if rec.Restarted || es.Stopped() != nil {
				cur.Evaluations, runStart = rec.Evaluations-runStart, rec.Evaluations
				cur.Target = cur.BestDeltaF <= o.target
				reasons := rec.Stop
				if rec.Restarted {
					ends := es.Status().RunEnds
					reasons = ends[len(ends)-1].Reasons
				}
				for _, s := range reasons {
					cur.Stop = append(cur.Stop, s.Name)
				}
				res.Runs = append(res.Runs, cur)
				cur = restartRun{Regime: es.Regime(), Lambda: es.Params().Lambda, Sigma0: es.Sigma(), BestDeltaF: math.Inf(1)}
			}
		}
	}
	best, _ := es.Best()
	res.FinalDeltaF = best.F - fopt
	res.Evaluations = es.Evaluations()
	res.Generations = es.Generation()
	res.Restarts = es.Run()
	for _, s := range es.Stopped() {
		res.Stop = append(res.Stop, s.Name)
	}
	return res, nil
}

// scaledTell tells e with k times its run's default c_1 and c_μ (c_c
// unchanged; c_1 + c_μ capped at 0.9 keeping their ratio), in every run or
// the first only: the measurement of docs/algorithm.md §2 of what larger
// rates are worth at the default λ.
func scaledTell(e *cmaes.ES, k float64, firstOnly bool) func([]float64) (cmaes.Record, error) {
	return func(f []float64) (cmaes.Record, error) {
		h := e.Params().Hyper()
		if !firstOnly || e.Run() == 0 {
			h = scaleRates(h, k)
		}
		if err := e.SetHyper(h); err != nil {
			return cmaes.Record{}, err
		}
		return e.Tell(f)
	}
}

// scaleRates returns h with k times its c_1 and c_μ, c_1 + c_μ capped at
// 0.9 keeping their ratio (c_c unchanged).
func scaleRates(h cmaes.Hyper, k float64) cmaes.Hyper {
	h.C1, h.CMu = k*h.C1, k*h.CMu
	if s := h.C1 + h.CMu; s > 0.9 {
		h.C1, h.CMu = h.C1*0.9/s, h.CMu*0.9/s
	}
	return h
}
