// Command sepbench measures internal/sepcma (sep-CMA-ES, Ros and Hansen,
// PPSN 2008) on BBOB functions, in the protocol of cmd/bench, and compares
// its runs with those of scripts/sepcma_bbob.py (CyberAgentAILab/cmaes's
// SepCMA, pycma's CMA_diagonal):
//
//	go run ./cmd/sepbench -functions 1,2,3,8,10 -dims 20,100 -instances 1-15 > sep.jsonl
//	go run ./cmd/sepbench -compare sep.jsonl peers.jsonl
//
// A run starts from x0 uniform in [−4, 4]^n (a PCG stream seeded by the
// seed and the instance) with σ0 = 2 and ends at the target (f − f_opt ≤
// -target), at -budget·n evaluations, restarts included, or when the ES
// stops after its last restart (-restarts: none, ipop or bipop; at most 9,
// λ doubled, each restart from a new uniform point). Evaluations to the
// target are counted to the end of the generation that reached it.
//
// One JSON object per run, with scripts/pycma_bbob.py's fields: function,
// dimension, instance, algorithm, evals_to_target (null when missed),
// evaluations, final_delta_f. -compare prints, per function and dimension,
// each algorithm's successes and median evaluations over its successful
// runs, and the ratio of the median to that of the algorithm named by -ref.
// Runs go to GOMAXPROCS workers; the output does not depend on the
// schedule.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sepbench:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("sepbench", flag.ContinueOnError)
	functions := fs.String("functions", "1,2,3,8,10", "BBOB functions, a list with ranges")
	dims := fs.String("dims", "20,100", "dimensions")
	instances := fs.String("instances", "1-15", "instances (COCO's legacy numbers)")
	restarts := fs.String("restarts", "ipop", "none, ipop or bipop")
	rates := fs.String("rates", "sepcma", "learning rates: sepcma or paper")
	budget := fs.Float64("budget", 1e4, "evaluations per dimension")
	target := fs.Float64("target", 1e-8, "f − f_opt to reach")
	seed := fs.Uint64("seed", 1, "seed of x0 and of the ES")
	compare := fs.Bool("compare", false, "compare the runs in the files named instead of running")
	ref := fs.String("ref", "cmaes-sepcma-ipop", "with -compare: the algorithm the ratios divide by")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "parallel runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *compare {
		return compareFiles(fs.Args(), *ref, out)
	}
	o := options{budget: *budget, target: *target, seed: *seed, restarts: *restarts}
	switch *rates {
	case "sepcma", "paper":
		o.paperRates = *rates == "paper"
	default:
		return fmt.Errorf("-rates %q, want sepcma or paper", *rates)
	}
	switch o.restarts {
	case "none", "ipop", "bipop":
	default:
		return fmt.Errorf("-restarts %q, want none, ipop or bipop", o.restarts)
	}
	var jobs []job
	fl, err := ints(*functions)
	if err != nil {
		return fmt.Errorf("-functions: %w", err)
	}
	dl, err := ints(*dims)
	if err != nil {
		return fmt.Errorf("-dims: %w", err)
	}
	il, err := ints(*instances)
	if err != nil {
		return fmt.Errorf("-instances: %w", err)
	}
	for _, d := range dl {
		for _, f := range fl {
			for _, i := range il {
				jobs = append(jobs, job{function: f, dimension: d, instance: i})
			}
		}
	}
	results, err := runAll(jobs, o, max(1, *workers))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// ints parses "1,3-5" into [1 3 4 5].
func ints(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(part, "-")
		lo, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil {
			return nil, err
		}
		hi := lo
		if ok {
			if hi, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
				return nil, err
			}
		}
		if hi < lo {
			return nil, fmt.Errorf("range %q", part)
		}
		for v := lo; v <= hi; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}
