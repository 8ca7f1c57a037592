package session

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/sepcma"
)

// cache holds a lock for each session in use and the decoded sessions
// recently used, the least recently used forgotten past its capacity: a
// number of sessions, and a number of bytes (heldBytes: what the decoded
// optimizers hold), whichever comes first.
//
// The bytes bound the sessions in use too: a session is decoded only when
// what it will hold fits beside the others (reserve), or when no other
// holds any, so that concurrent requests of large sessions take turns
// rather than all their memory at once.
type cache struct {
	mu       sync.Mutex
	entries  map[string]*entry
	tick     uint64
	cacheCap int
	maxBytes int64
	bytes    int64         // under mu: the sizes of the entries' sessions, cached or in use
	waiters  int           // under mu: reserve calls waiting for bytes
	freed    chan struct{} // under mu: closed and replaced when bytes are given back to waiters
}

// DefaultCacheBytes bounds the decoded sessions a Manager keeps, in bytes
// they hold (heldBytes; Options.CacheBytes).
const DefaultCacheBytes = 1 << 30

// entry serializes the operations on one session and caches it.
type entry struct {
	mu sync.Mutex
	l  *loaded // under mu; nil = not cached

	refs int    // under cache.mu: holders and waiters of mu
	used uint64 // under cache.mu: last use, for eviction
	size int64  // under cache.mu: l's size as of the last release, or reserved for its decoding
}

// loaded is a session decoded from its record.
type loaded struct {
	version uint64
	meta    *meta
	opt     optimizer
	cand    [][]float64 // the pending batch's candidates, handed out shared; nil = not yet
	size    int64       // heldBytes, as last read or written
}

func (c *cache) init(capacity int, maxBytes int64) {
	c.entries = map[string]*entry{}
	c.cacheCap = capacity
	if c.cacheCap <= 0 {
		c.cacheCap = 256
	}
	c.maxBytes = maxBytes
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultCacheBytes
	}
	c.freed = make(chan struct{})
}

// acquire returns the entry of id, locked.
func (c *cache) acquire(id string) *entry {
	c.mu.Lock()
	e := c.entries[id]
	if e == nil {
		e = new(entry)
		c.entries[id] = e
	}
	e.refs++
	c.tick++
	e.used = c.tick
	c.mu.Unlock()
	e.mu.Lock()
	return e
}

func (c *cache) release(e *entry) {
	var size int64
	if e.l != nil {
		size = e.l.size
	}
	e.mu.Unlock()
	c.mu.Lock()
	e.refs--
	c.bytes += size - e.size
	e.size = size
	var freed int64
	if len(c.entries) > c.cacheCap || c.bytes > c.maxBytes {
		freed = c.evict()
	}
	c.wake()
	c.mu.Unlock()
	if freed >= collectBytes {
		go runtime.GC()
	}
}

// collectBytes: evicting sessions that held this many bytes starts a
// garbage collection, so that the next large session reuses their memory
// rather than growing the heap to twice what is live (GOGC's default);
// measured, six sessions of n = 2000 told at once with a cache of 256 MiB
// took the server to 1.4 GB without it.
const collectBytes = 64 << 20

// wake lets the reserve calls waiting look again. c.mu is held.
func (c *cache) wake() {
	if c.waiters > 0 {
		close(c.freed)
		c.freed = make(chan struct{})
	}
}

// reserve takes want bytes for the session that e, locked, is about to
// decode (its old one given back): at once if they fit under the bound
// beside the sessions cached and in use, the idle ones evicted first, or
// if no other session holds bytes; else it waits for a release. The
// decoded session's own size replaces the reservation at release.
func (c *cache) reserve(ctx context.Context, e *entry, want int64) error {
	c.mu.Lock()
	c.bytes -= e.size
	freed := e.size
	e.size = 0
	for c.bytes > 0 && c.bytes+want > c.maxBytes {
		freed += c.evictFor(want)
		if c.bytes == 0 || c.bytes+want <= c.maxBytes {
			break
		}
		// What remains is in use: wait for a release.
		ch := c.freed
		c.waiters++
		c.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = ctx.Err()
		}
		c.mu.Lock()
		c.waiters--
		if err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.bytes += want
	e.size = want
	c.mu.Unlock()
	if freed >= collectBytes {
		runtime.GC() // before this session allocates (collectBytes)
	}
	return nil
}

// evict forgets the least recently used idle entries, down to 3/4 of the
// cache's capacity in sessions and in bytes. c.mu is held.
func (c *cache) evict() int64 {
	return c.evictUntil(func() bool { return len(c.entries) <= c.cacheCap*3/4 && c.bytes <= c.maxBytes*3/4 })
}

// evictFor forgets the least recently used idle entries until want more
// bytes fit under the bound. c.mu is held.
func (c *cache) evictFor(want int64) int64 {
	return c.evictUntil(func() bool { return c.bytes+want <= c.maxBytes })
}

// evictUntil forgets the least recently used idle entries until done says
// so, or none is left, and returns the bytes they held. c.mu is held.
func (c *cache) evictUntil(done func() bool) (freed int64) {
	type idle struct {
		id   string
		used uint64
	}
	var cand []idle
	for id, e := range c.entries {
		if e.refs == 0 {
			cand = append(cand, idle{id, e.used})
		}
	}
	slices.SortFunc(cand, func(a, b idle) int { return cmp.Compare(a.used, b.used) })
	for _, x := range cand {
		if done() {
			break
		}
		freed += c.entries[x.id].size
		c.bytes -= c.entries[x.id].size
		delete(c.entries, x.id)
	}
	return freed
}

// load returns session id, held in e: the cached one if the store's
// version is still its version (one cheap read: another server may have
// written since), else decoded from the store. e.mu is held.
func (m *Manager) load(ctx context.Context, e *entry, id string) (*loaded, error) {
	if e.l != nil {
		// A NewerGetter hands back the stored session with the check when it
		// is newer: one round trip, not two.
		var (
			rec   Record
			err   error
			newer bool
		)
		if ng, ok := m.store.(NewerGetter); ok {
			rec, err = ng.GetNewer(ctx, id, e.l.version)
			newer = true
		} else {
			rec.Version, err = m.store.Version(ctx, id)
		}
		switch {
		case errors.Is(err, ErrNoRecord):
			e.l = nil
			return nil, errorf(CodeNotFound, "no session %q", id)
		case err != nil:
			return nil, internal("load session", err)
		case rec.Version == e.l.version:
			return e.l, nil
		}
		e.l = nil // written by another Manager
		if newer {
			return m.decode(ctx, e, rec)
		}
	}
	rec, err := m.store.Get(ctx, id)
	if errors.Is(err, ErrNoRecord) {
		return nil, errorf(CodeNotFound, "no session %q", id)
	}
	if err != nil {
		return nil, internal("load session", err)
	}
	return m.decode(ctx, e, rec)
}

// decode decodes rec into e, once the bytes its session will hold are
// reserved (at most what its engine may hold at its n and λ: reserveBytes).
func (m *Manager) decode(ctx context.Context, e *entry, rec Record) (*loaded, error) {
	md, err := decodeMeta(rec.Meta)
	if err != nil {
		return nil, internal("load session", &DamagedError{ID: rec.ID, What: "the record does not decode: " + err.Error()})
	}
	if err := m.cache.reserve(ctx, e, reserveBytes(md)); err != nil {
		return nil, internal("wait for memory to load the session", err)
	}
	l, err := decodeLoaded(md, rec)
	if err != nil {
		return nil, internal("load session", &DamagedError{ID: rec.ID, What: "the record does not decode: " + err.Error()})
	}
	e.l = l
	return l, nil
}

// reserveBytes bounds what the session of md will hold once decoded: what
// its engine reports for its n and λ with every option that takes memory
// (active CMA-ES, bounds, the numerics that takes most, a self-CMA-ES run
// that self-adapts).
func reserveBytes(md *meta) int64 {
	n, lambda := md.Dimension, md.PopulationSize
	switch md.Algorithm {
	case AlgorithmSelfCMAES:
		return selfcma.HeldBytes(n, lambda, true, true, cmaes.NumericsLatest, true)
	case AlgorithmSepCMAES:
		return sepcma.HeldBytes(n, lambda, true)
	}
	return cmaes.HeldBytes(n, lambda, true, true, cmaes.NumericsLatest)
}

// CreateBytes is what the create of a session of dimension n takes in
// memory while it runs: what its engine will hold at the default λ with
// the options that take most (self-CMA-ES, which adapts only from λ = 10n,
// active CMA-ES, bounds, the latest numerics), and the encoding of its
// state, C's n(n+1)/2 values. Measured: a create at n = 2000 takes the
// server from 20 to 354 MB; this says 420 MB.
func CreateBytes(n int) int64 {
	held := selfcma.HeldBytes(n, cmaes.DefaultLambda(n), true, true, cmaes.NumericsLatest, false)
	return held + 4*int64(n)*int64(n+1)
}

// decodeLoaded decodes the state of a stored record of meta md. A stop
// written as the meta only (meta.StopRequested) is applied to the
// optimizer decoded, as the write of the whole state would have stored it.
func decodeLoaded(md *meta, rec Record) (*loaded, error) {
	o, err := decodeOptimizer(md.Algorithm, rec.State)
	if err != nil {
		return nil, err
	}
	if err := checkConstrained(md); err != nil {
		return nil, err
	}
	if md.StopRequested {
		o.StopNow()
	}
	return &loaded{version: rec.Version, meta: md, opt: o, size: heldBytes(o)}, nil
}

// heldBytes is what a decoded optimizer holds in memory, as its engine
// reports it (cmaes.HeldBytes, selfcma.HeldBytes).
func heldBytes(o optimizer) int64 { return o.HeldBytes() }
