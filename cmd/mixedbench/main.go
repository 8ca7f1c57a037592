// Command mixedbench measures internal/catcma (CatCMA with margin) on the
// mixed-variable problems of internal/mixedfn: evaluations until the best
// value reaches mixedfn.Target, per seed, as one JSON line per run, and the
// median per problem. scripts/catcma_bench.py runs the Python peer
// (CyberAgentAILab/cmaes CatCMAwM) on the same problems and prints the same
// lines; scripts/mixed_table.py sets the two side by side (docs/mixed.md).
//
//	go run ./cmd/mixedbench -n 9,30 -seeds 15 > go.jsonl
//	go run ./cmd/mixedbench -constrained -n 10 -seeds 15 > go-al.jsonl
//	go run ./cmd/mixedbench -constrained -n 10 -seeds 15 -server http://127.0.0.1:8080 > http-al.jsonl
//
// With -constrained it measures internal/constraints (the augmented
// Lagrangian of pycma's ConstrainedFitnessAL) around cmaes.ES on the
// constrained problems of mixedfn instead; scripts/al_bench.py runs pycma.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

// Run is one run's result.
type Run struct {
	Impl    string  `json:"impl"`
	Problem string  `json:"problem"`
	Seed    int     `json:"seed"`
	Evals   int     `json:"evals"`
	Reached bool    `json:"reached"`
	Best    float64 `json:"best"`
	// Feasible, for a constrained problem: the best feasible point found
	// is feasible (checked again); Best is then its f − f*.
	Feasible bool `json:"feasible,omitempty"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mixedbench:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mixedbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dims := fs.String("n", "9,30", "total dimensions N_co + N_in + N_ca, comma-separated")
	seeds := fs.Int("seeds", 15, "runs per problem (seeds 0 … seeds−1)")
	budget := fs.Int("budget", 0, "evaluations per run; 0: 20000 × n")
	only := fs.String("problem", "", "run only the problems whose name contains this")
	constrained := fs.Bool("constrained", false, "measure internal/constraints around cmaes.ES on the constrained problems instead (budget 0: 10000 × n)")
	active := fs.Bool("active", true, "with -constrained: active CMA-ES (pycma's default)")
	server := fs.String("server", "", "with -constrained: run through constrained sessions of the server at this base URL (http://host:port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ns []int
	for _, d := range strings.Split(*dims, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n < 3 {
			return fmt.Errorf("-n: %q is not a dimension ≥ 3", d)
		}
		ns = append(ns, n)
	}
	if *constrained {
		return runConstrained(ns, *seeds, *budget, *only, *active, *server, stdout, stderr)
	}
	enc := json.NewEncoder(stdout)
	for _, n := range ns {
		for _, p := range mixedfn.Problems(n) {
			if !containsName(p.Name, *only) {
				continue
			}
			maxEvals := *budget
			if maxEvals == 0 {
				maxEvals = 20000 * n
			}
			var evals []int
			for seed := range *seeds {
				r, err := solve(p, uint64(seed), maxEvals)
				if err != nil {
					return fmt.Errorf("%s seed %d: %w", p.Name, seed, err)
				}
				if err := enc.Encode(r); err != nil {
					return err
				}
				if r.Reached {
					evals = append(evals, r.Evals)
				} else {
					evals = append(evals, math.MaxInt)
				}
			}
			slices.Sort(evals)
			fmt.Fprintf(stderr, "%-20s median %d evaluations, %d/%d reached\n", p.Name, evals[len(evals)/2], countBelow(evals), len(evals))
		}
	}
	return nil
}

func containsName(name, part string) bool { return strings.Contains(name, part) }

func countBelow(v []int) int {
	k := 0
	for _, x := range v {
		if x < math.MaxInt {
			k++
		}
	}
	return k
}

// solve runs CatCMA with its defaults until the best value reaches the
// target or the budget is spent.
func solve(p mixedfn.Problem, seed uint64, maxEvals int) (Run, error) {
	x, z, c := p.Space()
	o, err := catcma.New(catcma.Config{Space: catcma.Space{X: x, Z: z, C: c}, Seed: seed,
		Termination: catcma.Termination{NoShouldStop: true}}) // as the peer run, which never asks should_stop
	if err != nil {
		return Run{}, err
	}
	r := Run{Impl: "go", Problem: p.Name, Seed: int(seed), Best: math.Inf(1)}
	vals := make([]float64, o.Params.Lambda)
	for r.Evals < maxEvals {
		for i, cand := range o.Ask() {
			vals[i] = p.F(cand.X, cand.Z, cand.C)
			r.Evals++
			if vals[i] < r.Best {
				r.Best = vals[i]
			}
			if r.Best <= mixedfn.Target {
				r.Reached = true
				return r, nil
			}
		}
		if err := o.Tell(vals); err != nil {
			return r, err
		}
	}
	return r, nil
}
