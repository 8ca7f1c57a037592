// Package session is the domain of the selfcma service: sessions that run
// an ask/tell optimizer (CMA-ES or self-CMA-ES), their validation, the
// ask/tell state machine, and the Store interface they are persisted through.
//
// A session's pending batch is part of its optimizer state: create and tell
// sample the next batch and persist it with the state in one write, and ask
// only reads it, so the same points are handed out until they are told,
// after any restart of the server.
//
// The Manager's files each do one job: cache.go keeps decoded sessions,
// trusted only while the store's version is theirs; update.go is the one
// update primitive every change of a session goes through; create.go makes
// sessions; tell.go tells and stops them, by the pure protocol of
// tellproto.go; claim.go leases candidates to workers, by the pure lease
// functions of leases.go; inject.go queues injected points and resolves
// the warm starts of creates; query.go answers what reads only.
package session

import (
	"time"

	"github.com/google/uuid"
)

// Manager runs sessions over a Store. It is safe for concurrent use; the
// operations on one session are serialized, those on different sessions run
// in parallel.
//
// Several Managers, in one process or in several servers, may share one
// Store: a Manager keeps the decoded optimizers of recently used sessions in
// memory but uses one only after the store says its version is still the
// stored one, and every write is a compare-and-swap that, when another
// writer came first, starts over from the store.
type Manager struct {
	store  Store
	limits Limits
	now    func() time.Time
	newID  func() string

	onEvent func(Event)

	cache
}

// Options configure a Manager.
type Options struct {
	Limits   Limits // zero value = DefaultLimits()
	CacheCap int    // decoded sessions kept in memory; 0 = 256
	// CacheBytes bounds them too, and the sessions in use with them, in
	// bytes they hold as their engines report it (cmaes.HeldBytes, about
	// 100 n² + 50 λn at the latest numerics); a request whose session does
	// not fit waits for others to finish, unless it is the only one.
	// 0 = DefaultCacheBytes.
	CacheBytes int64
	Now        func() time.Time // the time sessions are stamped with, for tests; nil = time.Now (leases are timed by the store)

	// OnEvent, when not nil, is told of each session created, generation
	// applied, restart, stop and deletion (see Event).
	OnEvent func(Event)
}

// NewManager returns a Manager over st.
func NewManager(st Store, opt Options) *Manager {
	m := &Manager{store: st, limits: opt.Limits, now: opt.Now, onEvent: opt.OnEvent}
	if m.limits == (Limits{}) {
		m.limits = DefaultLimits()
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.cache.init(opt.CacheCap, opt.CacheBytes)
	m.newID = func() string { return uuid.Must(uuid.NewV7()).String() }
	return m
}

// Limits returns the limits the Manager enforces.
func (m *Manager) Limits() Limits { return m.limits }
