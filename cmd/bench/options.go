package main

import (
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
	"github.com/selfcma/selfcma/internal/selfcma"
)

// The algorithms, as named on the command line.
const (
	algCMA  = "cma-es"
	algSelf = "self-cma-es"
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
	sigma0      = 2.0
	x0Bound     = 4.0 // x0 uniform in [−x0Bound, x0Bound]^n
	maxRestarts = 9   // IPOP restarts with -restarts ipop
)

// options is the parsed command line.
type options struct {
	algorithms   []string // in algOrder
	functions    []int
	dims         []int
	lambda       int     // 0 = each algorithm's default
	runs         int     // runs per function, dimension and algorithm
	budget       float64 // evaluations per dimension
	target       float64 // on f − f_opt
	ipop         bool
	noLocalStops bool   // only the target and the budget stop a run (-local-stops=false)
	init         string // selfcma.InitDefault or selfcma.InitUniform
	numerics     int    // cmaes.Config.Numerics: 0 = the latest
	seed         uint64
	json         bool
	plots        string // directory, "" = no plots
	verbose      bool
	workers      int
}

func parseOptions(args []string, out io.Writer) (options, error) {
	var (
		o                       options
		algs, funcs, dims, rest string
	)
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&algs, "algorithms", algCMA+","+algSelf, "comma-separated list of "+algCMA+", "+algSelf)
	fs.StringVar(&funcs, "functions", "1,8,10,13", "comma-separated BBOB functions, 1..24")
	fs.StringVar(&dims, "dims", "10,20", "comma-separated dimensions, each ≥ 2")
	fs.IntVar(&o.lambda, "lambda", 0, "population size λ; 0 = each algorithm's default (CMA-ES 4 + ⌊3 ln n⌋, self-CMA-ES max(100, that))")
	fs.IntVar(&o.runs, "runs", 15, "runs per function, dimension and algorithm; run r uses instance r for r ≤ 5, else 30 + (r − 5)")
	fs.Float64Var(&o.budget, "budget", 1e4, "maximum evaluations per dimension: a run stops after budget·n evaluations")
	fs.Float64Var(&o.target, "target", 1e-8, "a run succeeds when f − f_opt ≤ target")
	fs.StringVar(&rest, "restarts", "none", "none, or ipop (at most 9 restarts, λ doubled each time)")
	localStops := true
	fs.BoolVar(&localStops, "local-stops", true, "stop a run on the local termination criteria of docs/algorithm.md §1 too (TolFun, TolX, NoEffectAxis, NoEffectCoord, ConditionCov, Stagnation, EqualFunValues, TolUpSigma); false: only the target and the budget stop it")
	fs.StringVar(&o.init, "init", selfcma.InitDefault, "initial mean of self-CMA-ES's auxiliary CMA-ES: default or uniform")
	fs.IntVar(&o.numerics, "numerics", 0, "numerics version of the eigendecomposition and sampling (docs/algorithm.md §3): 1, 2, 3, or 0 = the latest")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of x0 and of the algorithms' random streams")
	fs.BoolVar(&o.json, "json", false, "print one JSON object per run, then one per summary, instead of the table")
	fs.StringVar(&o.plots, "plots", "", "write one SVG per function and dimension into this directory")
	fs.BoolVar(&o.verbose, "v", false, "report every finished run on stderr")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.noLocalStops = !localStops
	o.workers = runtime.GOMAXPROCS(0)

	var named []string
	for _, a := range strings.Split(algs, ",") {
		a = strings.ToLower(strings.TrimSpace(a))
		if !slices.Contains(algOrder, a) {
			return options{}, fmt.Errorf("-algorithms: unknown algorithm %q (want %s or %s)", a, algCMA, algSelf)
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
		return options{}, err
	}
	if o.dims, err = parseInts("-dims", dims, 2, math.MaxInt32); err != nil {
		return options{}, err
	}
	switch {
	case o.lambda != 0 && o.lambda < 2:
		return options{}, fmt.Errorf("-lambda %d: want 0 or at least 2", o.lambda)
	case o.runs < 1:
		return options{}, fmt.Errorf("-runs %d: want at least 1", o.runs)
	case o.numerics < 0 || o.numerics > cmaes.NumericsLatest:
		return options{}, fmt.Errorf("-numerics %d: want 0 (the latest) to %d", o.numerics, cmaes.NumericsLatest)
	case !(o.budget > 0) || math.IsInf(o.budget, 0):
		return options{}, fmt.Errorf("-budget %v: want a finite value > 0", o.budget)
	case !(o.target >= 0) || math.IsInf(o.target, 0):
		return options{}, fmt.Errorf("-target %v: want a finite value ≥ 0", o.target)
	case o.init != selfcma.InitDefault && o.init != selfcma.InitUniform:
		return options{}, fmt.Errorf("-init %q: want %s or %s", o.init, selfcma.InitDefault, selfcma.InitUniform)
	}
	switch rest {
	case "none":
	case "ipop":
		o.ipop = true
	default:
		return options{}, fmt.Errorf("-restarts %q: want none or ipop", rest)
	}
	return o, nil
}

// parseInts parses a comma-separated list of integers in [lo, hi], sorted
// and without duplicates.
func parseInts(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an integer", name, f)
		}
		if v < lo || v > hi {
			return nil, fmt.Errorf("%s: %d not in %d..%d", name, v, lo, hi)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// maxEvaluations is the budget of a run in dimension n.
func (o options) maxEvaluations(n int) int {
	return int(math.Ceil(o.budget * float64(n)))
}

// describe is the line above the table: everything needed to rerun it.
func (o options) describe() string {
	lambda := "default"
	if o.lambda > 0 {
		lambda = strconv.Itoa(o.lambda)
	}
	restarts := "none"
	if o.ipop {
		restarts = fmt.Sprintf("IPOP (at most %d)", maxRestarts)
	}
	return fmt.Sprintf("λ = %s, %d runs (instances %s), x0 ~ U[−%g, %g]^n, σ0 = %g, target f − f_opt ≤ %g, budget %g·n evaluations, restarts %s, self-CMA-ES init %s, seed %d",
		lambda, o.runs, instanceList(o.runs), x0Bound, x0Bound, sigma0, o.target, o.budget, restarts, o.init, o.seed)
}

// instanceList describes the instances of runs 1..runs, as "1–5, 31–40".
func instanceList(runs int) string {
	var parts []string
	for r := 1; r <= runs; {
		first := instance(r)
		last := first
		for r+1 <= runs && instance(r+1) == last+1 {
			r++
			last++
		}
		if first == last {
			parts = append(parts, strconv.Itoa(first))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", first, last))
		}
		r++
	}
	return strings.Join(parts, ", ")
}
