package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Injection is the outcome of Manager.Inject.
type Injection struct {
	Queued     int // the points queued by this call
	Generation int // the generation whose batch takes the first of them: the pending one + 1
	Waiting    int // the points waiting now, these included
}

// Inject queues points (Hansen 2011, "Injecting external solutions into
// CMA-ES", arXiv:1110.4181; see cmaes.ES.Inject) to replace candidates of
// session id's next batch: the batch sampled once the pending generation is
// told takes the waiting points as its candidates 0, 1, ..., in the order
// they were given. The pending batch never changes (its points may be under
// evaluation). At most λ points may wait. With clip, the step of each point
// is clipped in the update (the point handed out is the point given).
//
// The queue is part of the optimizer state, written before Inject returns:
// the points survive any restart. Points of the wrong dimension, not finite
// or outside the bounds, or more than may wait, are out_of_range, and a
// stopped session is stopped; then nothing is queued.
func (m *Manager) Inject(ctx context.Context, id string, points [][]float64, clip bool) (Injection, error) {
	in, _, err := m.InjectIdempotent(ctx, id, points, clip, "")
	return in, err
}

// maxInjectKeys is how many injections' idempotency keys a session keeps:
// a retry comes within seconds, a few injections later at most.
const maxInjectKeys = 16

// InjectIdempotent is Inject, made safe to send again by key (an
// Idempotency-Key; "" = none): an injection whose key is among the last
// maxInjectKeys of the session's keyed injections is answered as it was
// then, and queued false, if its points and clip equal that one's; it is
// out_of_range if they do not. The key is written with the points, in the
// same write: a retry after a lost answer never queues them twice.
func (m *Manager) InjectIdempotent(ctx context.Context, id string, points [][]float64, clip bool, key string) (Injection, bool, error) {
	var sum []byte
	if key != "" {
		if err := checkIdempotencyKey(key); err != nil {
			return Injection{}, false, err
		}
		sum = injectFingerprint(points, clip)
	}
	e := m.acquire(id)
	defer m.release(e)
	var (
		in     Injection
		queued bool
	)
	_, err := m.update(ctx, e, id, "inject", func(l *loaded) (*write, error) {
		queued = false
		o := l.opt
		if key != "" {
			for _, k := range l.meta.InjectKeys {
				if k.Key != key {
					continue
				}
				if !bytes.Equal(k.Fingerprint, sum) {
					return nil, errorf(CodeOutOfRange, "Idempotency-Key %q belongs to an injection of other points", key)
				}
				in = k.Answer
				return nil, nil
			}
		}
		if err := stoppedError(o); err != nil {
			return nil, err
		}
		st := o.Status()
		if err := checkInjection(points, st.Queued, st.Params.Lambda, st.Params.N, st.Config.Bounds); err != nil {
			return nil, err
		}
		if err := o.Inject(points, clip); err != nil {
			switch {
			case errors.Is(err, cmaes.ErrStopped):
				return nil, stoppedError(o)
			case errors.Is(err, cmaes.ErrInvalidInjection):
				return nil, errorf(CodeOutOfRange, "points: %v", err) // nothing was queued
			}
			return nil, err
		}
		st = o.Status()
		in, queued = Injection{Queued: len(points), Generation: st.Generation + 1, Waiting: st.Queued}, true
		md := nextMeta(l)
		if key != "" {
			keys := md.InjectKeys[max(0, len(md.InjectKeys)-maxInjectKeys+1):]
			md.InjectKeys = append(slices.Clip(keys), injectKey{Key: key, Fingerprint: sum, Answer: in})
		}
		return &write{meta: md, state: true}, nil
	})
	if err != nil {
		return Injection{}, false, err
	}
	return in, queued, nil
}

// injectFingerprint is the SHA-256 of an injection's points (their bits)
// and clip.
func injectFingerprint(points [][]float64, clip bool) []byte {
	h := sha256.New()
	var b [8]byte
	for _, x := range points {
		binary.LittleEndian.PutUint64(b[:], uint64(len(x)))
		h.Write(b[:])
		for _, v := range x {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	if clip {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// warmStart resolves p.WarmStart: p.X0 becomes the mean of that session
// (with bounds, its image in that session's box: the point its
// distribution centres on, as the points it hands out are), and it returns
// that session's best point, if it has one, to inject into the first
// batch. An explicit p.X0 must have the dimension of that session; its
// values are replaced. A session that does not exist, or whose mean or
// best point lies outside p's bounds, is out_of_range naming warm_start.
func (m *Manager) warmStart(ctx context.Context, p *CreateParams) ([][]float64, error) {
	if p.WarmStart == "" {
		return nil, nil
	}
	src := p.WarmStart
	if err := checkToken("warm_start.session", src, 256); err != nil {
		return nil, err
	}
	e := m.acquire(src)
	l, err := m.load(ctx, e, src)
	var (
		mean []float64
		best cmaes.Best
		ok   bool
	)
	if err == nil && isMixedSession(l) {
		err = errorf(CodeOutOfRange, "warm_start.session: %s is a session of algorithm %q, which has no continuous mean to start from", src, AlgorithmCatCMA)
	}
	if err == nil {
		st := l.opt.Status()
		mean = slices.Clone(st.Mean)
		if b := st.Config.Bounds; b != nil {
			mean = b.Image(mean)
		}
		best, ok = st.Best, st.HasBest
		if c := l.meta.Constrained; c != nil { // its best feasible point, not the AL's best
			best, ok = cmaes.Best{}, c.Feasible != nil
			if ok {
				best = cmaes.Best{X: c.Feasible.X, F: c.Feasible.F, Generation: c.Feasible.Generation}
			}
		}
		best.X = slices.Clone(best.X)
	}
	m.release(e)
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return nil, errorf(CodeOutOfRange, "warm_start.session: no session %q", src)
		}
		return nil, err
	}
	n := len(mean)
	if p.X0 != nil && len(p.X0) != n {
		return nil, errorf(CodeOutOfRange, "x0 has %d values, but the session of warm_start.session (%s) has dimension %d", len(p.X0), src, n)
	}
	if b := p.Bounds; b != nil && len(b.Lower) == n && len(b.Upper) == n {
		cb := &cmaes.Bounds{Lower: b.Lower, Upper: b.Upper}
		if err := checkPoint("warm_start: the mean of session "+src+", x", mean, n, cb); err != nil {
			return nil, err
		}
		if ok {
			if err := checkPoint("warm_start: the best point of session "+src+", x", best.X, n, cb); err != nil {
				return nil, err
			}
		}
	}
	p.X0 = mean
	if !ok {
		return nil, nil
	}
	return [][]float64{slices.Clone(best.X)}, nil
}

// prepare resolves p's warm start and checks p against the limits: the
// algorithm, the self-CMA-ES settings and the engine's configuration
// (without the seed), with the points to inject into the first batch.
func (m *Manager) prepare(ctx context.Context, p CreateParams) (string, selfParams, cmaes.Config, error) {
	inject, err := m.warmStart(ctx, &p)
	if err != nil {
		return "", selfParams{}, cmaes.Config{}, err
	}
	alg, sp, cfg, err := m.limits.config(p)
	if err != nil {
		return "", selfParams{}, cmaes.Config{}, err
	}
	if len(inject) > 0 {
		lambda := cfg.Lambda
		if lambda == 0 {
			lambda = defaultLambda(alg, len(cfg.X0))
		}
		// config checked the bounds; λ ≥ 2 takes the one point.
		if err := checkInjection(inject, 0, lambda, len(cfg.X0), cfg.Bounds); err != nil {
			return "", selfParams{}, cmaes.Config{}, err
		}
		cfg.Inject = inject
	}
	return alg, sp, cfg, nil
}
