package enginecodec

import (
	"fmt"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// The versions of selfcma.State's encoding. Version v embeds the two
// CMA-ES and the kept step in the cmaes encoding esEncoding[v]: 1 in 1; 2
// in 2 (injected points, the failed-generation count); 3 in 3 (the
// numerics version); 4 in 4 (C as its upper triangle, the step without its
// C_μ, which the decoder recomputes); 5 in 5 (B, D and the pending batch
// left out when the decoder recomputes them: the decomposition of C, the
// batch sampled again); 6 in 6, with the kept step written before the two
// CMA-ES: the primary's C is left out when the step's replay with its own
// rates gives it (the update computes C so: Algorithm 1, line 13), and the
// step keeps only the μ points C_μ uses; 7 in 7 (the primary's Active
// flag, BIPOP restarts and restart points with their bookkeeping), with
// MinLambda and AdaptRestarts after the auxiliary's run count (older
// states: migrateGate); 8 in 7, with Config.SNR and the signal-to-noise
// rule's state (η, V, E) after AdaptRestarts (older states: migrateSNR);
// 9 in 8 (State.EigenT of each CMA-ES, for the lazy update), nothing else;
// 10 in 9 (Termination.FlatFitness), its own layout as 9's; 11 in 9, with
// Config.SNRParams (α, β, the largest and the initial η, the restarts that
// use the rule) after the rule's state (older states: migrateSNRParams,
// the constants of then); 12 in 9, with State.Woodbury (numerics
// selfcma.NumericsWoodbury) after the rule's parameters (older states:
// false, h_t by Cholesky factors, as they ran); 13 in 10 (the restarts'
// SigmaDec and Budget: NIPOP, NBIPOP), its own layout as 12's; 14 in 11
// (Termination.UpSigmaMoved, State.RunMovedScale), its own layout as 13's;
// 15 in 12 (Config.MirroredFirstRun, MirroredSmallRuns), its own layout as
// 14's; 16 in 12, with SNRParams.Rates after SmallRestarts (older states:
// selfcma.SNRRatesBoth, η on c_1 and c_μ, as they ran); 17 in 13
// (Config.MeanRateSmallRuns, MeanRateLargeRuns, MeanRateAlpha and
// State.MeanRate: the mean's learning rate in restarts), its own layout as
// 16's; 18 in 14 (Termination.TolWorse, State.RunStartF), its own layout
// as 17's; 19 in 15 (Termination.TolWorseDelta), its own layout as 18's;
// 20 in 16 (Restarts.SpareBestSmall), its own layout as 19's.
const (
	selfcmaMagic   = "selfcma/selfcma"
	selfcmaVersion = 20
	// versionStepFirst is the first version that writes the kept step
	// before the two CMA-ES.
	versionStepFirst = 6
	// versionGate is the first version that writes MinLambda and
	// AdaptRestarts.
	versionGate = 7
	// versionSNR is the first version that writes Config.SNR and the
	// rule's state (selfcma/snr.go).
	versionSNR = 8
	// versionSNRParams is the first version that writes
	// Config.SNRParams.
	versionSNRParams = 11
	// versionWoodbury is the first version that writes State.Woodbury.
	versionWoodbury = 12
	// versionLoshchilovSelf is the first version that embeds cmaes's
	// encoding 10 (Restarts.SigmaDec and Budget).
	versionLoshchilovSelf = 13
	// versionUpSigmaSelf is the first version that embeds cmaes's
	// encoding 11 (Termination.UpSigmaMoved, State.RunMovedScale).
	versionUpSigmaSelf = 14
	// versionMirroredSelf is the first version that embeds cmaes's
	// encoding 12 (Config.MirroredFirstRun, MirroredSmallRuns).
	versionMirroredSelf = 15
	// versionSNRRates is the first version that writes SNRParams.Rates.
	versionSNRRates = 16
	// versionMeanRateSelf is the first version that embeds cmaes's
	// encoding 13 (the mean's learning rate in restarts).
	versionMeanRateSelf = 17
	// versionTolWorseSelf is the first version that embeds cmaes's
	// encoding 14 (Termination.TolWorse, State.RunStartF).
	versionTolWorseSelf = 18
	// versionTolWorseDeltaSelf is the first version that embeds cmaes's
	// encoding 15 (Termination.TolWorseDelta).
	versionTolWorseDeltaSelf = 19
	// versionSpareBestSmallSelf is the first version that embeds cmaes's
	// encoding 16 (Restarts.SpareBestSmall).
	versionSpareBestSmallSelf = 20
)

// esEncoding is the cmaes encoding version embedded by each selfcma
// version (esEncoding[selfcmaVersion] must be cmaesVersion: tested).
var esEncoding = [...]uint32{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 7, 9: 8, 10: 9, 11: 9, 12: 9, 13: 10, 14: 11, 15: 12, 16: 12, 17: 13, 18: 14, 19: 15, 20: 16}

// AppendSelfCMA appends the encoding of s, the whole state of a
// self-CMA-ES (both CMA-ES, the step h_t replays, the auxiliary's run
// count and the gate's settings), to dst.
func AppendSelfCMA(dst []byte, s *selfcma.State) []byte {
	size := cmaesSize(s.Primary) + cmaesSize(s.Aux) + 6*8
	if s.SNRRule != nil {
		size += 8 * (3 + len(s.SNRRule.E))
	}
	if s.Prev != nil {
		size += stepSize(s.Prev)
	}
	w := binenc.NewWriterTo(slices.Grow(dst, size+64), selfcmaMagic, selfcmaVersion)
	encodeSelfCMA(w, s)
	return w.Finish()
}

// encodeSelfCMA writes s in the current layout.
func encodeSelfCMA(w *binenc.Writer, s *selfcma.State) {
	w.String(s.Init)
	w.Int(s.AuxRuns)
	w.Int(s.MinLambda) // version 7
	w.Bool(s.AdaptRestarts)
	w.Bool(s.SNR) // version 8
	w.Bool(s.SNRRule != nil)
	if r := s.SNRRule; r != nil {
		w.Float(r.Eta)
		w.Float(r.V)
		w.Floats(r.E)
	}
	p := s.SNRParams // version 11
	w.Float(p.Alpha)
	w.Float(p.Beta)
	w.Float(p.EtaMax)
	w.Float(p.Eta0)
	w.Int(p.RestartMaxLambda)
	w.Bool(p.SmallRestarts)
	w.Int(int(p.Rates)) // version 16
	w.Bool(s.Woodbury)  // version 12
	w.Bool(s.Prev != nil)
	if s.Prev != nil {
		encodeStep(w, s.Prev)
	}
	encodeCMAES(w, s.Primary, s.Prev) // C left out if Prev's replay gives it
	encodeCMAES(w, s.Aux, nil)
}

// DecodeSelfCMA decodes a state written by AppendSelfCMA of any version and
// restores the self-CMA-ES; a corrupted or foreign blob gives an error and
// no ES.
func DecodeSelfCMA(blob []byte) (*selfcma.ES, error) {
	r, version, err := binenc.NewReaderVersions(blob, selfcmaMagic, 1, selfcmaVersion)
	if err != nil {
		return nil, fmt.Errorf("selfcma: decode state: %w", err)
	}
	st, primary, aux, err := decodeSelfCMA(r, version)
	if err != nil {
		return nil, err
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("selfcma: decode state: %w", err)
	}
	s, err := selfcma.Restore(st)
	if err != nil {
		return nil, fmt.Errorf("selfcma: decode state: %w", err)
	}
	restored := s.State()
	if err := primary.check(restored.Primary); err != nil {
		return nil, fmt.Errorf("selfcma: decode primary: %w", err)
	}
	if err := aux.check(restored.Aux); err != nil {
		return nil, fmt.Errorf("selfcma: decode auxiliary: %w", err)
	}
	return s, nil
}

// decodeSelfCMA reads a state of the given version into a selfcma.State,
// and the two CMA-ES as read (for the checks after the restore).
func decodeSelfCMA(r *binenc.Reader, version uint32) (*selfcma.State, *decodedCMAES, *decodedCMAES, error) {
	esVersion := esEncoding[version]
	st := &selfcma.State{Init: r.String(), AuxRuns: r.Int()}
	if st.Init != selfcma.InitDefault && st.Init != selfcma.InitUniform {
		return nil, nil, nil, fmt.Errorf("selfcma: decode state: init %q: %w", st.Init, binenc.ErrCorrupt)
	}
	if version >= versionGate {
		st.MinLambda, st.AdaptRestarts = r.Int(), r.Bool()
	} else {
		migrateGate(st)
	}
	if version >= versionSNR {
		readSNR(r, st)
	} else {
		migrateSNR(st)
	}
	if version >= versionSNRParams {
		p := &st.SNRParams
		p.Alpha, p.Beta, p.EtaMax, p.Eta0 = r.Float(), r.Float(), r.Float(), r.Float()
		p.RestartMaxLambda, p.SmallRestarts = r.Int(), r.Bool()
		p.Rates = selfcma.SNRRatesBoth // older: η on c_1 and c_μ, as they ran
		if version >= versionSNRRates {
			switch v := r.Int(); v {
			case int(selfcma.SNRRatesBoth), int(selfcma.SNRRatesCMu):
				p.Rates = selfcma.SNRRates(v)
			default:
				return nil, nil, nil, fmt.Errorf("selfcma: decode state: SNR rates %d: %w", v, binenc.ErrCorrupt)
			}
		}
		// The encoder writes them resolved (selfcma.New): a zero, which
		// Restore would read as "the default", is not a written state.
		if p.Alpha == 0 || p.Beta == 0 || p.EtaMax == 0 || p.Eta0 == 0 {
			return nil, nil, nil, fmt.Errorf("selfcma: decode state: an unresolved SNR parameter %+v: %w", *p, binenc.ErrCorrupt)
		}
	} else {
		migrateSNRParams(st)
	}
	if version >= versionWoodbury {
		st.Woodbury = r.Bool() // older: false, as they ran
	}
	var err error
	if version >= versionStepFirst {
		// The step first: the primary's C may be its replay.
		if st.Prev, err = readKeptStep(r, esVersion); err != nil {
			return nil, nil, nil, err
		}
	}
	primary, err := decodeCMAES(r, esVersion, st.Prev)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("selfcma: decode primary: %w", err)
	}
	aux, err := decodeCMAES(r, esVersion, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("selfcma: decode auxiliary: %w", err)
	}
	if n := len(aux.st.Config.X0); n != 3 {
		return nil, nil, nil, fmt.Errorf("selfcma: decode auxiliary: dimension %d: %w", n, binenc.ErrCorrupt)
	}
	if version < versionStepFirst {
		if st.Prev, err = readKeptStep(r, esVersion); err != nil {
			return nil, nil, nil, err
		}
	}
	st.Primary, st.Aux = primary.st, aux.st
	return st, primary, aux, nil
}

// readSNR reads Config.SNR and the rule's state (version 8 on);
// selfcma.Restore checks them.
func readSNR(r *binenc.Reader, st *selfcma.State) {
	st.SNR = r.Bool()
	if !r.Bool() {
		return
	}
	st.SNRRule = &selfcma.SNRState{Eta: r.Float(), V: r.Float()}
	st.SNRRule.E = r.Floats()
}

// readKeptStep reads whether a step is kept, and the step (nil: none).
func readKeptStep(r *binenc.Reader, esVersion uint32) (*cmaes.Step, error) {
	if !r.Bool() {
		return nil, r.Err()
	}
	s, err := decodeStep(r, esVersion)
	if err != nil {
		return nil, fmt.Errorf("selfcma: decode step: %w", err)
	}
	return s, nil
}
