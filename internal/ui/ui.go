// Package ui serves the web pages of the selfcma service under /ui: the list
// of sessions, and for each session its state and plots drawn as inline
// SVG. Four are pycma's standard panels, over evaluations: the fitness
// (best so far, best and median of each generation) with the overall step
// σ·√λ_max(C) and the axis ratio of C on the same log axis; the principal
// axis lengths √λ_i(C); the standard deviation σ·√C_ii of each coordinate;
// the mean's coordinates (the last two labelled by coordinate at their
// right end, the top few that fit without overlapping; every coordinate's
// line shows its name on hover). They sit in pycma's 2×2 grid on a wide
// screen, one column on a narrow one, and their x axes end at the last
// generation told. σ alone is not plotted: where a safeguard moves scale between
// σ and C it jumps by decades while the distribution does not. The fifth
// is the learning rates c1, cμ and cc over generations with their defaults
// dashed, as in Figures 1–2 of Loshchilov, Schoenauer, Sebag and Hansen,
// "Maximum Likelihood-based Online Adaptation of Hyper-parameters in
// CMA-ES", PPSN XIII, 2014 (arXiv:1406.2623). Restarts (IPOP or BIPOP) are marked in
// every plot. The fitness axis is log10 f when every f told is positive;
// otherwise it is log10(f − f_min + δ), with f_min the least f told and δ a
// tenth of the smallest positive f − f_min, and the page says so (log10 |f|
// would fold the values on both sides of 0 onto each other). A history
// written before the distribution was kept shows the fitness and the axis
// ratio, and says from which generation the rest starts.
//
// The pages are rendered on the server with html/template and embed no
// external asset. While a session runs, a small inline script polls
// /ui/sessions/{id}/plots and swaps in the re-rendered state and plots; the
// pages work without it. Plots of long runs are downsampled to the least and
// greatest value of each of DefaultColumns columns (fewer per line in the
// panels of n lines), so a session of 100 000 generations renders about as
// fast as one of 1 000.
//
// ui reads sessions through Source, an interface of its own, and so knows
// nothing of the service's session package; the adapter lives in
// ui/sessionsource.
package ui

import (
	"context"
	"errors"
	"strings"
	"time"
)

// ErrNotFound is the error, or the cause of the error, that a Source returns
// for an unknown session id.
var ErrNotFound = errors.New("ui: no such session")

// Source is what the pages read.
type Source interface {
	// ListSessions returns at most q.Limit of the sessions that q
	// selects, newest first: in descending order of id (the service's ids
	// are UUIDv7, which sort in the order of creation).
	ListSessions(ctx context.Context, q ListQuery) ([]Summary, error)
	// Session returns one session; an error satisfying
	// errors.Is(err, ErrNotFound) if there is none with that id.
	Session(ctx context.Context, id string) (Detail, error)
	// History returns one point per generation told, oldest first.
	History(ctx context.Context, id string) ([]Point, error)
}

// ListQuery selects a page of the list of sessions.
type ListQuery struct {
	// Before, when not empty, selects the sessions whose id is less: the
	// page after the one that ended with Before.
	Before string
	Limit  int
	// Name, when not empty, selects the sessions whose name contains it,
	// ignoring case.
	Name string
	// Status, when not empty, selects the sessions of that status.
	Status string
}

// Match reports whether q's Name and Status select s.
func (q ListQuery) Match(s Summary) bool {
	if q.Status != "" && s.Status != q.Status {
		return false
	}
	return q.Name == "" || strings.Contains(strings.ToLower(s.Name), strings.ToLower(q.Name))
}

// Statuses of a session.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
)

// Summary is a session in the list.
type Summary struct {
	ID          string
	Name        string
	Algorithm   string // "self-cma-es", "cma-es" or "sep-cma-es"
	Status      string // StatusRunning or StatusStopped
	Generation  int    // generations told
	Evaluations int
	BestF       *float64 // nil before the first finite value
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// StopReason is a termination criterion that fired, with its value.
type StopReason struct {
	Name  string
	Value float64
}

// Hyper are the learning rates θ = (c1, cμ, cc).
type Hyper struct {
	C1, CMu, Cc float64
}

// RunEnd is a run that ended in a restart (IPOP or BIPOP).
type RunEnd struct {
	Generation     int // its last generation
	PopulationSize int
	StopReasons    []StopReason
}

// Detail is a session's page.
type Detail struct {
	Summary
	Dimension      int
	PopulationSize int // λ of the pending generation
	Seed           uint64
	StopReasons    []StopReason
	BestX          []float64 // nil before the first finite value
	BestZ, BestC   []float64 // a mixed session's best integer values and categories; nil otherwise
	Mean           []float64
	Sigma          float64
	Hyper          Hyper // the rates the next update uses
	Defaults       Hyper // the default rates for the current λ
	// RunDefaults are the default rates of each run (index Point.Run), whose
	// λ doubles at every IPOP restart; nil = Defaults for every run.
	RunDefaults []Hyper
	Restarts    int      // restarts so far
	Runs        []RunEnd // the runs that ended in a restart
	Held        int      // values of the pending generation told so far in parts
	// CoordinateLimit is the most coordinates whose values the history
	// keeps per generation; 0 = no limit known.
	CoordinateLimit int
}

// Point is one generation of the history. A value may be NaN: Best and
// Median if every evaluation of the generation failed, BestSoFar before
// the first finite value.
type Point struct {
	Generation  int // counted from 0 over all runs
	Run         int // 0 for the first run, one more per restart
	Lambda      int
	Evaluations int // after this generation
	Best        float64
	Median      float64
	BestSoFar   float64
	Sigma       float64 // after the update
	AxisRatio   float64 // √(max/min eigenvalue of C) after the update
	C1, CMu, Cc float64 // the rates the update used

	// The distribution after the update, as pycma plots it. OverallStep is
	// σ·√λ_max(C), NaN in a history written before it was kept; the
	// per-coordinate values (the principal axis lengths √λ_i(C) ascending,
	// the standard deviations σ·√C_ii, the mean m) are nil where the
	// history does not keep them (older entries, sessions of more than
	// Detail.CoordinateLimit coordinates, generations left out of a long
	// run).
	OverallStep             float64
	AxisLengths, Stds, Mean []float64

	// Constraint, of a constrained session only (nil otherwise): Best,
	// Median and BestSoFar are then of f.
	Constraint *ConstraintPoint
}

// ConstraintPoint is what a constrained session's generation adds: the
// candidates with every g_i ≤ 0, the least total violation Σ max(0, g_i)
// (0 when one was feasible, NaN when no g was known), the generation's
// best feasible f and the best so far (NaN if none).
type ConstraintPoint struct {
	Feasible                                   int
	Violation, BestFeasible, BestFeasibleSoFar float64
}
