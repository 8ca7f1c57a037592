// Command bench runs CMA-ES and self-CMA-ES on BBOB functions, the experiment
// of Loshchilov, Schoenauer, Sebag and Hansen, "Maximum Likelihood-based
// Online Adaptation of Hyper-parameters in CMA-ES", PPSN XIII, 2014
// (arXiv:1406.2623), section 4, in the setting of docs/algorithm.md §4.
//
//	go run ./cmd/bench -algorithms cma-es,self-cma-es -functions 1,8,10,13 \
//	    -dims 10,20 -lambda 100 -runs 15 -plots docs/plots
//
// For every function, dimension, algorithm and run it starts from x0 uniform
// in [−4, 4]^n with σ0 = 2 and stops at the target (f − f_opt ≤ -target), at
// -budget·n evaluations, or at a termination criterion of the ES (after at
// most 9 IPOP restarts with -restarts ipop). It prints, per function and
// dimension, the successes, the median [min–max] evaluations to the target
// over the successful runs and the ERT of each algorithm, and the ratios
// CMA-ES / self-CMA-ES when both ran; -json prints one object per run and per
// summary instead.
//
// Run r (from 1) uses BBOB instance r for r ≤ 5 and 30 + (r − 5) after that:
// instances 1–5 and 31–40 for 15 runs (docs/algorithm.md §4), then 41,
// 42, ... The ERT is the sum of the evaluations of all runs, a successful run
// counted up to the end of the generation that reached the target, divided by
// the number of successful runs.
//
// Randomness: x0 of run r is drawn from a PCG stream seeded by (seed, r), the
// ES's seed is a hash of (seed, function, dimension, r); both algorithms get
// the same x0 and the same seed in a given run. Runs go to GOMAXPROCS
// workers; the output does not depend on the schedule.
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
