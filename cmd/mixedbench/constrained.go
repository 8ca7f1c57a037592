package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/constraints"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

// runConstrained measures internal/constraints around cmaes.ES (active
// CMA-ES, as pycma's default; no termination criterion but the budget, as
// the AL changes the fitness under the ES) on mixedfn.ConstrainedProblems:
// evaluations until the best feasible f is within 1e-8 of f*. With server
// (a base URL), each run goes through a constrained session of that
// server instead (solveConstrainedHTTP), which must give the same.
func runConstrained(dims []int, seeds, budget int, only string, active bool, server string, stdout, stderr io.Writer) error {
	enc := json.NewEncoder(stdout)
	for _, n := range dims {
		for _, p := range mixedfn.ConstrainedProblems(n) {
			if !containsName(p.Name, only) {
				continue
			}
			maxEvals := budget
			if maxEvals == 0 {
				maxEvals = 10000 * n
			}
			var evals []int
			for seed := range seeds {
				solve := solveConstrained
				if server != "" {
					solve = func(p mixedfn.Constrained, seed uint64, maxEvals int, active bool) (Run, error) {
						return solveConstrainedHTTP(server, p, seed, maxEvals, active)
					}
				}
				r, err := solve(p, uint64(seed), maxEvals, active)
				if err != nil {
					return fmt.Errorf("%s seed %d: %w", p.Name, seed, err)
				}
				if err := enc.Encode(r); err != nil {
					return err
				}
				e := math.MaxInt
				if r.Reached {
					e = r.Evals
				}
				evals = append(evals, e)
			}
			slices.Sort(evals)
			fmt.Fprintf(stderr, "%-24s median %d evaluations, %d/%d reached\n", fmt.Sprintf("%s-%d", p.Name, n), evals[len(evals)/2], countBelow(evals), len(evals))
		}
	}
	return nil
}

func solveConstrained(p mixedfn.Constrained, seed uint64, maxEvals int, active bool) (Run, error) {
	es, err := cmaes.New(cmaes.Config{X0: p.X0, Sigma0: 1, Seed: seed, Active: active,
		Termination: cmaes.Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
			NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
	if err != nil {
		return Run{}, err
	}
	al, err := constraints.New(p.N, p.M)
	if err != nil {
		return Run{}, err
	}
	r := Run{Impl: "go", Problem: fmt.Sprintf("%s-%d", p.Name, p.N), Seed: int(seed), Best: math.Inf(1)}
	var best []float64
	for r.Evals < maxEvals {
		X := es.Ask()
		f, g := make([]float64, len(X)), make([][]float64, len(X))
		for k, x := range X {
			f[k], g[k] = p.F(x), p.G(x)
			r.Evals++
			if constraints.Feasible(g[k]) && f[k]-p.FOpt < r.Best {
				r.Best, best = f[k]-p.FOpt, slices.Clone(x)
			}
			if r.Best <= mixedfn.ConstrainedTarget {
				r.Reached = true
				r.Feasible = constraints.Feasible(p.G(best))
				return r, nil
			}
		}
		ranked, err := al.Tell(f, g)
		if err != nil {
			return r, err
		}
		if _, err := es.Tell(ranked); err != nil {
			return r, fmt.Errorf("generation with AL values %v: %w", ranked, err)
		}
	}
	if best != nil {
		r.Feasible = constraints.Feasible(p.G(best))
	}
	return r, nil
}
