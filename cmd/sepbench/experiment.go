package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/selfcma/selfcma/internal/bbob"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/sepcma"
)

// x0Bound is the half width of BBOB's search box: x0 is uniform in it.
const x0Bound = 4

type options struct {
	budget, target float64
	seed           uint64
	restarts       string
	paperRates     bool
}

type job struct{ function, dimension, instance int }

// result is one run, with scripts/pycma_bbob.py's fields.
type result struct {
	Function      int     `json:"function"`
	Dimension     int     `json:"dimension"`
	Instance      int     `json:"instance"`
	Algorithm     string  `json:"algorithm"`
	EvalsToTarget *int    `json:"evals_to_target"`
	Evaluations   int     `json:"evaluations"`
	FinalDeltaF   float64 `json:"final_delta_f"`
}

func (o options) label() string {
	l := "sepcma-" + o.restarts
	if o.paperRates {
		l += "+paper-rates"
	}
	return l
}

// runAll runs the jobs on workers goroutines and returns the results in
// the jobs' order.
func runAll(jobs []job, o options, workers int) ([]result, error) {
	results := make([]result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				results[k], errs[k] = runOne(jobs[k], o)
			}
		}()
	}
	for k := range jobs {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

// runOne runs sep-CMA-ES on one instance: the restarts are the ES's own
// (cmaes.Restarts), every restart from a point uniform in [−4, 4]^n.
func runOne(j job, o options) (result, error) {
	p, err := bbob.New(j.function, j.dimension, j.instance)
	if err != nil {
		return result{}, err
	}
	n := j.dimension
	key := uint64(j.function)<<40 | uint64(n)<<20 | uint64(j.instance)
	rng := rand.New(rand.NewPCG(o.seed, key))
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = -x0Bound + 2*x0Bound*rng.Float64()
	}
	budget := int(o.budget * float64(n))
	cfg := sepcma.Config{X0: x0, Sigma0: 2, Seed: rng.Uint64(),
		Termination: cmaes.Termination{MaxEvaluations: budget, HasTarget: true, TargetFitness: p.FOpt() + o.target}}
	if o.paperRates {
		cfg.Rates = sepcma.RatesPaper
	}
	region := &cmaes.Bounds{Lower: make([]float64, n), Upper: make([]float64, n)}
	for i := range n {
		region.Lower[i], region.Upper[i] = -x0Bound, x0Bound
	}
	point := cmaes.RestartPoint{Uniform: true, Region: region}
	switch o.restarts {
	case "ipop":
		cfg.Restarts = cmaes.Restarts{IPOP: true, Max: 9, IncPopSize: 2, Point: point}
	case "bipop":
		cfg.Restarts = cmaes.Restarts{BIPOP: true, Max: 9, IncPopSize: 2, Point: point}
	}
	es, err := sepcma.New(cfg)
	if err != nil {
		return result{}, err
	}
	r := result{Function: j.function, Dimension: n, Instance: j.instance, Algorithm: o.label()}
	best := math.Inf(1)
	var fitness []float64
	for len(es.Stopped()) == 0 {
		l := es.Params().Lambda
		fitness = fitness[:0]
		for k := range l {
			f := p.Eval(es.Candidate(k))
			fitness = append(fitness, f)
			best = math.Min(best, f)
		}
		if _, err := es.Tell(fitness); err != nil {
			return result{}, fmt.Errorf("f%d n=%d i%d: %w", j.function, n, j.instance, err)
		}
		if r.EvalsToTarget == nil && best-p.FOpt() <= o.target {
			e := es.Evaluations()
			r.EvalsToTarget = &e
		}
	}
	r.Evaluations = es.Evaluations()
	r.FinalDeltaF = best - p.FOpt()
	return r, nil
}
