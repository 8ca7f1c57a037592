// Package session is the domain of the selfcma service: sessions that run
// an ask/tell optimizer (CMA-ES or self-CMA-ES), their validation, the
// ask/tell state machine, and the Store interface they are persisted through.
//
// A session's pending batch is part of its optimizer state: create and tell
// sample the next batch and persist it with the state in one write, and ask
// only reads it, so the same points are handed out until they are told,
// after any restart of the server.
package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// Manager runs sessions over a Store. It is safe for concurrent use; the
// operations on one session are serialized, those on different sessions run
// in parallel.
//
// Manager keeps the decoded optimizers of recently used sessions in memory
// and assumes it is the only writer of its store; a write that finds another
// version drops the cached session and starts over from the store.
type Manager struct {
	store       Store
	limits      Limits
	now         func() time.Time
	newID       func() string
	encodeBatch func(Batch) []byte
	onEvent     func(Event)

	mu       sync.Mutex
	entries  map[string]*entry
	tick     uint64
	cacheCap int

	leases leaseTable // the claims' leases, apart from the cache
}

// entry serializes the operations on one session and caches it.
type entry struct {
	mu sync.Mutex
	l  *loaded // under mu; nil = not cached

	refs int    // under Manager.mu: holders and waiters of mu
	used uint64 // under Manager.mu: last use, for eviction
}

// loaded is a session decoded from its record.
type loaded struct {
	version uint64
	meta    *meta
	opt     optimizer
	cand    [][]float64 // the pending batch's candidates, handed out shared; nil = not yet
	encoded []byte      // Options.EncodeBatch of the pending batch; nil = not yet
}

// stateBufs holds the buffers states are encoded in for a write: the store
// keeps no byte of a record after Put, so a buffer serves again once the
// write has returned (half a megabyte a tell at n = 100).
var stateBufs = sync.Pool{New: func() any { return new([]byte) }}

// Options configure a Manager.
type Options struct {
	Limits   Limits           // zero value = DefaultLimits
	CacheCap int              // decoded sessions kept in memory; 0 = 256
	Now      func() time.Time // for tests; nil = time.Now

	// EncodeBatch, when not nil, writes a pending batch as the server
	// answers it. The Manager runs it while the write that makes the batch
	// pending waits for the disk, keeps the bytes with the cached session
	// and hands them out as Batch.Encoded, so the next ask costs no
	// encoding and the commit's wait hides the encoding's CPU. A cached
	// session then holds its batch twice (JSON: about 2.7 times the
	// float64s).
	EncodeBatch func(Batch) []byte

	// OnEvent, when not nil, is told of each session created, generation
	// applied, restart, stop and deletion (see Event).
	OnEvent func(Event)
}

// NewManager returns a Manager over st.
func NewManager(st Store, opt Options) *Manager {
	m := &Manager{store: st, limits: opt.Limits, now: opt.Now, encodeBatch: opt.EncodeBatch, onEvent: opt.OnEvent, cacheCap: opt.CacheCap, entries: map[string]*entry{}}
	if m.limits == (Limits{}) {
		m.limits = DefaultLimits
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.cacheCap <= 0 {
		m.cacheCap = 256
	}
	m.newID = func() string { return uuid.Must(uuid.NewV7()).String() }
	return m
}

// Limits returns the limits the Manager enforces.
func (m *Manager) Limits() Limits { return m.limits }

func (m *Manager) acquire(id string) *entry {
	m.mu.Lock()
	e := m.entries[id]
	if e == nil {
		e = new(entry)
		m.entries[id] = e
	}
	e.refs++
	m.tick++
	e.used = m.tick
	m.mu.Unlock()
	e.mu.Lock()
	return e
}

func (m *Manager) release(e *entry) {
	e.mu.Unlock()
	m.mu.Lock()
	e.refs--
	if len(m.entries) > m.cacheCap {
		m.evict()
	}
	m.mu.Unlock()
}

// evict forgets the least recently used idle entries, down to 3/4 of the
// cache's capacity. m.mu is held.
func (m *Manager) evict() {
	type idle struct {
		id   string
		used uint64
	}
	var cand []idle
	for id, e := range m.entries {
		if e.refs == 0 {
			cand = append(cand, idle{id, e.used})
		}
	}
	slices.SortFunc(cand, func(a, b idle) int { return int64Cmp(a.used, b.used) })
	for _, c := range cand {
		if len(m.entries) <= m.cacheCap*3/4 {
			break
		}
		delete(m.entries, c.id)
	}
}

func int64Cmp(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// load returns the cached session of e, decoding it from the store first if
// needed. e.mu is held.
func (m *Manager) load(ctx context.Context, e *entry, id string) (*loaded, error) {
	if e.l != nil {
		return e.l, nil
	}
	rec, err := m.store.Get(ctx, id)
	if errors.Is(err, ErrNoRecord) {
		return nil, errorf(CodeNotFound, "no session %q", id)
	}
	if err != nil {
		return nil, internal("load session", err)
	}
	md, err := decodeMeta(rec.Meta)
	if err != nil {
		return nil, internal("load session", err)
	}
	o, err := decodeOptimizer(md.Algorithm, rec.State)
	if err != nil {
		return nil, internal("load session", err)
	}
	e.l = &loaded{version: rec.Version, meta: md, opt: o}
	return e.l, nil
}

func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Create validates p, starts the optimizer (which samples the first batch)
// and persists the session in one write. With p.IdempotencyKey it is
// CreateIdempotent.
func (m *Manager) Create(ctx context.Context, p CreateParams) (Session, error) {
	s, _, err := m.CreateIdempotent(ctx, p)
	return s, err
}

// create is Create of a new session, stored with key k (nil: none).
func (m *Manager) create(ctx context.Context, p CreateParams, k *idemKey) (Session, error) {
	alg, init, cfg, err := m.limits.config(p)
	if err != nil {
		return Session{}, err
	}
	if p.Metadata != nil {
		t := bytes.TrimLeft(p.Metadata, " \t\r\n")
		if !json.Valid(p.Metadata) || len(t) == 0 || t[0] != '{' {
			return Session{}, errorf(CodeOutOfRange, "metadata is not a JSON object")
		}
	}
	if p.Seed != nil {
		cfg.Seed = *p.Seed
	} else {
		cfg.Seed = randomSeed()
	}
	o, err := newOptimizer(alg, init, cfg)
	if err != nil {
		// config has checked what the engines check.
		return Session{}, errorf(CodeOutOfRange, "%v", err)
	}
	now := m.now().UTC()
	md := &meta{ID: m.newID(), Name: p.Name, Algorithm: alg, CreatedAt: now, UpdatedAt: now}
	if p.Metadata != nil {
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.Metadata); err != nil {
			return Session{}, errorf(CodeOutOfRange, "metadata is not a JSON object")
		}
		md.Metadata = buf.Bytes()
	}
	buf := stateBufs.Get().(*[]byte)
	defer stateBufs.Put(buf)
	rec, err := encodeRecord(md, o, buf)
	if err != nil {
		return Session{}, internal("create", err)
	}
	if k != nil {
		rec.Key, rec.KeyData = k.key, k.fingerprint
	}
	v, cand, enc, err := m.put(ctx, rec, nil, o)
	if err != nil {
		return Session{}, internal("store new session", err)
	}
	l := &loaded{version: v, meta: md, opt: o, cand: cand, encoded: enc}
	e := m.acquire(md.ID)
	e.l = l
	s := view(l)
	m.release(e)
	m.emit(EventCreated, s, 0)
	return s, nil
}

// Get returns the session id.
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
	return m.pending(l), nil
}

// pending returns the pending batch of l, with its encoding when the
// Manager has an encoder (made now if the write did not make it). l's
// session is held and not stopped.
func (m *Manager) pending(l *loaded) Batch {
	if l.cand == nil {
		l.cand = l.opt.Ask()
	}
	b := Batch{Generation: l.opt.Generation(), Candidates: l.cand}
	if m.encodeBatch != nil && l.encoded == nil {
		l.encoded = m.encodeBatch(b)
	}
	b.Encoded = l.encoded
	return b
}

// encodeAside is the size of a batch (λ·n) from which put encodes it on
// another goroutine: below it, starting one costs more than the encoding.
const encodeAside = 1024

// put writes rec (and hist) and, with an encoder, encodes o's pending batch
// meanwhile: a large batch's encoding runs while the commit waits for the
// disk. It returns the new version, the pending candidates and their
// encoding (both nil when there is no encoder or o has stopped). The write
// must not be abandoned half way by a client that goes away: ctx's
// cancellation does not reach it.
func (m *Manager) put(ctx context.Context, rec Record, hist *HistoryEntry, o optimizer) (uint64, [][]float64, []byte, error) {
	var (
		b   Batch
		enc []byte
		wg  sync.WaitGroup
	)
	if m.encodeBatch != nil && len(o.Stopped()) == 0 {
		b = Batch{Generation: o.Generation(), Candidates: o.Ask()}
		if len(b.Candidates)*o.Dim() < encodeAside {
			enc = m.encodeBatch(b)
		} else {
			wg.Go(func() { enc = m.encodeBatch(b) })
		}
	}
	v, err := m.store.Put(context.WithoutCancel(ctx), rec, hist)
	wg.Wait()
	if err != nil {
		return 0, nil, nil, err
	}
	return v, b.Candidates, enc, nil
}

// encodeRecord returns the record of a write of o with md, which it
// summarizes from o first; the state is encoded in *buf, a buffer of
// stateBufs (and grows it).
func encodeRecord(md *meta, o optimizer, buf *[]byte) (Record, error) {
	md.summarize(o)
	state, err := o.AppendBinary((*buf)[:0])
	*buf = state
	if err != nil {
		return Record{}, fmt.Errorf("encode state: %w", err)
	}
	mb, err := encodeMeta(md)
	if err != nil {
		return Record{}, fmt.Errorf("encode session record: %w", err)
	}
	return Record{ID: md.ID, Meta: mb, State: state}, nil
}

func stoppedError(o optimizer) *Error {
	why := o.Stopped()
	if len(why) == 0 {
		return nil
	}
	e := errorf(CodeStopped, "the session has stopped: %s", why[0].Name)
	e.Generation = o.Generation()
	e.StopReasons = stopReasons(why)
	return e
}

// Tell applies the fitness values of the pending generation, samples the
// next batch and persists both with the generation's history record in one
// write, before it returns the advanced session.
//
// A partial tell (t.Indices) gives the values of some candidates: the
// session holds them, persisted, and the tell that completes the
// generation applies it as one tell of all the values would. A value told
// again equal (NaN equal to NaN) is taken as the same; told otherwise, it is
// a conflict.
//
// A tell equal to the one just applied (same generation, same values, NaN
// equal to NaN; for a partial tell, the values of its candidates) is a
// retry: it is answered with the current session and applies nothing. Any
// other tell of another generation than the pending one is a conflict.
func (m *Manager) Tell(ctx context.Context, id string, t TellParams) (Session, error) {
	e := m.acquire(id)
	defer m.release(e)
	s, _, err := m.tell(ctx, e, id, t)
	return s, err
}

// TellAsk is Tell and then Ask under the same hold of the session, so that
// no other tell comes between: the session and its pending batch, nil once
// the session has stopped. A client saves the round trip of the next ask.
func (m *Manager) TellAsk(ctx context.Context, id string, t TellParams) (Session, *Batch, error) {
	e := m.acquire(id)
	defer m.release(e)
	s, l, err := m.tell(ctx, e, id, t)
	if err != nil || len(l.opt.Stopped()) > 0 {
		return s, nil, err
	}
	b := m.pending(l)
	return s, &b, nil
}

// tell is Tell with e held; it also returns the session it answers from.
func (m *Manager) tell(ctx context.Context, e *entry, id string, t TellParams) (Session, *loaded, error) {
	for attempt := 0; ; attempt++ {
		l, err := m.load(ctx, e, id)
		if err != nil {
			return Session{}, nil, err
		}
		if lt := l.meta.LastTell; lt != nil && lt.Generation == t.Generation && lt.repeats(t) {
			return view(l), l, nil
		}
		if err := stoppedError(l.opt); err != nil {
			return Session{}, nil, err
		}
		g := l.opt.Generation()
		if t.Generation != g {
			ce := errorf(CodeConflict, "generation %d was told, the pending generation is %d", t.Generation, g)
			if t.Generation > g {
				ce.Message = fmt.Sprintf("generation %d has not been asked, the pending generation is %d", t.Generation, g)
			}
			ce.Generation = g
			return Session{}, nil, ce
		}
		fit, held, err := gather(l, t)
		if err != nil {
			return Session{}, nil, err
		}

		// From here on the cached optimizer changes: any failure drops it.
		switch {
		case fit != nil:
			err = m.apply(ctx, id, l, TellParams{Generation: g, Fitness: fit})
		case held != l.meta.Partial:
			err = m.rewrite(ctx, id, l, held)
		}
		if err == nil {
			return view(l), l, nil
		}
		e.l = nil
		if errors.Is(err, ErrVersion) && attempt == 0 {
			continue // written by someone else: start over from the store
		}
		if errors.Is(err, ErrNoRecord) {
			return Session{}, nil, errorf(CodeNotFound, "no session %q", id)
		}
		return Session{}, nil, internal("tell", err)
	}
}

// gather checks tell t of l's pending generation against the population
// size and the values l holds, and returns the λ values to apply once the
// generation is complete (else nil) and the values to hold: l's own when t
// adds none.
func gather(l *loaded, t TellParams) ([]float64, *partialTell, error) {
	lam, g := l.opt.Params().Lambda, l.opt.Generation()
	for i, f := range t.Fitness {
		if math.IsInf(f, 0) {
			return nil, nil, errorf(CodeOutOfRange, "fitness[%d] is infinite, want a finite number or null", i)
		}
	}
	if t.Indices == nil && len(t.Fitness) != lam {
		return nil, nil, errorf(CodeOutOfRange, "fitness has %d values, want %d (the population size)", len(t.Fitness), lam)
	}
	if t.Indices != nil {
		if len(t.Indices) != len(t.Fitness) {
			return nil, nil, errorf(CodeOutOfRange, "indices has %d values and fitness %d, want as many", len(t.Indices), len(t.Fitness))
		}
		if len(t.Indices) == 0 {
			return nil, nil, errorf(CodeOutOfRange, "indices is empty, want 1 to %d candidates", lam)
		}
	}

	held := l.meta.Partial
	if held != nil && held.Generation != g {
		held = nil
	}
	if t.Indices == nil && held == nil {
		return t.Fitness, nil, nil // the whole generation at once
	}

	// The values of the generation, those held first.
	val := make([]float64, lam)
	told := make([]bool, lam)
	n := 0
	if held != nil {
		for k, i := range held.Indices {
			if i < lam {
				val[i], told[i] = held.Fitness[k], true
				n++
			}
		}
	}
	nheld := n
	var mine []bool // the candidates t tells
	if t.Indices != nil {
		mine = make([]bool, lam)
	}
	for k, f := range t.Fitness {
		i := k
		if t.Indices != nil {
			i = t.Indices[k]
			if i < 0 || i >= lam {
				return nil, nil, errorf(CodeOutOfRange, "indices[%d] is %d, want 0 to %d (the population size is %d)", k, i, lam-1, lam)
			}
			if mine[i] {
				return nil, nil, errorf(CodeOutOfRange, "indices[%d] repeats candidate %d", k, i)
			}
			mine[i] = true
		}
		if !told[i] {
			val[i], told[i] = f, true
			n++
		} else if !sameValue(val[i], f) { // held
			ce := errorf(CodeConflict, "candidate %d of generation %d was told %s before, now %s", i, g, fmtValue(val[i]), fmtValue(f))
			ce.Generation = g
			return nil, nil, ce
		}
	}
	if n == lam {
		return val, nil, nil
	}
	if n == nheld {
		return nil, l.meta.Partial, nil
	}
	p := &partialTell{Generation: g}
	for i, ok := range told {
		if ok {
			p.Indices = append(p.Indices, i)
			p.Fitness = append(p.Fitness, val[i])
		}
	}
	return nil, p, nil
}

// apply tells the λ values of t to l's optimizer and writes the advanced
// session with the generation's history record.
func (m *Manager) apply(ctx context.Context, id string, l *loaded, t TellParams) error {
	l.cand, l.encoded = nil, nil // of the batch being told
	h, err := l.opt.Tell(t.Fitness)
	if err != nil {
		return err
	}
	hist, err := encodeHistory(h)
	if err != nil {
		return err
	}
	fit := make([]nullNum, len(t.Fitness))
	for i, f := range t.Fitness {
		fit[i] = nullNum(f)
	}
	buf := stateBufs.Get().(*[]byte)
	defer stateBufs.Put(buf)
	rec, md, err := m.nextRecord(id, l, buf, nil, &lastTell{Generation: t.Generation, Fitness: fit})
	if err != nil {
		return err
	}
	v, cand, enc, err := m.put(ctx, rec, &HistoryEntry{Generation: uint64(t.Generation), Data: hist}, l.opt)
	if err != nil {
		return err
	}
	l.version, l.meta, l.cand, l.encoded = v, md, cand, enc
	m.applied(l, h, len(t.Fitness))
	return nil
}

// repeats reports whether t tells what lt told: all its values, or for a
// partial tell the values of t's candidates.
func (lt *lastTell) repeats(t TellParams) bool {
	if t.Indices == nil {
		if len(lt.Fitness) != len(t.Fitness) {
			return false
		}
		for i, f := range t.Fitness {
			if !sameValue(float64(lt.Fitness[i]), f) {
				return false
			}
		}
		return true
	}
	if len(t.Indices) == 0 || len(t.Indices) != len(t.Fitness) {
		return false
	}
	for k, i := range t.Indices {
		if i < 0 || i >= len(lt.Fitness) || !sameValue(float64(lt.Fitness[i]), t.Fitness[k]) {
			return false
		}
	}
	return true
}

// sameValue compares two told values, NaN (a failed evaluation) equal to
// NaN.
func sameValue(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }

// fmtValue writes a told value as a client wrote it: null for NaN.
func fmtValue(f float64) string {
	if math.IsNaN(f) {
		return "null"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Stop ends session id at its client's request, in one write: its status
// becomes stopped with the reason requested (the generations told as its
// value), and ask and tell answer stopped from then on; its history stays.
// A stopped session is answered as it is.
func (m *Manager) Stop(ctx context.Context, id string) (Session, error) {
	e := m.acquire(id)
	defer m.release(e)
	for attempt := 0; ; attempt++ {
		l, err := m.load(ctx, e, id)
		if err != nil {
			return Session{}, err
		}
		if len(l.opt.Stopped()) > 0 {
			return view(l), nil
		}
		// From here on the cached optimizer changes: any failure drops it.
		l.opt.StopNow()
		l.cand, l.encoded = nil, nil
		err = m.rewrite(ctx, id, l, l.meta.Partial)
		if err == nil {
			s := view(l)
			m.emit(EventStopped, s, 0)
			return s, nil
		}
		e.l = nil
		if errors.Is(err, ErrVersion) && attempt == 0 {
			continue
		}
		if errors.Is(err, ErrNoRecord) {
			return Session{}, errorf(CodeNotFound, "no session %q", id)
		}
		return Session{}, internal("stop", err)
	}
}

// rewrite writes l's state and record as they are now, holding the partial
// tell p, without a history entry.
func (m *Manager) rewrite(ctx context.Context, id string, l *loaded, p *partialTell) error {
	buf := stateBufs.Get().(*[]byte)
	defer stateBufs.Put(buf)
	rec, md, err := m.nextRecord(id, l, buf, p, l.meta.LastTell)
	if err != nil {
		return err
	}
	v, err := m.store.Put(context.WithoutCancel(ctx), rec, nil)
	if err != nil {
		return err
	}
	l.version, l.meta = v, md
	return nil
}

// nextRecord is the record that replaces l's stored one: a copy of its
// meta stamped now, holding the partial tell p and the last tell lt, with
// l's optimizer state encoded in *buf (see encodeRecord).
func (m *Manager) nextRecord(id string, l *loaded, buf *[]byte, p *partialTell, lt *lastTell) (Record, *meta, error) {
	md := *l.meta
	md.UpdatedAt = m.now().UTC()
	md.Partial, md.LastTell = p, lt
	rec, err := encodeRecord(&md, l.opt, buf)
	rec.ID, rec.Version = id, l.version
	return rec, &md, err
}

// Delete removes session id and its history.
func (m *Manager) Delete(ctx context.Context, id string) error {
	e := m.acquire(id)
	defer m.release(e)
	version := uint64(0)
	if e.l != nil {
		version = e.l.version
	} else {
		rec, err := m.store.Get(ctx, id)
		if errors.Is(err, ErrNoRecord) {
			return errorf(CodeNotFound, "no session %q", id)
		}
		if err != nil {
			return internal("delete session", err)
		}
		version = rec.Version
	}
	e.l = nil
	m.leases.forget(id)
	err := m.store.Delete(context.WithoutCancel(ctx), id, version)
	switch {
	case errors.Is(err, ErrNoRecord):
		return errorf(CodeNotFound, "no session %q", id)
	case err != nil:
		return internal("delete session", err)
	}
	m.emit(EventDeleted, Session{ID: id}, 0)
	return nil
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
	p, h, cfg := o.Params(), o.Hyper(), o.Config()
	s := Session{
		ID: md.ID, Name: md.Name, Algorithm: md.Algorithm,
		Dimension: o.Dim(), PopulationSize: p.Lambda, Seed: cfg.Seed,
		Status: StatusRunning, StopReasons: stopReasons(o.Stopped()),
		Generation: o.Generation(), Evaluations: o.Evaluations(),
		Mean: o.Mean(), Sigma: o.Sigma(),
		Hyper:     Hyper{C1: h.C1, CMu: h.CMu, Cc: h.Cc, CSigma: p.CSigma, DSigma: p.DSigma, MuW: p.MuW, Init: initOf(o)},
		Restarts:  RestartsView{Strategy: "none", Count: o.Run()},
		Metadata:  md.Metadata,
		CreatedAt: md.CreatedAt, UpdatedAt: md.UpdatedAt,
	}
	if len(s.StopReasons) > 0 {
		s.Status = StatusStopped
	}
	if b, ok := o.Best(); ok {
		s.Best = &Best{X: b.X, F: b.F, Generation: b.Generation}
	}
	if p := md.Partial; p != nil && p.Generation == s.Generation {
		s.Partial = Partial{Indices: slices.Clone(p.Indices), Fitness: slices.Clone(p.Fitness)}
	}
	if cfg.Restarts.IPOP {
		s.Restarts.Strategy, s.Restarts.Max = "ipop", cfg.Restarts.Max
	}
	for _, r := range o.RunEnds() {
		s.Restarts.Runs = append(s.Restarts.Runs, RunEnd{Generation: r.Generation, PopulationSize: r.Lambda, StopReasons: stopReasons(r.Reasons)})
	}
	return s
}
