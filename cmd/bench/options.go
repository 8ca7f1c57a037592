package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/bbob"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// The algorithms, as named on the command line.
const (
	algCMA  = defaults.CMAES
	algSelf = defaults.SelfCMAES
)

// algOrder is the order of the algorithms in every output.
var algOrder = []string{algCMA, algSelf}

// displayName is the algorithm's name in tables and plots.
func displayName(alg string) string {
	switch alg {
	case algCMA:
		return "CMA-ES"
	case algSelf:
		return "self-CMA-ES"
	}
	return alg
}

// Settings of the experiment that have no flag (docs/algorithm.md §4).
const (
	sigma0  = 2.0
	x0Bound = 4.0 // x0, and restart points unless -paper, uniform in [−x0Bound, x0Bound]^n
)

// The paper's settings (-paper): at most 9 IPOP restarts with λ doubled,
// each from x0.
const (
	paperMaxRestarts = 9
	paperIncPopSize  = 2
)

// Values of -restarts, -active and -restart-point that select the default
// of the mode (-paper or not) for the algorithm.
const flagDefault = "default"

// options is the parsed command line.
type options struct {
	algorithms []string // in algOrder
	functions  []int
	dims       []int
	instances  []int   // one run per instance, in this order
	lambda     int     // 0 = each algorithm's default
	budget     float64 // evaluations per dimension
	target     float64 // on f − f_opt

	// Algorithm settings; flagDefault or 0 = the default of the mode (see
	// config).
	paper         bool
	restarts      string  // flagDefault, or one of defaults.RestartStrategies
	active        string  // flagDefault, true or false
	flatFitness   string  // flagDefault, true or false
	upSigmaMoved  string  // flagDefault, true or false
	tolWorse      string  // flagDefault, or a number ≥ 0 (0: off)
	tolWorseDelta float64 // δ of TolWorse as cmaes takes it (negative: none); 0 = the mode's
	mirrored      string  // flagDefault, true or false
	mirroredSm    string  // flagDefault, true or false
	spareBest     string  // flagDefault, true or false
	meanRate      string  // flagDefault, or one of meanRateRuns
	snr           string  // flagDefault, true or false
	maxRestarts   int
	incPopSize    float64
	restartPoint  string  // flagDefault, x0 or uniform
	sigmaDec      float64 // ρ_σdec of NIPOP/NBIPOP's large runs; 0 = the strategy's
	budgetRatio   float64 // ρ_budget of NBIPOP; 0 = the strategy's
	tolFun        float64 // cmaes.Termination.TolFun; 0 = the default
	tolX          float64 // cmaes.Termination.TolX (absolute); 0 = the default

	noLocalStops bool // only the target and the budget stop a run (-local-stops=false)

	// Measuring knobs, off by default: self-CMA-ES's gate
	// (selfcma.Config.MinLambda, AdaptRestarts) and fixed multiples of
	// CMA-ES's default rates (docs/algorithm.md §2, "Population size").
	minLambda      int
	adaptRestarts  bool
	rateScale      float64
	rateScaleFirst bool
	rateSNR        bool
	rateSNRMax     float64
	rateSNRMin     float64
	snrAlpha       float64 // self-CMA-ES: selfcma.SNRParams.Alpha (0: the default)
	snrBeta        float64 // SNRParams.Beta
	snrEtaMax      float64 // SNRParams.EtaMax
	snrCMuMax      float64 // SNRParams.EtaMax = this / the first run's default c_μ, in [1, η max]
	snrRestarts    float64 // SNRParams.RestartMaxLambda = this × n
	snrEta0        float64 // SNRParams.Eta0
	meanRateAlpha  float64 // cmaes.Config.MeanRateAlpha (0: the default)
	meanRateEtaMin float64 // cmaes.Config.MeanRateEtaMin (0: the default)
	snrSmall       bool    // SNRParams.SmallRestarts
	snrRates       string  // SNRParams.Rates: "both", "cmu" or "" (the default)
	init           string  // selfcma.InitDefault or selfcma.InitUniform
	numerics       int     // cmaes.Config.Numerics: 0 = the latest
	seed           uint64
	tag            string // appended to every label
	json           bool
	perRun         bool   // -per-run
	plots          string // directory, "" = no plots
	verbose        bool
	workers        int

	// Summary mode (-summary): compare the runs of files.
	summary bool
	files   []string
	ref     string // label of the reference algorithm
	metric  string // metricERT or metricDeltaF
	md      bool   // Markdown tables
	// solvedBy: which run of each session reached the target (-solved-by).
	solvedBy bool
	// splitSigma0, splitLambda: with solvedBy, the σ0 and the λ at which
	// the small runs are split into kinds (-split-sigma0, -split-lambda;
	// 0: no split).
	splitSigma0 float64
	splitLambda int
}

// The comparisons of the summary mode.
const (
	metricERT    = "ert"     // ERT to the target; a tie within ±15 %
	metricDeltaF = "delta-f" // median f − f_opt after the budget; within a factor 2
)

func parseOptions(args []string, out io.Writer) (options, error) {
	var (
		o                                  options
		algs, funcs, dims, insts, restarts string
		runs                               int
	)
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bench [flags]                   run BBOB experiments\n       bench -summary [flags] FILE...  compare the runs of files (cmd/bench -json, pycma_bbob.py)")
		fs.PrintDefaults()
	}
	fs.StringVar(&algs, "algorithms", algCMA+","+algSelf, "comma-separated list of "+algCMA+", "+algSelf)
	fs.StringVar(&funcs, "functions", "1,8,10,13", "BBOB functions in 1..24: a comma-separated list, ranges allowed (1-24)")
	fs.StringVar(&dims, "dims", "10,20", "comma-separated dimensions, each ≥ 2")
	fs.IntVar(&runs, "runs", 15, "runs per function, dimension and algorithm; run r uses instance r for r ≤ 5, else 30 + (r − 5) (as -instances 1-5,31-40 for 15)")
	fs.StringVar(&insts, "instances", "", "BBOB instances, one run each, instead of -runs: a comma-separated list, ranges allowed (1-5,31-35)")
	fs.IntVar(&o.lambda, "lambda", 0, "population size λ; 0 = each algorithm's default (CMA-ES 4 + ⌊3 ln n⌋, self-CMA-ES selfcma's default; with -paper max(100, 4 + ⌊3 ln n⌋))")
	fs.Float64Var(&o.budget, "budget", 1e4, "maximum evaluations per dimension, restarts included: a run stops after budget·n evaluations")
	fs.Float64Var(&o.target, "target", 1e-8, "a run succeeds when f − f_opt ≤ target (with -summary -metric delta-f: a median at most target is within)")
	fs.BoolVar(&o.paper, "paper", false, "the paper's setting (Algorithms 1 and 2 as cmd/bench ran them before the defaults package): no active update, no restarts unless -restarts ipop, restarts from x0, self-CMA-ES λ = max(100, default)")
	fs.StringVar(&restarts, "restarts", flagDefault, "none, ipop, bipop, nipop, nbipop, or default: internal/defaults' strategy for the algorithm (none with -paper)")
	fs.StringVar(&o.snr, "snr", flagDefault, "self-CMA-ES: a first run below -min-lambda adapts its c_1 and c_μ by the signal-to-noise rule (selfcma.Config.SNR): true, false, or default: internal/defaults' (false with -paper)")
	fs.StringVar(&o.flatFitness, "flat-fitness", flagDefault, "end a run on pycma's tolflatfitness (2 generations whose best value equals that of rank 0.75λ) instead of cmaes.m's EqualFunValues: true, false, or default: internal/defaults' (false with -paper)")
	fs.StringVar(&o.upSigmaMoved, "up-sigma-moved", flagDefault, "TolUpSigma counts the scale the σ safeguard moved into C, as pycma's tolupsigma (false: it never fires): true, false, or default: internal/defaults' (false with -paper)")
	fs.StringVar(&o.tolWorse, "tol-worse", flagDefault, "end a restart whose recent values lie above an earlier run's best within this times their distance to it (cmaes.Termination.TolWorse, ours): a number ≥ 0 (0: off), or default: internal/defaults' (off with -paper)")
	fs.Float64Var(&o.tolWorseDelta, "tol-worse-delta", 0, "δ of -tol-worse: a restart whose values came within δ times its descent of the best point is not ended (cmaes.Termination.TolWorseDelta); negative: none spared; 0 = internal/defaults' (cmaes.DefaultTolWorseDelta, 10^-3, when it sets none)")
	fs.StringVar(&o.mirrored, "mirrored", flagDefault, "mirrored sampling in the first run (cmaes.Config.MirroredFirstRun; pycma's CMA_mirrors = 0.5, CMA_mirrormethod = 0): true, false, or default: internal/defaults' (false with -paper)")
	fs.StringVar(&o.meanRate, "mean-rate", flagDefault, "the runs that adapt the mean's learning rate by LRA-CMA-ES's rule (cmaes.Config.MeanRateSmallRuns, MeanRateLargeRuns): none, small (BIPOP's small runs), large (the large restarts), both, or default: internal/defaults' (none with -paper)")
	fs.Float64Var(&o.meanRateAlpha, "mean-rate-alpha", 0, "α of the mean's learning-rate rule (cmaes.Config.MeanRateAlpha); 0 = the default (cmaes.DefaultMeanRateAlpha, 0.7: half LRA's 1.4). A measuring knob")
	fs.Float64Var(&o.meanRateEtaMin, "mean-rate-eta-min", 0, "the smallest η_m of the mean's learning-rate rule (cmaes.Config.MeanRateEtaMin), in (0, 1]; 0 = the default (cmaes.DefaultMeanRateEtaMin, 0.5). A measuring knob")
	fs.StringVar(&o.spareBest, "spare-best-small", flagDefault, "BIPOP, NBIPOP: a small run that found the best point so far outlives its generation limit (cmaes.Restarts.SpareBestSmall): true, false, or default: internal/defaults' (false with -paper)")
	fs.StringVar(&o.mirroredSm, "mirrored-small", flagDefault, "mirrored sampling in BIPOP's small runs (cmaes.Config.MirroredSmallRuns): true, false, or default: internal/defaults' (false with -paper)")
	fs.StringVar(&o.active, "active", flagDefault, "active covariance update (pycma's CMA_active): true, false, or default: internal/defaults' (false with -paper)")
	fs.IntVar(&o.maxRestarts, "max-restarts", 0, "at most this many (large) restarts; 0 = the default (internal/defaults', 9 with -paper)")
	fs.Float64Var(&o.incPopSize, "incpopsize", 0, "λ factor at an IPOP or large BIPOP restart; 0 = the default (internal/defaults', 2 with -paper)")
	fs.Float64Var(&o.sigmaDec, "sigma-dec", 0, "σ0 of the k-th large restart divided by this^k (NIPOP, NBIPOP: 1.6); 0 = the strategy's. A measuring knob")
	fs.Float64Var(&o.budgetRatio, "budget-ratio", 0, "BIPOP: the regime of the best point gets this times the other's evaluations (NBIPOP: 2); 0 = the strategy's. A measuring knob")
	fs.Float64Var(&o.tolFun, "tolfun", 0, "TolFun of docs/algorithm.md §1, Termination (pycma's tolfun: 1e-11); 0 = the default 1e-12. A measuring knob")
	fs.Float64Var(&o.tolX, "tolx", 0, "TolX, absolute (pycma's tolx: 1e-11); 0 = the default 1e-12·σ0. A measuring knob")
	fs.StringVar(&o.restartPoint, "restart-point", flagDefault, "where a restart's mean starts: uniform in [−4, 4]^n (the BBOB protocol), x0, or default: uniform (x0 with -paper)")
	localStops := true
	fs.BoolVar(&localStops, "local-stops", true, "stop a run on the local termination criteria of docs/algorithm.md §1 too (TolFun, TolX, NoEffectAxis, NoEffectCoord, ConditionCov, Stagnation, EqualFunValues, TolUpSigma); false: only the target and the budget stop it")
	fs.IntVar(&o.minLambda, "min-lambda", 0, "self-CMA-ES: the smallest λ of a run that self-adapts its rates; 0 = the default (10n), 1 = every λ (the paper's)")
	fs.BoolVar(&o.adaptRestarts, "adapt-restarts", false, "self-CMA-ES: restarts self-adapt too when their λ ≥ -min-lambda (the paper's; default: the first run only)")
	fs.Float64Var(&o.rateScale, "rate-scale", 0, "CMA-ES: use k times the default c_1 and c_μ in every generation (capped at c_1 + c_μ = 0.9); 0 or 1 = the defaults. A measuring knob, not a session setting")
	fs.BoolVar(&o.rateScaleFirst, "rate-scale-first", false, "with -rate-scale: scale the rates of the first run only, restarts use the defaults")
	fs.Float64Var(&o.rateSNRMax, "rate-snr-max", 3, "with -rate-snr: the largest η")
	fs.Float64Var(&o.rateSNRMin, "rate-snr-min", 0, "with -rate-snr: the smallest η (0: no bound)")
	fs.BoolVar(&o.rateSNR, "rate-snr", false, "CMA-ES: in the first run, η times the default c_1 and c_μ, η adapted by LRA-CMA-ES's signal-to-noise rule (docs/algorithm.md §2, table 9). A measuring knob, not a session setting")
	fs.Float64Var(&o.snrAlpha, "snr-alpha", 0, "self-CMA-ES: α of the signal-to-noise rule, the target of SNR/η; 0 = the default (selfcma.SNRAlphaCMu, 0.01; with -snr-rates both selfcma.SNRAlphaFor(n): 0.01 for n from 15 to 28, else 0.02; 0.02 at every n with -mirrored). A measuring knob")
	fs.Float64Var(&o.snrBeta, "snr-beta", 0, "self-CMA-ES: β of the signal-to-noise rule, the smoothing of E and V; 0 = the default (selfcma.SNRBeta). A measuring knob")
	fs.Float64Var(&o.snrCMuMax, "snr-cmu-max", 0, "self-CMA-ES: the largest c_μ the signal-to-noise rule may reach: η ≤ this / the first run's default c_μ, within [1, -snr-eta-max or selfcma.SNREtaMaxFor(λ, n): 3 up to the default λ, 1.5 above]; 0 = the default (selfcma.SNRCMuMax, 0.5; -snr-eta-max alone: no such bound). A measuring knob")
	fs.Float64Var(&o.snrEtaMax, "snr-eta-max", 0, "self-CMA-ES: the largest η of the signal-to-noise rule; 0 = the default (selfcma.SNREtaMax; with the rule on c_μ alone selfcma.SNREtaMaxFor(λ, n), 1.5 above the default λ, and at most selfcma.SNRCMuMax / the first run's c_μ). A measuring knob")
	fs.Float64Var(&o.snrEta0, "snr-eta0", 0, "self-CMA-ES: η at the start of a run of the signal-to-noise rule; 0 = the default (selfcma.SNREta0CMu, 2; 1 with -snr-rates both). A measuring knob")
	fs.StringVar(&o.snrRates, "snr-rates", flagDefault, "self-CMA-ES: the rates the signal-to-noise rule's η multiplies: cmu (c_μ alone), both (c_1 and c_μ, the rule of sessions before state encoding 16), or default: selfcma's (cmu). A measuring knob")
	fs.BoolVar(&o.snrSmall, "snr-small-restarts", false, "self-CMA-ES: BIPOP's small runs use the signal-to-noise rule too, each from a fresh state. A measuring knob")
	fs.Float64Var(&o.snrRestarts, "snr-restarts", 0, "self-CMA-ES: restarts with λ ≤ this × n use the signal-to-noise rule too, each from a fresh state; 0 = the first run only. A measuring knob")
	fs.StringVar(&o.init, "init", selfcma.InitDefault, "initial mean of self-CMA-ES's auxiliary CMA-ES: default or uniform")
	fs.IntVar(&o.numerics, "numerics", 0, "numerics version of the eigendecomposition and sampling (docs/algorithm.md §3): 1, 2, 3, 4 (3 with the lazy update of B and D; cma-es only), 6 (4 with purecma's gap, five times longer; cma-es only), 5 (3 with h_t by the Woodbury identity; self-cma-es only), or 0 = a new session's (cma-es: 6 from n = 100, else 3; recorded as 3)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of x0 and of the algorithms' random streams")
	fs.StringVar(&o.tag, "tag", "", "appended to every algorithm label (as +tag), to tell apart runs of the same flags, from another build say")
	fs.BoolVar(&o.perRun, "per-run", false, "with -json: each run's restarts too (\"per_run\": regime, λ, σ0, evaluations, stop reasons, best f − f_opt of each)")
	fs.BoolVar(&o.json, "json", false, "print one JSON object per run, then one per summary, instead of the table")
	fs.StringVar(&o.plots, "plots", "", "write one SVG per function and dimension into this directory")
	fs.BoolVar(&o.verbose, "v", false, "report every finished run on stderr")
	fs.BoolVar(&o.summary, "summary", false, "compare the runs in the files named as arguments (-json lines of cmd/bench, lines of pycma_bbob.py) instead of running")
	fs.StringVar(&o.ref, "ref", "pycma-bipop", "with -summary: the label of the reference algorithm")
	fs.StringVar(&o.metric, "metric", metricERT, "with -summary: ert (ERT to the target; a tie within ±15 %) or delta-f (median f − f_opt after the budget; within a factor 2 of the reference or better)")
	fs.BoolVar(&o.md, "md", false, "with -summary: Markdown tables")
	fs.BoolVar(&o.solvedBy, "solved-by", false, "with -summary, for runs made with -json -per-run: which run of each session reached the target (regime and λ), and each kind of run's count and mean evaluations, instead of the comparison (plain text)")
	fs.Float64Var(&o.splitSigma0, "split-sigma0", 0, "with -solved-by: report BIPOP's small runs as two kinds, σ0 below this value and at or above it")
	fs.IntVar(&o.splitLambda, "split-lambda", 0, "with -solved-by: report BIPOP's small runs as two kinds, λ at most this value and above it")

	// Flags may follow the files of -summary.
	for {
		if err := fs.Parse(args); err != nil {
			return options{}, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.files = append(o.files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if o.summary {
		return o, o.checkSummary()
	}
	if len(o.files) > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q (files are for -summary)", o.files)
	}
	if o.solvedBy {
		return options{}, fmt.Errorf("-solved-by reads files: use it with -summary")
	}
	o.noLocalStops = !localStops
	o.workers = runtime.GOMAXPROCS(0)
	o.restarts = restarts
	if err := o.setExperiment(algs, funcs, dims, insts, runs, set["instances"], set["runs"]); err != nil {
		return options{}, err
	}
	if err := o.checkValues(); err != nil {
		return options{}, err
	}
	if err := o.checkNames(); err != nil {
		return options{}, err
	}
	if err := o.checkTolWorse(); err != nil {
		return options{}, err
	}
	return o, nil
}

// checkSummary checks the options of -summary.
func (o *options) checkSummary() error {
	switch {
	case len(o.files) == 0:
		return fmt.Errorf("-summary: name the files to compare")
	case o.metric != metricERT && o.metric != metricDeltaF:
		return fmt.Errorf("-metric %q: want %s or %s", o.metric, metricERT, metricDeltaF)
	case !(o.target >= 0) || math.IsInf(o.target, 0):
		return fmt.Errorf("-target %v: want a finite value ≥ 0", o.target)
	case o.splitSigma0 != 0 && !o.solvedBy:
		return fmt.Errorf("-split-sigma0 splits the small runs of -solved-by: use it with -solved-by")
	case !(o.splitSigma0 >= 0) || math.IsInf(o.splitSigma0, 0):
		return fmt.Errorf("-split-sigma0 %v: want a finite σ0 > 0 (0: no split)", o.splitSigma0)
	case o.splitLambda != 0 && !o.solvedBy:
		return fmt.Errorf("-split-lambda splits the small runs of -solved-by: use it with -solved-by")
	case o.splitLambda < 0:
		return fmt.Errorf("-split-lambda %d: want a λ > 0 (0: no split)", o.splitLambda)
	}
	return nil
}

// setExperiment sets the algorithms, functions, dimensions and instances
// of the runs from their flags' values; hasInsts and hasRuns say whether
// -instances and -runs were given.
func (o *options) setExperiment(algs, funcs, dims, insts string, runs int, hasInsts, hasRuns bool) error {
	var named []string
	for _, a := range strings.Split(algs, ",") {
		a = strings.ToLower(strings.TrimSpace(a))
		if !slices.Contains(algOrder, a) {
			return fmt.Errorf("-algorithms: unknown algorithm %q (want %s or %s)", a, algCMA, algSelf)
		}
		named = append(named, a)
	}
	for _, a := range algOrder {
		if slices.Contains(named, a) {
			o.algorithms = append(o.algorithms, a)
		}
	}
	var err error
	if o.functions, err = parseInts("-functions", funcs, 1, bbob.NumFunctions); err != nil {
		return err
	}
	if o.dims, err = parseInts("-dims", dims, 2, math.MaxInt32); err != nil {
		return err
	}
	switch {
	case hasInsts && hasRuns:
		return fmt.Errorf("-runs and -instances: give one of them")
	case hasInsts:
		if o.instances, err = parseInts("-instances", insts, 1, math.MaxInt32); err != nil {
			return err
		}
		if _, err := bbob.New(1, 2, slices.Max(o.instances)); err != nil {
			return fmt.Errorf("-instances: %w", err)
		}
	case runs < 1:
		return fmt.Errorf("-runs %d: want at least 1", runs)
	default:
		for r := 1; r <= runs; r++ {
			o.instances = append(o.instances, instance(r))
		}
	}
	return nil
}

// checkValues checks the numeric options and the tag of the runs.
func (o *options) checkValues() error {
	switch {
	case o.lambda != 0 && o.lambda < 2:
		return fmt.Errorf("-lambda %d: want 0 or at least 2", o.lambda)
	case o.numerics < 0 || o.numerics > cmaes.NumericsLazyLong:
		return fmt.Errorf("-numerics %d: want 0 (the latest) to %d", o.numerics, cmaes.NumericsLazyLong)
	case o.numerics == cmaes.NumericsLazyLong && slices.Contains(o.algorithms, algSelf):
		return fmt.Errorf("-numerics %d: for %s only", o.numerics, algCMA)
	case o.numerics == selfcma.NumericsWoodbury && slices.Contains(o.algorithms, algCMA):
		return fmt.Errorf("-numerics %d: for %s only", o.numerics, algSelf)
	case !(o.budget > 0) || math.IsInf(o.budget, 0):
		return fmt.Errorf("-budget %v: want a finite value > 0", o.budget)
	case !(o.target >= 0) || math.IsInf(o.target, 0):
		return fmt.Errorf("-target %v: want a finite value ≥ 0", o.target)
	case o.maxRestarts < 0:
		return fmt.Errorf("-max-restarts %d: want at least 1, or 0 for the default (-restarts none for none)", o.maxRestarts)
	case o.incPopSize != 0 && !(o.incPopSize >= 1) || math.IsInf(o.incPopSize, 0):
		return fmt.Errorf("-incpopsize %v: want a finite value ≥ 1, or 0 for the default", o.incPopSize)
	case o.minLambda < 0:
		return fmt.Errorf("-min-lambda %d: want 0 (the default) or at least 1", o.minLambda)
	case o.noLocalStops && (o.tolFun != 0 || o.tolX != 0 || given(o.tolWorse) || o.tolWorseDelta != 0):
		return fmt.Errorf("-tolfun, -tolx, -tol-worse, -tol-worse-delta with -local-stops=false: the local criteria are off")
	case strings.ContainsAny(o.tag, " \t\n"):
		return fmt.Errorf("-tag %q: want no blanks", o.tag)
	}
	return o.checkRateKnobs()
}

// checkRateKnobs checks the measuring knobs of the learning rates.
func (o *options) checkRateKnobs() error {
	switch {
	case o.rateScale < 0 || math.IsNaN(o.rateScale) || math.IsInf(o.rateScale, 0):
		return fmt.Errorf("-rate-scale %v: want a finite value > 0, or 0 for the defaults", o.rateScale)
	case o.snrCMuMax < 0:
		return fmt.Errorf("-snr-cmu-max %v: want ≥ 0", o.snrCMuMax)
	case o.snrAlpha < 0 || o.snrBeta < 0 || o.snrBeta >= 1 || o.snrEtaMax != 0 && o.snrEtaMax < 1 || o.snrRestarts < 0 ||
		o.snrEta0 != 0 && (o.snrEta0 < 1 || o.snrEta0 > cmp.Or(o.snrEtaMax, selfcma.SNREtaMax)):
		return fmt.Errorf("-snr-alpha %v, -snr-beta %v, -snr-eta-max %v, -snr-eta0 %v, -snr-restarts %v: want α ≥ 0, β in [0, 1), η max 0 or ≥ 1, η0 0 or in [1, η max], restarts ≥ 0",
			o.snrAlpha, o.snrBeta, o.snrEtaMax, o.snrEta0, o.snrRestarts)
	case o.rateSNR && o.rateScale != 0:
		return fmt.Errorf("-rate-snr and -rate-scale: give one of them")
	}
	if _, err := selfcma.ParseSNRRates(o.snrRates); err != nil {
		return fmt.Errorf("-snr-rates %q: want cmu, both or default", o.snrRates)
	}
	return nil
}

// checkNames checks the options that name a choice.
func (o *options) checkNames() error {
	switch {
	case o.init != selfcma.InitDefault && o.init != selfcma.InitUniform:
		return fmt.Errorf("-init %q: want %s or %s", o.init, selfcma.InitDefault, selfcma.InitUniform)
	case o.restarts != flagDefault && !slices.Contains(defaults.RestartStrategies, o.restarts):
		return fmt.Errorf("-restarts %q: want %s or default", o.restarts, strings.Join(defaults.RestartStrategies, ", "))
	case o.sigmaDec != 0 && !(o.sigmaDec >= 1) || math.IsInf(o.sigmaDec, 0):
		return fmt.Errorf("-sigma-dec %v: want a finite value ≥ 1, or 0 for the strategy's", o.sigmaDec)
	case !(o.tolFun >= 0) || !(o.tolX >= 0) || math.IsInf(o.tolFun, 0) || math.IsInf(o.tolX, 0):
		return fmt.Errorf("-tolfun %v, -tolx %v: want finite values > 0, or 0 for the defaults", o.tolFun, o.tolX)
	case o.budgetRatio != 0 && !(o.budgetRatio >= 1) || math.IsInf(o.budgetRatio, 0):
		return fmt.Errorf("-budget-ratio %v: want a finite value ≥ 1, or 0 for the strategy's", o.budgetRatio)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.active):
		return fmt.Errorf("-active %q: want true, false or default", o.active)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.flatFitness):
		return fmt.Errorf("-flat-fitness %q: want true, false or default", o.flatFitness)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.upSigmaMoved):
		return fmt.Errorf("-up-sigma-moved %q: want true, false or default", o.upSigmaMoved)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.mirrored):
		return fmt.Errorf("-mirrored %q: want true, false or default", o.mirrored)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.mirroredSm):
		return fmt.Errorf("-mirrored-small %q: want true, false or default", o.mirroredSm)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.spareBest):
		return fmt.Errorf("-spare-best-small %q: want true, false or default", o.spareBest)
	case o.meanRate != flagDefault && !slices.Contains(meanRateRuns, o.meanRate):
		return fmt.Errorf("-mean-rate %q: want %s or default", o.meanRate, strings.Join(meanRateRuns, ", "))
	case !(o.meanRateAlpha >= 0) || math.IsInf(o.meanRateAlpha, 0):
		return fmt.Errorf("-mean-rate-alpha %v: want a finite value > 0, or 0 for the default", o.meanRateAlpha)
	case !(o.meanRateEtaMin >= 0 && o.meanRateEtaMin <= 1):
		return fmt.Errorf("-mean-rate-eta-min %v: want a value in (0, 1], or 0 for the default", o.meanRateEtaMin)
	case !slices.Contains([]string{flagDefault, "true", "false"}, o.snr):
		return fmt.Errorf("-snr %q: want true, false or default", o.snr)
	case !slices.Contains([]string{flagDefault, defaults.PointX0, defaults.PointUniform}, o.restartPoint):
		return fmt.Errorf("-restart-point %q: want uniform, x0 or default", o.restartPoint)
	}
	return nil
}

// parseInts parses a comma-separated list of integers and ranges a-b in
// [lo, hi], sorted and without duplicates.
func parseInts(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		a, b, isRange := strings.Cut(f, "-")
		first, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an integer or a range a-b", name, f)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || last < first {
				return nil, fmt.Errorf("%s: %q is not a range a-b with a ≤ b", name, f)
			}
		}
		if first < lo || last > hi {
			return nil, fmt.Errorf("%s: %s not in %d..%d", name, f, lo, hi)
		}
		for v := first; v <= last; v++ {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// maxEvaluations is the budget of a run in dimension n.
func (o options) maxEvaluations(n int) int {
	return int(math.Ceil(o.budget * float64(n)))
}

// algConfig is the configuration an algorithm runs with: the defaults of
// the mode (internal/defaults, or the paper's with -paper) and the flags
// that override them.
type algConfig struct {
	Algorithm     string  `json:"algorithm"` // algCMA or algSelf
	Paper         bool    `json:"paper"`
	Active        bool    `json:"active"`
	Restarts      string  `json:"restarts"`     // one of defaults.RestartStrategies
	MaxRestarts   int     `json:"max_restarts"` // (large) restarts
	IncPopSize    float64 `json:"incpopsize"`
	RestartPoint  string  `json:"restart_point"` // x0 or uniform (in [−4, 4]^n)
	Lambda        int     `json:"lambda"`        // 0 = the default
	Init          string  `json:"init,omitempty"`
	SNR           bool    `json:"snr,omitempty"`              // self-CMA-ES: selfcma.Config.SNR
	FlatFitness   bool    `json:"flat_fitness,omitempty"`     // cmaes.Termination.FlatFitness
	UpSigmaMoved  bool    `json:"up_sigma_moved,omitempty"`   // cmaes.Termination.UpSigmaMoved
	TolWorse      float64 `json:"tol_worse,omitempty"`        // cmaes.Termination.TolWorse; 0 = off
	TolWorseDelta float64 `json:"tol_worse_delta,omitempty"`  // cmaes.Termination.TolWorseDelta; 0 = cmaes's default
	Mirrored      bool    `json:"mirrored,omitempty"`         // cmaes.Config.MirroredFirstRun
	MirroredSm    bool    `json:"mirrored_small,omitempty"`   // cmaes.Config.MirroredSmallRuns
	SpareBest     bool    `json:"spare_best_small,omitempty"` // cmaes.Restarts.SpareBestSmall (BIPOP, NBIPOP)
	MeanRate      string  `json:"mean_rate,omitempty"`        // one of meanRateRuns; "" = none
	// Measuring knobs (cmd/bench only).
	MinLambda      int     `json:"min_lambda,omitempty"`
	AdaptRestarts  bool    `json:"adapt_restarts,omitempty"`
	RateScale      float64 `json:"rate_scale,omitempty"`
	RateScaleFirst bool    `json:"rate_scale_first,omitempty"`
	RateSNR        bool    `json:"rate_snr,omitempty"`
	RateSNRMax     float64 `json:"rate_snr_max,omitempty"`
	RateSNRMin     float64 `json:"rate_snr_min,omitempty"`
	SNRAlpha       float64 `json:"snr_alpha,omitempty"`
	SNRBeta        float64 `json:"snr_beta,omitempty"`
	SNREtaMax      float64 `json:"snr_eta_max,omitempty"`
	SNRCMuMax      float64 `json:"snr_cmu_max,omitempty"`
	SNRRestarts    float64 `json:"snr_restarts,omitempty"` // × n
	SNREta0        float64 `json:"snr_eta0,omitempty"`
	SNRSmall       bool    `json:"snr_small_restarts,omitempty"`
	SNRRates       string  `json:"snr_rates,omitempty"` // "both", "cmu"; "" = the default
	MeanRateAlpha  float64 `json:"mean_rate_alpha,omitempty"`
	MeanRateEtaMin float64 `json:"mean_rate_eta_min,omitempty"`
	SigmaDec       float64 `json:"sigma_dec,omitempty"`    // ρ_σdec; 0 = the strategy's
	BudgetRatio    float64 `json:"budget_ratio,omitempty"` // ρ_budget; 0 = the strategy's
	TolFun         float64 `json:"tolfun,omitempty"`
	TolX           float64 `json:"tolx,omitempty"`
	LocalStops     bool    `json:"local_stops"`
	Numerics       int     `json:"numerics"`
	Budget         float64 `json:"budget"` // per dimension
	Target         float64 `json:"target"`
	Seed           uint64  `json:"seed"`
	Tag            string  `json:"tag,omitempty"`
}

// baseConfig is the configuration of alg in the mode of o with no
// algorithm flag.
func (o options) baseConfig(alg string) algConfig {
	c := algConfig{
		Algorithm: alg, Paper: o.paper, LocalStops: true,
		Budget: o.budget, Target: o.target, Seed: o.seed, Tag: o.tag,
	}
	if alg == algSelf {
		c.Init = selfcma.InitDefault
	}
	if o.paper {
		c.Restarts, c.MaxRestarts, c.IncPopSize = defaults.RestartsNone, paperMaxRestarts, paperIncPopSize
		c.RestartPoint = defaults.PointX0
		return c
	}
	d := defaults.For(alg)
	c.Active, c.Restarts, c.MaxRestarts, c.IncPopSize = d.Active, d.Restarts, d.MaxRestarts, d.IncPopSize
	c.SNR = alg == algSelf && d.SNR
	c.FlatFitness, c.UpSigmaMoved, c.Mirrored, c.MirroredSm = d.FlatFitness, d.UpSigmaMoved, d.MirroredFirstRun, d.MirroredSmallRuns
	c.TolWorse, c.TolWorseDelta, c.SpareBest = d.TolWorse, d.TolWorseDelta, d.SpareBestSmall
	c.MeanRate = meanRateName(d.MeanRateSmallRuns, d.MeanRateLargeRuns)
	if c.MaxRestarts == 0 {
		c.MaxRestarts = cmaes.DefaultMaxRestarts
	}
	if c.IncPopSize == 0 {
		c.IncPopSize = cmaes.DefaultIncPopSize
	}
	// The BBOB protocol draws every restart point in [−4, 4]^n, whatever
	// a session does without a region.
	c.RestartPoint = defaults.PointUniform
	return c
}

// config is the configuration alg runs with.
func (o options) config(alg string) algConfig {
	c := o.baseConfig(alg)
	if given(o.restarts) {
		c.Restarts = o.restarts
	}
	if given(o.active) {
		c.Active = o.active == "true"
	}
	if given(o.flatFitness) {
		c.FlatFitness = o.flatFitness == "true"
	}
	if given(o.upSigmaMoved) {
		c.UpSigmaMoved = o.upSigmaMoved == "true"
	}
	if given(o.tolWorse) {
		c.TolWorse = parseTolWorse(o.tolWorse)
	}
	if o.tolWorseDelta != 0 {
		c.TolWorseDelta = o.tolWorseDelta
	}
	if given(o.mirrored) {
		c.Mirrored = o.mirrored == "true"
	}
	if given(o.mirroredSm) {
		c.MirroredSm = o.mirroredSm == "true"
	}
	if given(o.spareBest) {
		c.SpareBest = o.spareBest == "true"
	}
	if given(o.meanRate) {
		c.MeanRate = o.meanRate
		if c.MeanRate == meanRateNone {
			c.MeanRate = ""
		}
	}
	c.MeanRateAlpha, c.MeanRateEtaMin = o.meanRateAlpha, o.meanRateEtaMin
	if given(o.snr) && alg == algSelf {
		c.SNR = o.snr == "true"
	}
	if o.maxRestarts != 0 {
		c.MaxRestarts = o.maxRestarts
	}
	if o.incPopSize != 0 {
		c.IncPopSize = o.incPopSize
	}
	c.SigmaDec, c.BudgetRatio = o.sigmaDec, o.budgetRatio
	if given(o.restartPoint) {
		c.RestartPoint = o.restartPoint
	}
	c.Lambda = o.lambda
	if alg == algSelf && o.init != "" {
		c.Init = o.init
	}
	if alg == algSelf {
		c.MinLambda, c.AdaptRestarts = o.minLambda, o.adaptRestarts
		c.SNRAlpha, c.SNRBeta, c.SNREtaMax, c.SNRRestarts, c.SNREta0 = o.snrAlpha, o.snrBeta, o.snrEtaMax, o.snrRestarts, o.snrEta0
		c.SNRSmall, c.SNRCMuMax = o.snrSmall, o.snrCMuMax
		if o.snrRates != flagDefault {
			c.SNRRates = o.snrRates
		}
	}
	if alg == algCMA {
		c.RateSNR = o.rateSNR
		if o.rateSNR && o.rateSNRMax != snrEtaMax {
			c.RateSNRMax = o.rateSNRMax
		}
		if o.rateSNR {
			c.RateSNRMin = o.rateSNRMin
		}
	}
	if alg == algCMA && o.rateScale != 0 && o.rateScale != 1 {
		c.RateScale, c.RateScaleFirst = o.rateScale, o.rateScaleFirst
	}
	c.TolFun, c.TolX = o.tolFun, o.tolX
	c.LocalStops = !o.noLocalStops
	if o.noLocalStops {
		c.TolWorse = 0
	}
	c.Numerics = o.numerics
	if c.Numerics == 0 {
		c.Numerics = cmaes.NumericsLatest // recorded, as the latest changes
	}
	return c
}

// checkTolWorse checks -tol-worse and -tol-worse-delta.
func (o *options) checkTolWorse() error {
	switch {
	case given(o.tolWorse) && !(parseTolWorse(o.tolWorse) >= 0):
		return fmt.Errorf("-tol-worse %q: want a finite number ≥ 0 (0: off) or default", o.tolWorse)
	case math.IsNaN(o.tolWorseDelta) || math.IsInf(o.tolWorseDelta, 0):
		return fmt.Errorf("-tol-worse-delta %v: want a finite number (negative: none; 0: the default)", o.tolWorseDelta)
	}
	return nil
}

// tolWorseLabel is label's part for TolWorse: its ε where it is not the
// mode's, then its δ where that is not the mode's and the criterion is on.
func tolWorseLabel(c, base algConfig) []string {
	var parts []string
	if c.TolWorse != base.TolWorse && c.LocalStops {
		parts = append(parts, "tol-worse="+strconv.FormatFloat(c.TolWorse, 'g', -1, 64))
	}
	if c.TolWorseDelta != base.TolWorseDelta && c.TolWorse > 0 && c.LocalStops {
		parts = append(parts, "tol-worse-delta="+strconv.FormatFloat(c.TolWorseDelta, 'g', -1, 64))
	}
	return parts
}

// parseTolWorse is -tol-worse's number; NaN if it is none, or not finite.
func parseTolWorse(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// given reports whether a string setting is given: not flagDefault or "".
func given(s string) bool { return s != "" && s != flagDefault }

// label names the configuration c in the mode of o: the algorithm, then
// +paper and one +setting for each setting that is not the mode's default
// ("cma-es" is CMA-ES as a new session runs it, "self-cma-es+ipop+lambda=50"
// one with IPOP restarts and λ = 50), then +tag.
func (o options) label(c algConfig) string {
	base := o.baseConfig(c.Algorithm)
	parts := []string{c.Algorithm}
	if c.Paper {
		parts = append(parts, "paper")
	}
	if c.Restarts != base.Restarts {
		if c.Restarts == defaults.RestartsNone {
			parts = append(parts, "no-restarts")
		} else {
			parts = append(parts, c.Restarts)
		}
	}
	for _, b := range []struct {
		got, base bool
		on, off   string
	}{
		{c.Active, base.Active, "active", "passive"},
		{c.SNR, base.SNR, "snr", "no-snr"},
		{c.FlatFitness, base.FlatFitness, "tolflat", "equalfun"},
		{c.UpSigmaMoved, base.UpSigmaMoved, "upsigma-moved", "upsigma-unmoved"},
		{c.Mirrored, base.Mirrored, "mirrored", "unmirrored"},
		{c.MirroredSm, base.MirroredSm, "mirrored-small", "unmirrored-small"},
	} {
		if b.got != b.base {
			parts = append(parts, map[bool]string{true: b.on, false: b.off}[b.got])
		}
	}
	if c.MeanRate != base.MeanRate {
		parts = append(parts, "mean-rate="+cmp.Or(c.MeanRate, meanRateNone))
	}
	parts = append(parts, tolWorseLabel(c, base)...)
	if c.Restarts != defaults.RestartsNone {
		if c.MaxRestarts != base.MaxRestarts {
			parts = append(parts, "max-restarts="+strconv.Itoa(c.MaxRestarts))
		}
		if c.IncPopSize != base.IncPopSize {
			parts = append(parts, "incpopsize="+strconv.FormatFloat(c.IncPopSize, 'g', -1, 64))
		}
		if c.RestartPoint != base.RestartPoint {
			parts = append(parts, "restart-point="+c.RestartPoint)
		}
	}
	if rs, _ := defaults.Restarts(c.Restarts); rs.BIPOP && c.SpareBest != base.SpareBest {
		parts = append(parts, map[bool]string{true: "spare-best-small", false: "no-spare-best-small"}[c.SpareBest])
	}
	if c.Lambda != 0 {
		parts = append(parts, "lambda="+strconv.Itoa(c.Lambda))
	}
	if c.Init != base.Init {
		parts = append(parts, "init="+c.Init)
	}
	if c.MinLambda != 0 {
		parts = append(parts, "min-lambda="+strconv.Itoa(c.MinLambda))
	}
	if c.AdaptRestarts {
		parts = append(parts, "adapt-restarts")
	}
	for _, k := range []struct {
		name string
		v    float64
	}{{"snr-alpha", c.SNRAlpha}, {"snr-beta", c.SNRBeta}, {"snr-eta-max", c.SNREtaMax}, {"snr-cmu-max", c.SNRCMuMax}, {"snr-restarts", c.SNRRestarts}, {"snr-eta0", c.SNREta0}, {"mean-rate-alpha", c.MeanRateAlpha}, {"mean-rate-eta-min", c.MeanRateEtaMin}, {"sigma-dec", c.SigmaDec}, {"budget-ratio", c.BudgetRatio}, {"tolfun", c.TolFun}, {"tolx", c.TolX}} {
		if k.v != 0 {
			parts = append(parts, k.name+"="+strconv.FormatFloat(k.v, 'g', -1, 64))
		}
	}
	if c.SNRSmall {
		parts = append(parts, "snr-small-restarts")
	}
	if c.SNRRates != "" {
		parts = append(parts, "snr-rates="+c.SNRRates)
	}
	if c.RateScale != 0 {
		k := "rate-scale="
		if c.RateScaleFirst {
			k = "rate-scale-first="
		}
		parts = append(parts, k+strconv.FormatFloat(c.RateScale, 'g', -1, 64))
	}
	if c.RateSNR {
		parts = append(parts, "rate-snr")
		if c.RateSNRMax != 0 {
			parts = append(parts, "rate-snr-max="+strconv.FormatFloat(c.RateSNRMax, 'g', -1, 64))
		}
		if c.RateSNRMin != 0 {
			parts = append(parts, "rate-snr-min="+strconv.FormatFloat(c.RateSNRMin, 'g', -1, 64))
		}
	}
	if !c.LocalStops {
		parts = append(parts, "no-local-stops")
	}
	if c.Numerics != cmaes.NumericsLatest {
		parts = append(parts, "numerics="+strconv.Itoa(c.Numerics))
	}
	if c.Tag != "" {
		parts = append(parts, c.Tag)
	}
	return strings.Join(parts, "+")
}

// describe says what c runs, for the line above the table.
func (c algConfig) describe() string {
	var s []string
	if c.Paper {
		s = append(s, "paper")
	}
	s = append(s, map[bool]string{true: "active", false: "no active"}[c.Active]+" update")
	switch c.Restarts {
	case defaults.RestartsNone:
		s = append(s, "no restarts")
	default:
		from := "x0"
		if c.RestartPoint == defaults.PointUniform {
			from = fmt.Sprintf("uniform points of [−%g, %g]^n", x0Bound, x0Bound)
		}
		s = append(s, fmt.Sprintf("%s restarts (at most %d, λ × %g, from %s)", strings.ToUpper(c.Restarts), c.MaxRestarts, c.IncPopSize, from))
	}
	if c.Lambda > 0 {
		s = append(s, fmt.Sprintf("λ = %d", c.Lambda))
	} else if c.Paper && c.Algorithm == algSelf {
		s = append(s, fmt.Sprintf("λ = max(%d, default)", selfcma.PaperLambda))
	} else {
		s = append(s, "default λ")
	}
	if c.Algorithm == algSelf {
		s = append(s, "init "+c.Init)
	}
	if !c.LocalStops {
		s = append(s, "no local termination criteria")
	}
	return strings.Join(s, ", ")
}

// describe is the text above the table: everything needed to rerun it.
func (o options) describe() string {
	numerics := "latest"
	if o.numerics != 0 {
		numerics = strconv.Itoa(o.numerics)
	}
	out := fmt.Sprintf("%d runs (instances %s), x0 ~ U[−%g, %g]^n, σ0 = %g, target f − f_opt ≤ %g, budget %g·n evaluations, numerics %s, seed %d",
		len(o.instances), formatInstances(o.instances), x0Bound, x0Bound, sigma0, o.target, o.budget, numerics, o.seed)
	for _, a := range o.algorithms {
		c := o.config(a)
		out += fmt.Sprintf("\n%s (%s): %s", displayName(a), o.label(c), c.describe())
	}
	return out
}

// formatInstances describes a sorted list of instances, as "1–5, 31–40".
func formatInstances(insts []int) string {
	var parts []string
	for i := 0; i < len(insts); {
		j := i
		for j+1 < len(insts) && insts[j+1] == insts[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(insts[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", insts[i], insts[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// The values of -mean-rate: the runs that adapt the mean's learning rate.
const (
	meanRateNone  = "none"
	meanRateSmall = "small"
	meanRateLarge = "large"
	meanRateBoth  = "both"
)

var meanRateRuns = []string{meanRateNone, meanRateSmall, meanRateLarge, meanRateBoth}

// meanRateName is algConfig.MeanRate of the flags of cmaes.Config ("" for
// none).
func meanRateName(small, large bool) string {
	switch {
	case small && large:
		return meanRateBoth
	case small:
		return meanRateSmall
	case large:
		return meanRateLarge
	}
	return ""
}
