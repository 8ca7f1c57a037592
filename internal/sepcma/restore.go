package sepcma

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Restore returns an ES in state s (from ES.State or enginecodec.DecodeSepCMAState),
// its pending batch sampled again from s.Rand. It checks s first: a state
// that New and Tell could not have made is refused, never panicked on, and
// so is one whose batch does not hash to s.BatchSum.
func Restore(s State) (*ES, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("sepcma: restore: %w", err)
	}
	e := &ES{s: s.clone()}
	p, err := NewParams(len(s.Config.X0), s.Lambda, s.Config.Rates)
	if err != nil {
		return nil, fmt.Errorf("sepcma: restore: %w", err)
	}
	e.p = p
	e.term = e.s.Config.Termination.Resolved(e.s.Config.Sigma0)
	e.d = make([]float64, p.N)
	e.setD()
	e.alloc()
	src := s.Rand
	e.src = &src
	e.rnd = rand.New(e.src)
	if len(s.Stop) == 0 {
		e.draw()
		e.placeInjected()
		e.images()
		if got := batchSum(e.x); got != s.BatchSum {
			return nil, fmt.Errorf("sepcma: restore: the batch sampled again differs from the one handed out (hash %#x, want %#x)", got, s.BatchSum)
		}
	}
	return e, nil
}

// check reports what makes s a state that no ES has.
func (s *State) check() error {
	c := s.Config
	if err := c.validate(); err != nil {
		return err
	}
	rs := c.Restarts
	if (rs.IPOP || rs.BIPOP) && (rs.Max == 0 || rs.IncPopSize == 0) {
		return fmt.Errorf("restarts not resolved")
	}
	n := len(c.X0)
	if s.Lambda < 2 || float64(s.Lambda)*float64(n) > 2*cmaes.MaxRestartValues {
		return fmt.Errorf("population size %d", s.Lambda)
	}
	if err := s.checkDistribution(n); err != nil {
		return err
	}
	if err := s.checkRuns(); err != nil {
		return err
	}
	if err := s.checkInjections(n); err != nil {
		return err
	}
	return s.checkHistories(n)
}

// checkDistribution checks the mean, C, the paths and σ.
func (s *State) checkDistribution(n int) error {
	for name, v := range map[string][]float64{"mean": s.Mean, "C": s.C, "p_sigma": s.PSigma, "p_c": s.PC} {
		if len(v) != n || !finite(v) {
			return fmt.Errorf("%s: %d values or not finite, want %d finite", name, len(v), n)
		}
	}
	for _, v := range s.C {
		if v < 0 {
			return fmt.Errorf("C has a negative entry")
		}
	}
	if !(s.Sigma > 0) || math.IsInf(s.Sigma, 0) || !(s.RunSigma0 > 0) || math.IsInf(s.RunSigma0, 0) {
		return fmt.Errorf("sigma %v, run sigma0 %v", s.Sigma, s.RunSigma0)
	}
	return nil
}

// checkRuns checks the counters, the regime and the ended runs.
func (s *State) checkRuns() error {
	if s.T < 0 || s.Generation < 0 || s.Evaluations < 0 || s.Run != len(s.RunEnds) || s.GenLimit < 0 || s.FailedGens < 0 {
		return fmt.Errorf("counters out of range")
	}
	regimes := map[string]bool{cmaes.RegimeDefault: true, cmaes.RegimeLarge: true, cmaes.RegimeSmall: true}
	if !regimes[s.Regime] {
		return fmt.Errorf("regime %q", s.Regime)
	}
	prev := -1
	for _, r := range s.RunEnds {
		if !regimes[r.Regime] || r.Generation <= prev || r.Lambda < 2 {
			return fmt.Errorf("run end %+v", r)
		}
		prev = r.Generation
	}
	return nil
}

// checkHistories checks the best point and the termination histories.
func (s *State) checkHistories(n int) error {
	if s.HasBest && len(s.Best.X) != n {
		return fmt.Errorf("best point of %d values, want %d", len(s.Best.X), n)
	}
	if want := 10 + int(math.Ceil(30*float64(n)/float64(s.Lambda))); len(s.FunHist) != want ||
		s.FunPos < 0 || s.FunPos >= want || s.FunN < 0 || s.FunN > want {
		return fmt.Errorf("function history")
	}
	if len(s.StagBest) != len(s.StagMed) || len(s.StagBest) > stagMax {
		return fmt.Errorf("stagnation history")
	}
	if want := 10 + n; len(s.FlatGens) != want || s.FlatPos < 0 || s.FlatPos >= want || s.FlatN < 0 || s.FlatN > want {
		return fmt.Errorf("equal-values history")
	}
	return nil
}

// checkInjections checks the waiting and the batch's injected points: at
// most λ in the batch, of n finite coordinates inside the bounds.
func (s *State) checkInjections(n int) error {
	for name, q := range map[string][]cmaes.Injection{"waiting": s.Queued, "batch": s.BatchInjected} {
		pts := make([][]float64, len(q))
		for i, in := range q {
			pts[i] = in.X
		}
		if err := cmaes.CheckInjection(pts, 0, max(s.Lambda, len(s.Queued)), n, s.Config.Bounds); err != nil {
			return fmt.Errorf("injected points (%s): %w", name, err)
		}
	}
	if len(s.BatchInjected) > s.Lambda {
		return fmt.Errorf("%d injected candidates of %d", len(s.BatchInjected), s.Lambda)
	}
	return nil
}
