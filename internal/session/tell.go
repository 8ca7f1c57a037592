package session

import "context"

// Tell applies the fitness values of the pending generation, samples the
// next batch and persists both with the generation's history record in one
// write, before it returns the advanced session.
//
// A partial tell (t.Indices) gives the values of some candidates: the
// session holds them, persisted (the record's meta only, not the state),
// and the tell that completes the generation applies it as one tell of all
// the values would. A value told again equal (NaN equal to NaN) is taken as
// the same; told otherwise, it is a conflict.
//
// A tell equal to the one just applied (same generation, same values, NaN
// equal to NaN; for a partial tell, the values of its candidates) is a
// retry: it is answered with the current session and applies nothing. Any
// other tell of another generation than the pending one is a conflict.
func (m *Manager) Tell(ctx context.Context, id string, t TellParams) (Session, error) {
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.update(ctx, e, id, "tell", tellChange(t))
	if err != nil {
		return Session{}, err
	}
	return view(l), nil
}

// TellAsk is Tell and then Ask under the same hold of the session, so that
// no other tell through this Manager comes between: the session and its
// pending batch, nil once the session has stopped. A client saves the
// round trip of the next ask.
func (m *Manager) TellAsk(ctx context.Context, id string, t TellParams) (Session, *Batch, error) {
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.update(ctx, e, id, "tell", tellChange(t))
	if err != nil {
		return Session{}, nil, err
	}
	s := view(l)
	if len(l.opt.Status().Stop) > 0 {
		return s, nil, nil
	}
	b := splitBatch(l.opt, pending(l))
	return s, &b, nil
}

// tellChange is the change of tell t: planTell's plan, carried out.
func tellChange(t TellParams) change {
	return func(l *loaded) (*write, error) {
		s := tellState{
			Lambda: l.opt.Status().Params.Lambda, Generation: l.opt.Status().Generation,
			Stopped: stoppedError(l.opt), Last: l.meta.LastTell, Held: l.meta.Partial,
			M: l.meta.constraintCount(),
		}
		p, err := planTell(s, t)
		if err != nil || !p.Write {
			return nil, err
		}
		md := nextMeta(l)
		if p.Apply == nil {
			md.Partial = p.Hold
			return &write{meta: md}, nil // the meta only
		}
		h, err := tellOptimizer(l, md, s.Generation, p.Apply, p.ApplyG)
		if err != nil {
			return nil, err
		}
		hist, err := encodeHistory(h)
		if err != nil {
			return nil, err
		}
		md.Partial, md.LastTell = nil, lastTellOf(s.Generation, p.Apply, p.ApplyG)
		return &write{meta: md, state: true, hist: &HistoryEntry{Generation: uint64(s.Generation), Data: hist}, told: &h}, nil
	}
}

// Stop ends session id at its client's request, in one write of the
// record's meta: its status becomes stopped with the reason requested (the
// generations told as its value), and ask and tell answer stopped from
// then on; its history stays. A stopped session is answered as it is.
func (m *Manager) Stop(ctx context.Context, id string) (Session, error) {
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.update(ctx, e, id, "stop", func(l *loaded) (*write, error) {
		if len(l.opt.Status().Stop) > 0 {
			return nil, nil
		}
		l.opt.StopNow() // as decodeLoaded will from the flag
		md := nextMeta(l)
		md.StopRequested = true
		return &write{meta: md, stop: true}, nil
	})
	if err != nil {
		return Session{}, err
	}
	return view(l), nil
}
