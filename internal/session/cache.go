package session

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
)

// cache holds a lock for each session in use and the decoded sessions
// recently used, the least recently used forgotten past its capacity: a
// number of sessions, and a number of bytes (heldBytes: what the decoded
// optimizers hold), whichever comes first.
type cache struct {
	mu       sync.Mutex
	entries  map[string]*entry
	tick     uint64
	cacheCap int
	maxBytes int64
	bytes    int64 // under mu: the sizes of the entries' decoded sessions
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
	size int64  // under cache.mu: l's size as of the last release
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
	if len(c.entries) > c.cacheCap || c.bytes > c.maxBytes {
		c.evict()
	}
	c.mu.Unlock()
}

// evict forgets the least recently used idle entries, down to 3/4 of the
// cache's capacity in sessions and in bytes. c.mu is held.
func (c *cache) evict() {
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
		if len(c.entries) <= c.cacheCap*3/4 && c.bytes <= c.maxBytes*3/4 {
			break
		}
		c.bytes -= c.entries[x.id].size
		delete(c.entries, x.id)
	}
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
			return m.decode(e, rec)
		}
	}
	rec, err := m.store.Get(ctx, id)
	if errors.Is(err, ErrNoRecord) {
		return nil, errorf(CodeNotFound, "no session %q", id)
	}
	if err != nil {
		return nil, internal("load session", err)
	}
	return m.decode(e, rec)
}

// decode decodes rec into e.
func (m *Manager) decode(e *entry, rec Record) (*loaded, error) {
	l, err := decodeLoaded(rec)
	if err != nil {
		return nil, internal("load session", &DamagedError{ID: rec.ID, What: "the record does not decode: " + err.Error()})
	}
	e.l = l
	return l, nil
}

// decodeLoaded decodes a stored record. A stop written as the meta only
// (meta.StopRequested) is applied to the optimizer decoded, as the write
// of the whole state would have stored it.
func decodeLoaded(rec Record) (*loaded, error) {
	md, err := decodeMeta(rec.Meta)
	if err != nil {
		return nil, err
	}
	o, err := decodeOptimizer(md.Algorithm, rec.State)
	if err != nil {
		return nil, err
	}
	if md.StopRequested {
		o.StopNow()
	}
	return &loaded{version: rec.Version, meta: md, opt: o, size: heldBytes(o, len(rec.State))}, nil
}

// heldBytes is about what a decoded optimizer holds in memory: C, B and
// the workspaces of the update and of the eigendecomposition (n² each),
// the batch and its steps (λn each). Measured with runtime.MemStats after
// decoding (λ = 100, n = 50 and 200): CMA-ES 7 n² + 7 λn floats,
// self-CMA-ES 8.3 n² + 8.2 λn; an encoded state is much smaller (version 5
// writes neither B nor the batch when they can be computed again).
func heldBytes(o optimizer, encoded int) int64 {
	n, lambda := int64(o.Dim()), int64(o.Params().Lambda)
	return max(int64(encoded), 8*9*(n*n+lambda*n))
}
