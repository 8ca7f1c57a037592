package session

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// The algorithms a session runs (defaults.Algorithm when none is named).
const (
	AlgorithmSelfCMAES = defaults.SelfCMAES
	AlgorithmCMAES     = defaults.CMAES
)

// optimizer is what a session needs of an ES: the surface that cmaes.ES and
// selfcma.ES share, with Tell returning the session's history record.
type optimizer interface {
	Ask() [][]float64
	Tell(fitness []float64) (HistoryRecord, error)
	AppendBinary(dst []byte) ([]byte, error) // the state, appended to dst

	Config() cmaes.Config
	Params() cmaes.Params
	Hyper() cmaes.Hyper
	Dim() int
	Generation() int
	Evaluations() int
	Run() int
	Regime() string // the current run's: cmaes.RegimeDefault, RegimeLarge or RegimeSmall
	RunEnds() []cmaes.RunEnd
	Mean() []float64
	Sigma() float64
	Stds() []float64
	Best() (cmaes.Best, bool)
	Stopped() []cmaes.StopReason
	StopNow() // the client ends the run
	AxisRatio() float64
	HeldBytes() int64 // what the engine holds in memory

	// Injected points (cmaes.ES.Inject): queue points for the next batch;
	// how many wait; how many candidates of the pending batch are injected.
	Inject(points [][]float64, clip bool) error
	Injected() int
	InjectedInBatch() int
}

type plainES struct{ *cmaes.ES }

func (e plainES) Tell(f []float64) (HistoryRecord, error) {
	r, err := e.ES.Tell(f)
	if err != nil {
		return HistoryRecord{}, err
	}
	return historyOf(r), nil
}

type selfES struct{ *selfcma.ES }

func (e selfES) Tell(f []float64) (HistoryRecord, error) {
	r, err := e.ES.Tell(f)
	if err != nil {
		return HistoryRecord{}, err
	}
	h := historyOf(r.Record)
	h.Aux = &AuxRecord{Mean: r.AuxMean, Sigma: r.AuxSigma, Feasible: r.AuxFeasible}
	return h, nil
}

func (e selfES) InjectedInBatch() int { return e.Primary().InjectedInBatch() }

func historyOf(r cmaes.Record) HistoryRecord {
	return HistoryRecord{
		Generation: r.Generation, Run: r.Run, Lambda: r.Lambda, Evaluations: r.Evaluations,
		Best: r.Best, Median: r.Median, BestSoFar: r.BestSoFar, Sigma: r.Sigma,
		C1: r.Hyper.C1, CMu: r.Hyper.CMu, Cc: r.Hyper.Cc, AxisRatio: r.AxisRatio,
		Restarted: r.Restarted, Injected: r.Injected, OverallStep: r.OverallStep, AxisLengths: r.D, Stds: r.Stds, Mean: r.Mean,
	}
}

func newOptimizer(algorithm, init string, cfg cmaes.Config) (optimizer, error) {
	switch algorithm {
	case AlgorithmCMAES:
		e, err := cmaes.New(cfg)
		if err != nil {
			return nil, err
		}
		return plainES{e}, nil
	case AlgorithmSelfCMAES:
		e, err := selfcma.New(selfcma.Config{CMA: cfg, Init: init})
		if err != nil {
			return nil, err
		}
		return selfES{e}, nil
	}
	return nil, fmt.Errorf("unknown algorithm %q", algorithm)
}

func decodeOptimizer(algorithm string, state []byte) (optimizer, error) {
	switch algorithm {
	case AlgorithmCMAES:
		e, err := cmaes.Unmarshal(state)
		if err != nil {
			return nil, err
		}
		return plainES{e}, nil
	case AlgorithmSelfCMAES:
		e, err := selfcma.Unmarshal(state)
		if err != nil {
			return nil, err
		}
		return selfES{e}, nil
	}
	return nil, fmt.Errorf("unknown algorithm %q", algorithm)
}

// initOf returns the auxiliary's initialization of a self-CMA-ES, "" for a
// CMA-ES.
func initOf(o optimizer) string {
	if s, ok := o.(selfES); ok {
		return s.Init()
	}
	return ""
}
