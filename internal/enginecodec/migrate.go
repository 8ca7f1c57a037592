package enginecodec

import (
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// Migrations: what a state of an older version did not write, set as the
// engine of that version had it (cmaes.go and selfcma.go list the
// versions). The decoders call each where its fields would have been read.

// migrateNumerics: cmaes versions 1 and 2 predate numerics versions; every
// ES then decomposed C by dsyev.
func migrateNumerics(st *cmaes.State) { st.Config.Numerics = cmaes.NumericsDsyev }

// migrateRestarts: cmaes versions 1 to 6 predate active CMA-ES and BIPOP:
// the first run is of regime default, the others IPOP's large runs, all
// from Sigma0, without a generation limit (the zero values of the other
// fields of version 7 are what those versions did).
func migrateRestarts(st *cmaes.State) {
	sigma0 := st.Config.Sigma0
	st.RunSigma0 = sigma0
	st.Regime = cmaes.RegimeDefault
	if st.Run > 0 {
		st.Regime = cmaes.RegimeLarge
	}
	for i := range st.RunEnds {
		st.RunEnds[i].Regime, st.RunEnds[i].Sigma0 = cmaes.RegimeLarge, sigma0
		if i == 0 {
			st.RunEnds[i].Regime = cmaes.RegimeDefault
		}
	}
}

// migrateLazy: cmaes versions 1 to 7 predate the lazy update; every
// update decomposed C.
func migrateLazy(st *cmaes.State) { st.EigenT = st.T }

// migrateGate: selfcma versions 1 to 6 predate the gate (selfcma's
// gate.go): every run self-adapted, at every λ.
func migrateGate(st *selfcma.State) {
	st.MinLambda = selfcma.EveryLambda
	st.AdaptRestarts = true
}

// migrateSNR sets what a self-CMA-ES of a version before 8 had of the
// signal-to-noise rule: none (a run below MinLambda at the defaults).
func migrateSNR(st *selfcma.State) { st.SNR, st.SNRRule = false, nil }

// migrateSNRParams: selfcma versions before 11 ran the signal-to-noise
// rule with the parameters then constants (selfcma.SNRParamsV8).
func migrateSNRParams(st *selfcma.State) { st.SNRParams = selfcma.SNRParamsV8 }
