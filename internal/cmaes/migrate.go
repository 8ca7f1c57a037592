package cmaes

// Migrations: what a state of an older version did not write, set as the
// ES of its code was (codec.go lists the versions). decode applies them
// where the fields would have been read.

// migrateNumerics: versions 1 and 2 predate numerics versions; every ES
// then decomposed C by dsyev.
func migrateNumerics(st *State) { st.Config.Numerics = NumericsDsyev }

// migrateRestarts: versions 1 to 6 predate BIPOP: the first run is of
// regime default, the others IPOP's large runs, all from Sigma0, without
// a generation limit (version 7 reads these over it).
func migrateRestarts(st *State) {
	sigma0 := st.Config.Sigma0
	st.RunSigma0 = sigma0
	st.Regime = RegimeDefault
	if st.Run > 0 {
		st.Regime = RegimeLarge
	}
	for i := range st.RunEnds {
		st.RunEnds[i].Regime, st.RunEnds[i].Sigma0 = RegimeLarge, sigma0
		if i == 0 {
			st.RunEnds[i].Regime = RegimeDefault
		}
	}
}
