// Package sessionsource lets the web pages of package ui read the sessions
// of a session.Manager: it is the adapter from session's types to ui's, so
// that ui knows nothing of session.
package sessionsource

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/sepcma"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/ui"
)

// cacheCap is how many sessions' histories are kept in memory.
const cacheCap = 16

// Source is a ui.Source over a session.Manager. It keeps the histories of
// the sessions last shown, so that a page polled every few seconds reads
// only the generations told since its last look (a history only grows).
// It is safe for concurrent use.
type Source struct {
	m     *session.Manager
	chunk int // sessions read from m.List at a time: listChunk

	mu    sync.Mutex
	cache map[string]*list.Element // of *history, most recent first in lru
	lru   list.List
}

type history struct {
	id  string
	pts []ui.Point
}

// New returns a Source that reads m.
func New(m *session.Manager) *Source {
	return &Source{m: m, chunk: listChunk, cache: map[string]*list.Element{}}
}

var _ ui.Source = (*Source)(nil)

// notFound turns session's not_found (and invalid, for an id of the wrong
// shape) into ui.ErrNotFound.
func notFound(err error) error {
	switch session.ErrorCode(err) {
	case session.CodeNotFound, session.CodeInvalid:
		return fmt.Errorf("%w: %w", ui.ErrNotFound, err)
	}
	return err
}

// listChunk is how many sessions ListSessions reads from the Manager at a
// time.
const listChunk = 500

// ListSessions returns a page of the sessions that q selects, newest
// first. The Manager lists oldest first, so it reads every session's
// summary (the meta only, listChunk at a time) and keeps the last q.Limit
// that match: a page costs a pass over the summaries.
func (s *Source) ListSessions(ctx context.Context, q ui.ListQuery) ([]ui.Summary, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	var keep []ui.Summary // the last q.Limit that match, oldest first
	after := ""
	for {
		page, err := s.m.List(ctx, after, s.chunk)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		for _, p := range page {
			if q.Before != "" && p.ID >= q.Before {
				return newestFirst(keep), nil
			}
			sum := ui.Summary{
				ID: p.ID, Name: p.Name, Algorithm: p.Algorithm, Status: p.Status,
				Generation: p.Generation, Evaluations: p.Evaluations, BestF: p.BestF,
				CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
			}
			if !q.Match(sum) {
				continue
			}
			if len(keep) == q.Limit {
				keep = append(keep[:0], keep[1:]...)
			}
			keep = append(keep, sum)
		}
		if len(page) < s.chunk {
			return newestFirst(keep), nil
		}
		after = page[len(page)-1].ID
	}
}

func newestFirst(ss []ui.Summary) []ui.Summary {
	slices.Reverse(ss)
	return ss
}

// defaults returns the default rates of algorithm alg in dimension n with
// population size λ, active CMA-ES's when active (zero if they are out of
// range, which a stored session never is).
func defaults(alg string, n, lambda int, active bool) ui.Hyper {
	if alg == session.AlgorithmSepCMAES {
		p, err := sepcma.NewParams(n, lambda, sepcma.RatesSepCMA)
		if err != nil {
			return ui.Hyper{}
		}
		return ui.Hyper{C1: p.C1, CMu: p.CMu, Cc: p.Cc}
	}
	p, err := cmaes.NewParamsActive(n, lambda, active)
	if err != nil {
		return ui.Hyper{}
	}
	h := p.Hyper()
	return ui.Hyper{C1: h.C1, CMu: h.CMu, Cc: h.Cc}
}

func stops(rs []session.StopReason) []ui.StopReason {
	out := make([]ui.StopReason, len(rs))
	for i, r := range rs {
		out[i] = ui.StopReason{Name: r.Name, Value: r.Value}
	}
	return out
}

// Session returns the session id.
func (s *Source) Session(ctx context.Context, id string) (ui.Detail, error) {
	ss, err := s.m.Get(ctx, id)
	if err != nil {
		return ui.Detail{}, notFound(err)
	}
	d := ui.Detail{
		Summary: ui.Summary{
			ID: ss.ID, Name: ss.Name, Algorithm: ss.Algorithm, Status: ss.Status,
			Generation: ss.Generation, Evaluations: ss.Evaluations,
			CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt,
		},
		Dimension: ss.Dimension, PopulationSize: ss.PopulationSize, Seed: ss.Seed,
		StopReasons: stops(ss.StopReasons),
		Mean:        ss.Mean, Sigma: ss.Sigma,
		Hyper:    ui.Hyper{C1: ss.Hyper.C1, CMu: ss.Hyper.CMu, Cc: ss.Hyper.Cc},
		Defaults: defaults(ss.Algorithm, ss.Dimension, ss.PopulationSize, ss.Active),
		Restarts: ss.Restarts.Count,
		Held:     len(ss.Partial.Indices),

		CoordinateLimit: session.HistoryMaxCoordinates,
	}
	if b := ss.Best; b != nil {
		f := b.F
		d.BestF, d.BestX = &f, b.X
		if ss.Mixed != nil { // z and c beside x
			d.BestZ = b.Z
			for _, k := range b.C {
				d.BestC = append(d.BestC, float64(k))
			}
		}
	}
	// The defaults of each run: λ doubles at every restart.
	for _, r := range ss.Restarts.Runs {
		d.RunDefaults = append(d.RunDefaults, defaults(ss.Algorithm, ss.Dimension, r.PopulationSize, ss.Active))
		d.Runs = append(d.Runs, ui.RunEnd{Generation: r.Generation, PopulationSize: r.PopulationSize, StopReasons: stops(r.StopReasons)})
	}
	d.RunDefaults = append(d.RunDefaults, d.Defaults)
	return d, nil
}

// History returns the history of session id, reading from the Manager only
// the generations told since the last call for it.
func (s *Source) History(ctx context.Context, id string) ([]ui.Point, error) {
	s.mu.Lock()
	var have []ui.Point
	if e, ok := s.cache[id]; ok {
		have = e.Value.(*history).pts
	}
	s.mu.Unlock()

	from := 0
	if n := len(have); n > 0 {
		from = have[n-1].Generation + 1
	}
	recs, err := s.m.History(ctx, id, from, 0)
	if err != nil {
		if session.ErrorCode(err) == session.CodeNotFound {
			s.mu.Lock()
			if e, ok := s.cache[id]; ok {
				s.lru.Remove(e)
				delete(s.cache, id)
			}
			s.mu.Unlock()
		}
		return nil, notFound(err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.cache[id]
	if !ok {
		// Evicted since the first look (or never cached): start from the
		// points read then, since recs holds only what came after them.
		e = s.lru.PushFront(&history{id: id, pts: have})
		s.cache[id] = e
		for s.lru.Len() > cacheCap {
			old := s.lru.Back()
			s.lru.Remove(old)
			delete(s.cache, old.Value.(*history).id)
		}
	}
	s.lru.MoveToFront(e)
	h := e.Value.(*history)
	// Another call may have appended meanwhile: append only what is newer.
	last := -1
	if n := len(h.pts); n > 0 {
		last = h.pts[n-1].Generation
	}
	for _, r := range recs {
		if r.Generation > last {
			h.pts = append(h.pts, ui.Point{
				Generation: r.Generation, Run: r.Run, Lambda: r.Lambda, Evaluations: r.Evaluations,
				Best: r.Best, Median: r.Median, BestSoFar: r.BestSoFar,
				Sigma: r.Sigma, AxisRatio: r.AxisRatio, C1: r.C1, CMu: r.CMu, Cc: r.Cc,
				OverallStep: r.OverallStep, AxisLengths: r.AxisLengths, Stds: r.Stds, Mean: r.Mean,
			})
			if c := r.Constraint; c != nil {
				h.pts[len(h.pts)-1].Constraint = &ui.ConstraintPoint{Feasible: c.Feasible, Violation: c.Violation,
					BestFeasible: c.BestFeasible, BestFeasibleSoFar: c.BestFeasibleSoFar}
			}
			last = r.Generation
		}
	}
	// Callers read the slice without the lock: later appends go past its
	// length, so they never touch what a caller sees.
	return h.pts[:len(h.pts):len(h.pts)], nil
}
