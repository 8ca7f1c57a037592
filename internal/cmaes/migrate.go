package cmaes

// Migrations: what a state of an older version did not write, set as the
// ES of its code was (codec.go lists the versions). decode applies them
// where the fields would have been read.

// migrateNumerics: versions 1 and 2 predate numerics versions; every ES
// then decomposed C by dsyev.
func migrateNumerics(e *ES) { e.cfg.Numerics = NumericsDsyev }

// migrateRestarts: versions 1 to 6 predate BIPOP: the first run is of
// regime default, the others IPOP's large runs, all from Sigma0, without
// a generation limit (version 7 reads these over it).
func migrateRestarts(e *ES) {
	sigma0 := e.cfg.Sigma0
	e.runSigma0 = sigma0
	if e.run > 0 {
		e.regime = regimeLarge
	}
	for i := range e.runEnds {
		e.runEnds[i].Regime, e.runEnds[i].Sigma0 = RegimeLarge, sigma0
		if i == 0 {
			e.runEnds[i].Regime = RegimeDefault
		}
	}
}
