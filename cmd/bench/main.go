// Command bench runs CMA-ES and self-CMA-ES on BBOB functions: the measuring
// instrument of the defaults (internal/defaults) against pycma, and the
// experiment of Loshchilov, Schoenauer, Sebag and Hansen, "Maximum
// Likelihood-based Online Adaptation of Hyper-parameters in CMA-ES", PPSN
// XIII, 2014 (arXiv:1406.2623), section 4 (-paper), in the setting of
// docs/algorithm.md §4.
//
//	go run ./cmd/bench -functions 1-24 -dims 10 -instances 1-5,31-35 -json > ours.jsonl
//	go run ./cmd/bench -summary -ref pycma-bipop ours.jsonl pycma.jsonl
//	go run ./cmd/bench -paper -functions 1,8,10,13 -dims 10,20 -lambda 100 -runs 15 -plots docs/plots
//
// The protocol is BBOB's: for every function, dimension, algorithm and
// instance one run starts from x0 uniform in [−4, 4]^n with σ0 = 2 and stops
// at the target (f − f_opt ≤ -target, 1e-8), at -budget·n evaluations (1e4·n,
// restarts included) or when the ES stops after its last restart.
//
// Without algorithm flags each algorithm runs with the settings a new
// session gets: defaults.For(algorithm) (active update, restart strategy,
// restarts, λ factor) and the package's default λ, every restart from a
// point drawn uniformly in [−4, 4]^n. -active, -restarts, -max-restarts,
// -incpopsize, -restart-point and -lambda override them. -paper runs what
// this command ran before the defaults package, Algorithms 1 and 2 of the
// paper: no active update, no restarts (IPOP with -restarts ipop, at most 9,
// λ doubled, from x0), self-CMA-ES with λ = max(100, 4 + ⌊3 ln n⌋); the
// flags override it alike.
//
// It prints, per function and dimension, the successes, the median
// [min–max] evaluations to the target over the successful runs and the ERT
// of each algorithm, and the ratios CMA-ES / self-CMA-ES when both ran.
// -json prints one object per run and per summary instead; a run's object
// has pycma_bbob.py's fields (function, dimension, instance, algorithm,
// evals_to_target, null when missed, evaluations, final_delta_f) and more.
// Its algorithm is a label: the algorithm, then +paper and one +setting per
// setting that is not the default of the mode ("cma-es",
// "self-cma-es+ipop+lambda=50", "cma-es+paper"), then +tag (-tag); config
// holds all the settings.
//
// The ERT is the sum of the evaluations of all runs, a successful run
// counted up to the end of the generation that reached the target, divided by
// the number of successful runs (infinite without one).
//
// Instances: -instances takes a list with ranges (1-5,31-35); instance
// numbers are COCO's legacy ones, as in internal/bbob. Without it, -runs R
// runs instances 1–5, then 31, 32, ... (run r on instance r for r ≤ 5, else
// 30 + (r − 5)).
//
// Randomness: x0 is drawn from a PCG stream seeded by (seed, k), the ES's
// seed is a hash of (seed, function, dimension, k), where k is the run number
// of the instance under -runs (k = i for instance i ≤ 5, i − 25 for i ≥ 31,
// 2^32 + i for the others); so a run of an instance is the same whatever
// the other instances named, -runs 15 and -instances 1-5,31-40 make the same
// runs, and both algorithms start a run from the same point with the same
// seed. Runs go to GOMAXPROCS workers; the output does not depend on the
// schedule.
//
// -summary compares runs instead of making them: it reads the files named
// (cmd/bench -json, pycma_bbob.py), groups the runs by algorithm label,
// dimension and function, keeps the instances that every algorithm of a
// function and dimension ran (and says which runs it left out), and prints
// per function each algorithm's ERT and successes and its ratio to the
// reference (-ref, pycma-bipop), judged better, tie (within ±15 %, or both
// failing every run) or worse, then the count of each per algorithm and
// dimension. -metric delta-f compares the median f − f_opt at the end of the
// runs instead (runs made with a small -budget, 100 say): "within" when at
// most twice the reference's or at most -target. -md prints Markdown tables.
//
// With -plots DIR it writes one SVG per function and dimension, in the style
// of the paper's Figures 1 and 2: per algorithm, the median over runs of c_1,
// c_μ, c_c and log10(f − f_opt) of the best point so far, per generation.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// run parses args, runs the experiment and writes the table (or the JSON
// lines) to stdout and progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	if opts.summary {
		return summarizeFiles(stdout, opts)
	}
	start := time.Now()
	var progress func(done, total int, r runResult)
	if opts.verbose {
		progress = func(done, total int, r runResult) {
			fmt.Fprintf(stderr, "[%d/%d] %s\n", done, total, r.describe())
		}
	}
	results, err := runAll(opts, progress)
	if err != nil {
		return err
	}
	sums := summarizeAll(results)
	if opts.json {
		if err := writeJSON(stdout, results, sums); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, opts.describe())
		fmt.Fprintln(stdout)
		if err := writeTable(stdout, opts, sums); err != nil {
			return err
		}
	}
	if opts.plots != "" {
		files, err := writePlots(opts, results)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Fprintln(stderr, "wrote", f)
		}
	}
	fmt.Fprintf(stderr, "%d runs in %s\n", len(results), time.Since(start).Round(time.Millisecond))
	return nil
}
