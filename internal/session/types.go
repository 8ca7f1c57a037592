package session

import (
	"time"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
)

// CreateParams are the settings of a new session. Pointers and zero values
// select the documented defaults.
type CreateParams struct {
	X0             []float64 // initial mean, 1 ≤ n ≤ Limits.MaxDimension (sep-cma-es: MaxSepDimension) finite values; with WarmStart, nil or of the warm start's dimension
	Sigma0         float64   // initial step size > 0
	PopulationSize int       // λ ≥ 2; 0 = the engine's default (cmaes.DefaultLambda)
	Algorithm      string    // AlgorithmSelfCMAES, AlgorithmCMAES or AlgorithmSepCMAES; "" = defaults.Algorithm
	Seed           *uint64   // nil = drawn from crypto/rand
	Bounds         *Bounds
	Init           string // self-CMA-ES: "default" (also "") or "uniform"
	// SNR: self-CMA-ES's first run adapts a factor of c_μ by the
	// signal-to-noise rule (selfcma.Config.SNR), false: by h_t from
	// λ = 10n; nil = defaults.For(algorithm).SNR.
	SNR         *bool `json:",omitempty"`
	Restarts    Restarts
	Termination Termination
	Name        string
	Metadata    []byte // a JSON object, stored and echoed as is; nil = none

	// Active selects active CMA-ES (pycma's CMA_active); nil =
	// defaults.For(algorithm).Active.
	Active *bool `json:",omitempty"`

	// Mirrored selects mirrored sampling in the local runs: the first and
	// BIPOP's small ones (cmaes.Config.MirroredFirstRun and
	// MirroredSmallRuns); nil = defaults.For(algorithm)'s.
	Mirrored *bool `json:",omitempty"`

	// MeanRate: the large restarts adapt the mean's learning rate by
	// LRA-CMA-ES's rule (cmaes.Config.MeanRateLargeRuns); nil =
	// defaults.For(algorithm)'s (self-CMA-ES's yes, CMA-ES's no).
	MeanRate *bool `json:",omitempty"`

	// WarmStart, when not empty, is the id of a session to start from: X0
	// becomes its mean and its best point, if any, is injected into the
	// first batch (see Manager.Create). Fields added to CreateParams and
	// Termination are omitempty: the fingerprint of an idempotent create
	// (their JSON) must stay that of the keys stored before them.
	WarmStart string `json:",omitempty"`

	// IdempotencyKey, when not empty, makes the create safe to send again
	// (Manager.CreateIdempotent): 1 to 255 visible ASCII characters.
	IdempotencyKey string

	// Constraints, when not nil, makes the session constrained
	// (constraints.go); omitempty as WarmStart.
	Constraints *Constraints `json:",omitempty"`

	// Integers and Categories, when either is not empty, make a mixed
	// session run by CatCMA with margin (mixed.go): the sorted values of
	// each integer variable, the number of choices of each categorical
	// one; omitempty as WarmStart.
	Integers   [][]float64 `json:",omitempty"`
	Categories []int       `json:",omitempty"`
}

// Bounds is a box that every candidate handed out lies in.
type Bounds struct {
	Lower, Upper []float64
}

// Restarts selects restarts (pycma's fmin options restarts, bipop,
// incpopsize). Each field left out takes defaults.For(algorithm)'s value.
type Restarts struct {
	// Strategy is RestartsNone, RestartsIPOP, RestartsBIPOP,
	// RestartsNIPOP or RestartsNBIPOP (the last two not for sep-CMA-ES);
	// "" = the default, or RestartsNone when Max is 0.
	Strategy string
	// Max is the most restarts (for BIPOP the large ones); nil = the
	// default, or fewer if λ·IncPopSize^Max would pass the limits.
	Max *int

	// The fields below came after the idempotency fingerprint existed:
	// omitempty keeps the fingerprint of a create without them (see
	// WarmStart).

	// IncPopSize > 1 multiplies λ at each (large) restart; nil = the default.
	IncPopSize *float64 `json:",omitempty"`
	// Point is where a restart's mean starts, PointX0 or PointUniform
	// (drawn in Region, else in the bounds); "" = the default, which is
	// PointX0 where it is PointUniform but there is neither region nor
	// bounds.
	Point string `json:",omitempty"`
	// Region is the box PointUniform draws in: n finite lower < upper,
	// inside the bounds when both are given; nil = the bounds.
	Region *Bounds `json:",omitempty"`
	// SpareBestSmall: a small BIPOP run that found the best point so far
	// outlives its generation limit (cmaes.Restarts.SpareBestSmall); true
	// only with RestartsBIPOP or RestartsNBIPOP, and not for sep-CMA-ES;
	// nil = the default (defaults.For's, with those strategies).
	SpareBestSmall *bool `json:",omitempty"`
}

// The restart strategies and points, by the names of the API.
const (
	RestartsNone   = defaults.RestartsNone
	RestartsIPOP   = defaults.RestartsIPOP
	RestartsBIPOP  = defaults.RestartsBIPOP
	RestartsNIPOP  = defaults.RestartsNIPOP
	RestartsNBIPOP = defaults.RestartsNBIPOP
	PointX0        = defaults.PointX0
	PointUniform   = defaults.PointUniform
)

// Termination are the stopping criteria. For each tolerance, nil selects
// cmaes's default, a positive value sets it and 0 disables it.
type Termination struct {
	MaxEvaluations int // 0 = no limit
	TargetFitness  *float64
	TolFun         *float64
	TolX           *float64
	ConditionCov   *float64
	TolUpSigma     *float64
	// Criteria without a value, enabled unless set to false.
	NoEffectAxis, NoEffectCoord, Stagnation, EqualFunValues *bool
	// MaxFailedGenerations stops the session (failed_evaluations) after
	// this many consecutive generations whose every evaluation failed:
	// nil = cmaes.DefaultMaxFailedGenerations, ≤ 0 = never.
	MaxFailedGenerations *int `json:",omitempty"`
	// TolWorse ends a restart that converges onto a point worse than an
	// earlier run's best (cmaes.Termination.TolWorse, its ε): nil =
	// defaults.For(algorithm)'s (off for constrained sessions), 0 = off.
	TolWorse *float64 `json:",omitempty"`
	// TolWorseDelta is δ of TolWorse (cmaes.Termination.TolWorseDelta): a
	// restart within δ times its descent of the best point is not ended.
	// nil = defaults.For(algorithm)'s, 0 = none spared.
	TolWorseDelta *float64 `json:",omitempty"`
}

// Status of a session.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
)

// StopReason is a termination criterion that fired and the value that made
// it fire (possibly not finite).
type StopReason struct {
	Name  string
	Value float64
}

// Best is the best point told so far.
type Best struct {
	X          []float64
	F          float64
	Generation int
	Z          []float64 // a mixed session's integer values (mixed.go)
	C          []int     // a mixed session's categories
}

// Hyper are the learning rates the next update uses (c1, cmu, cc; adapted by
// self-CMA-ES) and the fixed parameters of the run.
type Hyper struct {
	C1, CMu, Cc         float64
	CSigma, DSigma, MuW float64
	Init                string // self-CMA-ES: the auxiliary's initialization
	SNR                 *bool  // self-CMA-ES: selfcma.Config.SNR; nil for CMA-ES
}

// RestartsView describes the restarts of a session, as its engine runs
// them.
type RestartsView struct {
	Strategy   string  // RestartsNone, RestartsIPOP, RestartsBIPOP, RestartsNIPOP or RestartsNBIPOP
	Max        int     // most (large) restarts; 0 for RestartsNone
	IncPopSize float64 // λ factor at a (large) restart; 0 for RestartsNone
	Point      string  // PointX0 or PointUniform; PointX0 for RestartsNone
	Region     *Bounds // PointUniform: the box restart means are drawn in (the request's region, else the bounds); else nil
	// SpareBestSmall: a small BIPOP run that found the best point
	// outlives its generation limit (false for a session created before).
	SpareBestSmall bool
	Count          int    // restarts so far
	Regime         string // the current run's: RegimeDefault (the first run), RegimeLarge or RegimeSmall (BIPOP)
	Runs           []RunEnd
}

// The regimes of a run (cmaes's): the first run, an IPOP or large BIPOP
// restart, a small BIPOP run.
const (
	RegimeDefault = cmaes.RegimeDefault
	RegimeLarge   = cmaes.RegimeLarge
	RegimeSmall   = cmaes.RegimeSmall
)

// RunEnd says why a run ended in a restart.
type RunEnd struct {
	Generation     int // its last generation
	PopulationSize int
	Regime         string // RegimeDefault, RegimeLarge or RegimeSmall
	StopReasons    []StopReason
}

// Session is the state of a session as clients see it.
type Session struct {
	ID             string
	Name           string
	Algorithm      string
	Active         bool // active CMA-ES
	Mirrored       bool // mirrored sampling in the first run (and BIPOP's small runs)
	MeanRate       bool // the large restarts adapt the mean's learning rate
	Dimension      int
	PopulationSize int // λ of the pending generation
	Seed           uint64
	Status         string
	StopReasons    []StopReason
	Generation     int // the pending generation = generations told
	Evaluations    int
	Best           *Best // nil before the first finite value
	Mean           []float64
	MeanInBounds   []float64 // with bounds: the mean's image in the box, as candidates are mapped (pycma's xfavorite); else nil
	Sigma          float64
	Stds           []float64 // σ·√C_ii of each coordinate
	Hyper          Hyper
	Restarts       RestartsView
	Partial        Partial // the pending generation's values told so far, if told in parts
	Injected       Injected
	Metadata       []byte
	CreatedAt      time.Time
	UpdatedAt      time.Time

	// A constrained session's (constraints.go), nil otherwise: its
	// augmented Lagrangian and its best feasible point (nil until one is
	// told). Best is then the best f told, feasible or not.
	Constraints  *ConstraintsView
	BestFeasible *FeasibleBest

	// Mixed describes a mixed session's space and categorical
	// distributions (mixed.go); nil otherwise.
	Mixed *MixedView
}

// Injected counts a session's injected points (Manager.Inject).
type Injected struct {
	Waiting int // queued for the next batch sampled
	InBatch int // candidates 0 to InBatch − 1 of the pending batch are injected points
}

// Summary is a session in a list: what the record holds without decoding
// the optimizer state.
type Summary struct {
	ID             string
	Name           string
	Algorithm      string
	Dimension      int
	PopulationSize int
	Status         string
	Generation     int
	Evaluations    int
	BestF          *float64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Batch is the pending generation's candidates, in the order their fitness
// values must be told. Its slices are shared with the Manager's cache:
// read only.
type Batch struct {
	Generation int
	Candidates [][]float64
	// A mixed session's integer values and categories of each candidate
	// (Candidates then holds the continuous coordinates); nil otherwise.
	Z [][]float64
	C [][]int
}

// TellParams are the fitness values of a generation: NaN for a failed
// evaluation.
//
// Without Indices, Fitness holds the λ values of the generation in the
// order of its candidates. With Indices, it is a partial tell: Fitness[k]
// is the value of candidate Indices[k], and the session holds the values
// until every candidate of the generation has one.
type TellParams struct {
	Generation int
	Fitness    []float64
	Indices    []int
	// Constraints, for a constrained session, are the m constraint values
	// of each value of Fitness (NaN: unknown; a nil row: all unknown).
	Constraints [][]float64
}

// Partial is what the session holds of the pending generation from
// partial tells: the candidates' indices, ascending, and their values.
type Partial struct {
	Indices     []int
	Fitness     []float64   // NaN = failed evaluation
	Constraints [][]float64 // a constrained session's constraint values of each
}

// HistoryRecord describes one told generation. Best and Median are NaN if
// every evaluation failed, BestSoFar before any finite value.
type HistoryRecord struct {
	Generation  int
	Run         int
	Lambda      int
	Evaluations int
	Best        float64
	Median      float64
	BestSoFar   float64
	Sigma       float64
	C1, CMu, Cc float64 // the rates the update used
	AxisRatio   float64
	Restarted   bool
	Injected    int        // candidates 0 to Injected − 1 of the generation were injected points
	Aux         *AuxRecord // self-CMA-ES only
	// Constraint, of a constrained session only; its Best, Median and
	// BestSoFar are of f, not of the values the engine ranked.
	Constraint *ConstraintRecord

	// The distribution after the update, for pycma's plots; entries written
	// before history schema 3 have none (OverallStep NaN, the slices nil).
	OverallStep float64 // σ·√λ_max(C)
	// Per coordinate, kept only where HistoryKeepsCoordinates says so
	// (nil elsewhere): the principal axis lengths √λ_i(C) ascending, the
	// standard deviations σ·√C_ii and the mean m.
	AxisLengths, Stds, Mean []float64
}

// AuxRecord is the auxiliary CMA-ES of self-CMA-ES after a generation.
type AuxRecord struct {
	Mean     [3]float64 // u = (c1, cmu, cc)/0.9
	Sigma    float64
	Feasible bool // whether 0.9·Mean is the next θ (else the defaults)
}
