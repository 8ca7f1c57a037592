package session

import (
	"context"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
)

// Get returns the session id, as the store holds it now.
func (m *Manager) Get(ctx context.Context, id string) (Session, error) {
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.load(ctx, e, id)
	if err != nil {
		return Session{}, err
	}
	return view(l), nil
}

// Ask returns the pending batch of session id: the same points until they
// are told. A stopped session has none.
func (m *Manager) Ask(ctx context.Context, id string) (Batch, error) {
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.load(ctx, e, id)
	if err != nil {
		return Batch{}, err
	}
	if err := stoppedError(l.opt); err != nil {
		return Batch{}, err
	}
	return splitBatch(l.opt, pending(l)), nil
}

// pending returns the pending batch of l, whose session is held and not
// stopped.
func pending(l *loaded) Batch {
	if l.cand == nil {
		l.cand = l.opt.Ask()
	}
	return Batch{Generation: l.opt.Status().Generation, Candidates: l.cand}
}

func stoppedError(o optimizer) *Error {
	st := o.Status()
	why := st.Stop
	if len(why) == 0 {
		return nil
	}
	e := errorf(CodeStopped, "the session has stopped: %s", why[0].Name)
	e.Generation = st.Generation
	e.StopReasons = stopReasons(why)
	return e
}

// List returns up to limit sessions with ids after after, oldest first.
func (m *Manager) List(ctx context.Context, after string, limit int) ([]Summary, error) {
	recs, err := m.store.List(ctx, after, limit)
	if err != nil {
		return nil, internal("list sessions", err)
	}
	out := make([]Summary, 0, len(recs))
	for _, r := range recs {
		md, err := decodeMeta(r.Meta)
		if err != nil {
			return nil, internal("list sessions", err)
		}
		out = append(out, Summary{
			ID: md.ID, Name: md.Name, Algorithm: md.Algorithm, Dimension: md.Dimension,
			PopulationSize: md.PopulationSize, Status: md.Status, Generation: md.Generation,
			Evaluations: md.Evaluations, BestF: md.BestF, CreatedAt: md.CreatedAt, UpdatedAt: md.UpdatedAt,
		})
	}
	return out, nil
}

// History returns up to limit (≤ 0: all) records of the generations ≥ from
// of session id.
func (m *Manager) History(ctx context.Context, id string, from, limit int) ([]HistoryRecord, error) {
	if from < 0 {
		return nil, errorf(CodeOutOfRange, "from %d, want at least 0", from)
	}
	// The session must exist (its history may be empty).
	if _, err := m.Get(ctx, id); err != nil {
		return nil, err
	}
	ents, err := m.store.History(ctx, id, uint64(from), limit)
	if err != nil {
		return nil, internal("read history", err)
	}
	out := make([]HistoryRecord, len(ents))
	for i, en := range ents {
		if out[i], err = decodeHistory(en.Data); err != nil {
			return nil, internal("read history", err)
		}
	}
	return out, nil
}

func stopReasons(rs []cmaes.StopReason) []StopReason {
	if len(rs) == 0 {
		return nil
	}
	out := make([]StopReason, len(rs))
	for i, r := range rs {
		out[i] = StopReason{Name: r.Name, Value: r.Value}
	}
	return out
}

func view(l *loaded) Session {
	o, md := l.opt, l.meta
	st := o.Status()
	p, h, cfg := st.Params, st.Hyper, st.Config
	s := Session{
		ID: md.ID, Name: md.Name, Algorithm: md.Algorithm, Active: cfg.Active, Mirrored: cfg.MirroredFirstRun || cfg.MirroredSmallRuns,
		MeanRate:  cfg.MeanRateSmallRuns || cfg.MeanRateLargeRuns,
		Dimension: p.N, PopulationSize: p.Lambda, Seed: cfg.Seed,
		Status: StatusRunning, StopReasons: stopReasons(st.Stop),
		Generation: st.Generation, Evaluations: st.Evaluations,
		Mean: slices.Clone(st.Mean), Sigma: st.Sigma, Stds: st.Stds(),
		Hyper:     Hyper{C1: h.C1, CMu: h.CMu, Cc: h.Cc, CSigma: p.CSigma, DSigma: p.DSigma, MuW: p.MuW, Init: initOf(o), SNR: snrOf(o)},
		Injected:  Injected{Waiting: st.Queued, InBatch: st.Injected},
		Metadata:  md.Metadata,
		CreatedAt: md.CreatedAt, UpdatedAt: md.UpdatedAt,
	}
	if len(s.StopReasons) > 0 {
		s.Status = StatusStopped
	}
	if b := cfg.Bounds; b != nil && len(st.Mean) == len(b.Lower) {
		s.MeanInBounds = b.Image(st.Mean)
	}
	if b := st.Best; st.HasBest {
		s.Best = &Best{X: slices.Clone(b.X), F: b.F, Generation: b.Generation}
	}
	if p := md.Partial; p != nil && p.Generation == s.Generation {
		s.Partial = Partial{Indices: slices.Clone(p.Indices), Fitness: slices.Clone(p.Fitness)}
	}
	viewConstraints(md, &s)
	viewMixed(o, &s)
	s.Restarts = restartsView(cfg)
	s.Restarts.Count, s.Restarts.Regime = st.Run, st.Regime
	for _, r := range st.RunEnds {
		s.Restarts.Runs = append(s.Restarts.Runs, RunEnd{Generation: r.Generation, PopulationSize: r.Lambda, Regime: r.Regime, StopReasons: stopReasons(r.Reasons)})
	}
	return s
}

// restartsView describes the restarts of an engine configured by cfg:
// what the engine runs, whatever the defaults are now. A session created
// before BIPOP, incpopsize and restart points has IPOP or none, λ doubled
// (IncPopSize 0 is cmaes's DefaultIncPopSize) and every run from x0.
func restartsView(cfg cmaes.Config) RestartsView {
	r := cfg.Restarts
	v := RestartsView{Strategy: defaults.RestartsName(r), Point: PointX0}
	if v.Strategy == RestartsNone {
		return v
	}
	v.Max, v.IncPopSize, v.SpareBestSmall = r.Max, r.IncPopSize, r.SpareBestSmall
	if v.IncPopSize == 0 {
		v.IncPopSize = cmaes.DefaultIncPopSize
	}
	if r.Point.Uniform {
		v.Point = PointUniform
		region := r.Point.Region
		if region == nil {
			region = cfg.Bounds
		}
		if region != nil {
			v.Region = &Bounds{Lower: slices.Clone(region.Lower), Upper: slices.Clone(region.Upper)}
		}
	}
	return v
}
