package session

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/enginecodec"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// The algorithms a session runs (defaults.Algorithm when none is named).
const (
	AlgorithmSelfCMAES = defaults.SelfCMAES
	AlgorithmCMAES     = defaults.CMAES
)

// optimizer is what a session needs of an ES (cmaes.ES, selfcma.ES,
// sepcma.ES: sep.go): ask,
// tell (returning the session's history record), the actions, the state's
// encoding and what it holds in memory; everything it reads of the ES is
// the data of Status.
type optimizer interface {
	Ask() [][]float64
	Tell(fitness []float64) (HistoryRecord, error)
	Inject(points [][]float64, clip bool) error // queue points for the next batch (cmaes.ES.Inject)
	StopNow()                                   // the client ends the run
	Status() cmaes.Status                       // valid until the next Tell, Inject or StopNow
	AppendBinary(dst []byte) ([]byte, error)    // the state, appended to dst (enginecodec)
	HeldBytes() int64                           // what the engine holds in memory
}

type plainES struct{ *cmaes.ES }

func (e plainES) AppendBinary(dst []byte) ([]byte, error) {
	return enginecodec.AppendCMAES(dst, e.State()), nil
}

func (e plainES) Tell(f []float64) (HistoryRecord, error) {
	r, err := e.ES.Tell(f)
	if err != nil {
		return HistoryRecord{}, err
	}
	return historyOf(r), nil
}

type selfES struct{ *selfcma.ES }

func (e selfES) AppendBinary(dst []byte) ([]byte, error) {
	return enginecodec.AppendSelfCMA(dst, e.State()), nil
}

func (e selfES) Tell(f []float64) (HistoryRecord, error) {
	r, err := e.ES.Tell(f)
	if err != nil {
		return HistoryRecord{}, err
	}
	h := historyOf(r.Record)
	h.Aux = &AuxRecord{Mean: r.AuxMean, Sigma: r.AuxSigma, Feasible: r.AuxFeasible}
	return h, nil
}

func historyOf(r cmaes.Record) HistoryRecord {
	return HistoryRecord{
		Generation: r.Generation, Run: r.Run, Lambda: r.Lambda, Evaluations: r.Evaluations,
		Best: r.Best, Median: r.Median, BestSoFar: r.BestSoFar, Sigma: r.Sigma,
		C1: r.Hyper.C1, CMu: r.Hyper.CMu, Cc: r.Hyper.Cc, AxisRatio: r.AxisRatio,
		Restarted: r.Restarted, Injected: r.Injected, OverallStep: r.OverallStep, AxisLengths: r.D, Stds: r.Stds, Mean: r.Mean,
	}
}

func newOptimizer(algorithm string, sp selfParams, cfg cmaes.Config) (optimizer, error) {
	switch algorithm {
	case AlgorithmCMAES:
		e, err := cmaes.New(cfg)
		if err != nil {
			return nil, err
		}
		return plainES{e}, nil
	case AlgorithmSelfCMAES:
		e, err := selfcma.New(selfcma.Config{CMA: cfg, Init: sp.Init, SNR: sp.SNR})
		if err != nil {
			return nil, err
		}
		return selfES{e}, nil
	case AlgorithmSepCMAES:
		return newSep(cfg)
	case AlgorithmCatCMA:
		return newMixed(sp.Mixed, cfg.Seed)
	}
	return nil, fmt.Errorf("unknown algorithm %q", algorithm)
}

func decodeOptimizer(algorithm string, state []byte) (optimizer, error) {
	switch algorithm {
	case AlgorithmCMAES:
		e, err := enginecodec.DecodeCMAES(state)
		if err != nil {
			return nil, err
		}
		return plainES{e}, nil
	case AlgorithmSelfCMAES:
		e, err := enginecodec.DecodeSelfCMA(state)
		if err != nil {
			return nil, err
		}
		return selfES{e}, nil
	case AlgorithmSepCMAES:
		return decodeSep(state)
	case AlgorithmCatCMA:
		return decodeMixed(state)
	}
	return nil, fmt.Errorf("unknown algorithm %q", algorithm)
}

// snrOf returns selfcma.Config.SNR of a self-CMA-ES, nil for a CMA-ES.
func snrOf(o optimizer) *bool {
	if s, ok := o.(selfES); ok {
		on, _ := s.SNR()
		return &on
	}
	return nil
}

// initOf returns the auxiliary's initialization of a self-CMA-ES, "" for a
// CMA-ES.
func initOf(o optimizer) string {
	if s, ok := o.(selfES); ok {
		return s.Init()
	}
	return ""
}
