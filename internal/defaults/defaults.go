// Package defaults holds what a new session gets for each setting its
// create leaves out, per algorithm: the configuration measured best on BBOB
// (docs/algorithm.md, "Defaults"). The service (internal/session) and the
// measuring instrument (cmd/bench) both read it, so that cmd/bench without
// algorithm flags runs exactly what a new session runs.
package defaults

// The algorithms, by the names the API and cmd/bench use.
const (
	CMAES     = "cma-es"
	SelfCMAES = "self-cma-es"
)

// Algorithm is what a create that names no algorithm gets.
const Algorithm = SelfCMAES

// Restart strategies, by the names the API and cmd/bench use.
const (
	RestartsNone  = "none"
	RestartsIPOP  = "ipop"
	RestartsBIPOP = "bipop"
)

// Restart points: every run from x0, or drawn uniformly in a region (the
// client's, else the bounds).
const (
	PointX0      = "x0"
	PointUniform = "uniform"
)

// Settings are the defaults of one algorithm.
type Settings struct {
	Active       bool    // active CMA-ES (cmaes.Config.Active)
	Restarts     string  // RestartsNone, RestartsIPOP or RestartsBIPOP
	MaxRestarts  int     // (large) restarts; cmaes.DefaultMaxRestarts
	IncPopSize   float64 // λ factor at a (large) restart
	RestartPoint string  // PointX0, or PointUniform where a region or bounds exist
}

// For returns the defaults of algorithm alg (CMAES or SelfCMAES; any other
// name gets CMAES's).
func For(alg string) Settings {
	// Placeholder values until the measurement of issue 23 sets them;
	// docs/algorithm.md records the measurement that chose them.
	return Settings{Active: true, Restarts: RestartsBIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: PointX0}
}
