package selfcma

import (
	"errors"
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// State is everything the next generation of a self-CMA-ES depends on, as
// plain data: the two CMA-ES (cmaes.State), the primary's update t−1 → t
// that h_t replays (Algorithm 3), and the settings of the gate. Restore
// makes an ES of it that continues bit for bit. It shares its data with
// the ES it came from, as cmaes.State does.
type State struct {
	Init          string    // InitDefault or InitUniform
	MinLambda     int       // runs with λ ≥ MinLambda self-adapt (gate.go; ≥ EveryLambda)
	AdaptRestarts bool      // and not only the first run
	SNR           bool      // Config.SNR
	SNRParams     SNRParams // Config.SNRParams (zero fields: the defaults)
	// SNRRule is the signal-to-noise rule's state while the first run uses
	// it (snr.go), else nil.
	SNRRule *SNRState
	AuxRuns int // auxiliary CMA-ES started so far (one per primary run)
	// Woodbury is whether h_t goes by the Woodbury identity (numerics
	// version NumericsWoodbury, on the primary's cmaes.NumericsDC).
	Woodbury     bool
	Prev         *cmaes.Step
	Primary, Aux *cmaes.State
}

// State returns the self-CMA-ES's state, sharing its data (see State).
func (s *ES) State() *State {
	st := &State{Init: s.init, MinLambda: s.minLambda, AdaptRestarts: s.adaptRestarts, AuxRuns: s.auxRuns,
		SNR: s.snrOn, SNRParams: s.snrP, SNRRule: s.snr, Woodbury: s.woodbury, Primary: s.primary.State(), Aux: s.aux.State()}
	if s.hasPrev {
		st.Prev = s.prev
	}
	return st
}

// ErrInvalidState is returned by Restore for a State no self-CMA-ES could
// have had.
var ErrInvalidState = errors.New("selfcma: invalid state")

// Restore returns a self-CMA-ES that continues st bit for bit, taking its
// data (cmaes.Restore restores the two CMA-ES).
func Restore(st *State) (*ES, error) {
	primary, err := cmaes.Restore(st.Primary)
	if err != nil {
		return nil, fmt.Errorf("%w: primary: %w", ErrInvalidState, err)
	}
	aux, err := cmaes.Restore(st.Aux)
	if err != nil {
		return nil, fmt.Errorf("%w: auxiliary: %w", ErrInvalidState, err)
	}
	s := &ES{init: st.Init, minLambda: st.MinLambda, adaptRestarts: st.AdaptRestarts, auxRuns: st.AuxRuns,
		snrOn: st.SNR, snrP: st.SNRParams.resolved(), snr: st.SNRRule, woodbury: st.Woodbury, primary: primary, aux: aux, prev: st.Prev, hasPrev: st.Prev != nil}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	return s, nil
}

// check checks what ties the parts of a self-CMA-ES together.
func (s *ES) check() error {
	switch {
	case s.init != InitDefault && s.init != InitUniform:
		return fmt.Errorf("init %q", s.init)
	case s.minLambda < EveryLambda:
		return fmt.Errorf("min lambda %d", s.minLambda)
	case cmaes.IsLazy(s.primary.Config().Numerics):
		return fmt.Errorf("numerics %d (lazy) in a self-CMA-ES", s.primary.Config().Numerics)
	case s.woodbury && s.primary.Config().Numerics != cmaes.NumericsDC:
		return fmt.Errorf("numerics %d (Woodbury) on a primary of numerics %d", NumericsWoodbury, s.primary.Config().Numerics)
	case s.snrP.check() != nil:
		return s.snrP.check()
	case s.aux.Dim() != 3:
		return fmt.Errorf("auxiliary of dimension %d", s.aux.Dim())
	case (s.snr != nil) != s.snrUsed():
		return fmt.Errorf("snr: rule state %t where the first run's use of it is %t", s.snr != nil, s.snrUsed())
	}
	if s.snr != nil {
		if err := s.snr.check(s.primary.Dim(), s.snrP.EtaMax); err != nil {
			return err
		}
	}
	if s.hasPrev {
		if l, n := s.prev.X.Dims(); n != s.primary.Dim() || l != s.primary.Params().Lambda {
			return fmt.Errorf("step of %d×%d points, want λ×n = %d×%d", l, n, s.primary.Params().Lambda, s.primary.Dim())
		}
	}
	return nil
}
