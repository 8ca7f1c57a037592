package httpapi

import (
	"encoding/json"
	"math"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// The response bodies: the JSON form of session's types.

type sessionJSON struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	Algorithm       string            `json:"algorithm"`
	Active          bool              `json:"active"`
	Mirrored        bool              `json:"mirrored"`
	MeanRate        bool              `json:"mean_rate"`
	Dimension       int               `json:"dimension"`
	PopulationSize  int               `json:"population_size"`
	Seed            uint64            `json:"seed"`
	Status          string            `json:"status"`
	StopReasons     []stopJSON        `json:"stop_reasons"`
	Generation      int               `json:"generation"`
	Evaluations     int               `json:"evaluations"`
	Best            *bestJSON         `json:"best"`
	BestFeasible    *bestFeasibleJSON `json:"best_feasible,omitempty"`
	Mean            nums              `json:"mean"`
	MeanInBounds    nums              `json:"mean_in_bounds,omitempty"`
	Sigma           num               `json:"sigma"`
	Stds            nums              `json:"stds"`
	Hyperparameters hyperJSON         `json:"hyperparameters"`
	Restarts        restartsJSON      `json:"restarts"`
	Partial         *partialJSON      `json:"partial"`
	Injected        injectedJSON      `json:"injected"`
	Constraints     *constraintsJSON  `json:"constraints,omitempty"`
	Mixed           *mixedJSON        `json:"mixed,omitempty"`
	Metadata        json.RawMessage   `json:"metadata,omitempty"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
	Links           linksJSON         `json:"links"`
}

type stopJSON struct {
	Name  string `json:"name"`
	Value num    `json:"value"`
}

type bestJSON struct {
	X          nums  `json:"x"`
	F          num   `json:"f"`
	Generation int   `json:"generation"`
	Z          nums  `json:"z,omitempty"` // a mixed session's (mixed.go)
	C          []int `json:"c,omitempty"`
}

type hyperJSON struct {
	C1     num    `json:"c1"`
	CMu    num    `json:"cmu"`
	Cc     num    `json:"cc"`
	CSigma num    `json:"c_sigma"`
	DSigma num    `json:"d_sigma"`
	MuW    num    `json:"mu_w"`
	Init   string `json:"init,omitempty"`
	SNR    *bool  `json:"snr,omitempty"`
}

type restartsJSON struct {
	Strategy   string       `json:"strategy"`
	Max        int          `json:"max"`
	IncPopSize num          `json:"incpopsize,omitempty"` // none: left out
	Point      string       `json:"point"`
	Region     *boxJSON     `json:"region,omitempty"` // uniform only
	SpareBest  bool         `json:"spare_best_small"`
	Count      int          `json:"count"`
	Regime     string       `json:"regime"`
	Runs       []runEndJSON `json:"runs"`
}

// boxJSON is a box: restarts.region.
type boxJSON struct {
	Lower nums `json:"lower"`
	Upper nums `json:"upper"`
}

type runEndJSON struct {
	Generation     int        `json:"generation"`
	PopulationSize int        `json:"population_size"`
	Regime         string     `json:"regime"`
	StopReasons    []stopJSON `json:"stop_reasons"`
}

// partialJSON is what a session holds of its pending generation from
// partial tells.
type partialJSON struct {
	Indices          []int  `json:"indices"`
	Fitness          nums   `json:"fitness"`
	ConstraintValues matrix `json:"constraint_values,omitempty"`
}

// claimJSON is a candidate leased to a worker.
type claimJSON struct {
	Generation int       `json:"generation"`
	Index      *int      `json:"index"`
	X          nums      `json:"x"`
	Z          nums      `json:"z,omitempty"` // a mixed session's (mixed.go)
	C          []int     `json:"c,omitempty"`
	ExpiresAt  time.Time `json:"expires_at"`
}

type linksJSON struct {
	Self    string `json:"self"`
	Ask     string `json:"ask"`
	Tell    string `json:"tell"`
	History string `json:"history"`
	UI      string `json:"ui"`
}

func links(id string) linksJSON {
	base := "/v1/sessions/" + id
	return linksJSON{Self: base, Ask: base + "/ask", Tell: base + "/tell", History: base + "/history", UI: "/ui/sessions/" + id}
}

func stopsJSON(rs []session.StopReason) []stopJSON {
	out := make([]stopJSON, len(rs))
	for i, r := range rs {
		out[i] = stopJSON{Name: r.Name, Value: num(r.Value)}
	}
	return out
}

func toSessionJSON(s session.Session) sessionJSON {
	j := sessionJSON{
		ID: s.ID, Name: s.Name, Algorithm: s.Algorithm, Active: s.Active, Mirrored: s.Mirrored, MeanRate: s.MeanRate, Dimension: s.Dimension,
		PopulationSize: s.PopulationSize, Seed: s.Seed, Status: s.Status,
		StopReasons: stopsJSON(s.StopReasons), Generation: s.Generation, Evaluations: s.Evaluations,
		Mean: nums(s.Mean), MeanInBounds: nums(s.MeanInBounds), Sigma: num(s.Sigma), Stds: nums(s.Stds),
		Hyperparameters: hyperJSON{
			C1: num(s.Hyper.C1), CMu: num(s.Hyper.CMu), Cc: num(s.Hyper.Cc),
			CSigma: num(s.Hyper.CSigma), DSigma: num(s.Hyper.DSigma), MuW: num(s.Hyper.MuW), Init: s.Hyper.Init, SNR: s.Hyper.SNR,
		},
		Restarts: restartsJSON{
			Strategy: s.Restarts.Strategy, Max: s.Restarts.Max, IncPopSize: num(s.Restarts.IncPopSize), Point: s.Restarts.Point,
			SpareBest: s.Restarts.SpareBestSmall, Count: s.Restarts.Count, Regime: s.Restarts.Regime, Runs: []runEndJSON{},
		},
		Injected:  toInjectedJSON(s.Injected),
		Metadata:  json.RawMessage(s.Metadata),
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		Links: links(s.ID),
	}
	if b := s.Best; b != nil {
		j.Best = &bestJSON{X: nums(b.X), F: num(b.F), Generation: b.Generation}
	}
	if p := s.Partial; p.Indices != nil {
		j.Partial = &partialJSON{Indices: p.Indices, Fitness: nums(p.Fitness)}
	}
	if r := s.Restarts.Region; r != nil {
		j.Restarts.Region = &boxJSON{Lower: nums(r.Lower), Upper: nums(r.Upper)}
	}
	for _, r := range s.Restarts.Runs {
		j.Restarts.Runs = append(j.Restarts.Runs, runEndJSON{Generation: r.Generation, PopulationSize: r.PopulationSize, Regime: r.Regime, StopReasons: stopsJSON(r.StopReasons)})
	}
	toConstraintsJSON(s, &j)
	toMixedJSON(s, &j)
	return j
}

type summaryJSON struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Algorithm      string    `json:"algorithm"`
	Dimension      int       `json:"dimension"`
	PopulationSize int       `json:"population_size"`
	Status         string    `json:"status"`
	Generation     int       `json:"generation"`
	Evaluations    int       `json:"evaluations"`
	BestF          *num      `json:"best_f"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	Links          linksJSON `json:"links"`
}

type listJSON struct {
	Sessions []summaryJSON `json:"sessions"`
	Next     string        `json:"next,omitempty"`
}

func toSummaryJSON(s session.Summary) summaryJSON {
	j := summaryJSON{
		ID: s.ID, Name: s.Name, Algorithm: s.Algorithm, Dimension: s.Dimension, PopulationSize: s.PopulationSize,
		Status: s.Status, Generation: s.Generation, Evaluations: s.Evaluations,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, Links: links(s.ID),
	}
	if s.BestF != nil {
		f := num(*s.BestF)
		j.BestF = &f
	}
	return j
}

type historyRecordJSON struct {
	Generation  int   `json:"generation"`
	Run         int   `json:"run"`
	Lambda      int   `json:"lambda"`
	Evaluations int   `json:"evaluations"`
	Best        num   `json:"best"`
	Median      num   `json:"median"`
	BestSoFar   num   `json:"best_so_far"`
	Sigma       num   `json:"sigma"`
	C1          num   `json:"c1"`
	CMu         num   `json:"cmu"`
	Cc          num   `json:"cc"`
	AxisRatio   num   `json:"axis_ratio"`
	Restarted   bool  `json:"restarted"`
	Injected    int   `json:"injected,omitempty"`
	AuxMean     nums  `json:"aux_mean,omitempty"`
	AuxSigma    *num  `json:"aux_sigma,omitempty"`
	AuxFeasible *bool `json:"aux_feasible,omitempty"`
	OverallStep *num  `json:"overall_step,omitempty"`
	AxisLengths nums  `json:"axis_lengths,omitempty"`
	Stds        nums  `json:"stds,omitempty"`
	Mean        nums  `json:"mean,omitempty"`
	historyConstraintsJSON
}

func toHistoryJSON(h session.HistoryRecord) historyRecordJSON {
	j := historyRecordJSON{
		Generation: h.Generation, Run: h.Run, Lambda: h.Lambda, Evaluations: h.Evaluations,
		Best: num(h.Best), Median: num(h.Median), BestSoFar: num(h.BestSoFar), Sigma: num(h.Sigma),
		C1: num(h.C1), CMu: num(h.CMu), Cc: num(h.Cc), AxisRatio: num(h.AxisRatio), Restarted: h.Restarted,
		Injected: h.Injected, historyConstraintsJSON: toHistoryConstraintsJSON(h.Constraint),
	}
	if a := h.Aux; a != nil {
		s, f := num(a.Sigma), a.Feasible
		j.AuxMean, j.AuxSigma, j.AuxFeasible = nums(a.Mean[:]), &s, &f
	}
	// Absent from entries written before the history kept them.
	if !math.IsNaN(h.OverallStep) {
		s := num(h.OverallStep)
		j.OverallStep = &s
	}
	j.AxisLengths, j.Stds, j.Mean = h.AxisLengths, h.Stds, h.Mean
	return j
}

type errorJSON struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code        string     `json:"code"`
	Message     string     `json:"message"`
	Generation  *int       `json:"generation,omitempty"`
	StopReasons []stopJSON `json:"stop_reasons,omitempty"`
}
