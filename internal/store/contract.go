package store

// STOPGAP for issue 15, on the pg branch only: the least that makes this
// package satisfy the new session.Store while the `sess` branch moves it to
// internal/store/bolt with leases in a bucket of their own. Leases here live
// in this process's memory, timed by its clock. Delete this file on merge.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bolt "go.etcd.io/bbolt"
)

var memLeases struct {
	sync.Mutex
	m map[*Store]map[string]leaseSet
}

type leaseSet struct {
	g      uint64
	leases []session.Lease
}

// Version implements session.Store.
func (s *Store) Version(ctx context.Context, id string) (uint64, error) {
	var v uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		v = storedVersion(tx, []byte(id))
		return nil
	})
	if err == nil && v == 0 {
		err = fmt.Errorf("store: version of %s: %w", id, session.ErrNoRecord)
	}
	return v, err
}

// UpdateLeases implements session.Store (in memory: see above).
func (s *Store) UpdateLeases(ctx context.Context, id string, g uint64, fn func(time.Time, []session.Lease) ([]session.Lease, error)) error {
	if _, err := s.Version(ctx, id); err != nil {
		return err
	}
	memLeases.Lock()
	defer memLeases.Unlock()
	now := time.Now()
	cur := liveLeases(s, id, g, now)
	next, err := fn(now, cur)
	if err != nil {
		return err
	}
	if memLeases.m == nil {
		memLeases.m = map[*Store]map[string]leaseSet{}
	}
	if memLeases.m[s] == nil {
		memLeases.m[s] = map[string]leaseSet{}
	}
	memLeases.m[s][id] = leaseSet{g, append([]session.Lease(nil), next...)}
	return nil
}

// Leases implements session.Store (in memory: see above).
func (s *Store) Leases(ctx context.Context, id string, g uint64) ([]session.Lease, time.Time, error) {
	if _, err := s.Version(ctx, id); err != nil {
		return nil, time.Time{}, err
	}
	memLeases.Lock()
	defer memLeases.Unlock()
	now := time.Now()
	return liveLeases(s, id, g, now), now, nil
}

func liveLeases(s *Store, id string, g uint64, now time.Time) []session.Lease {
	ls, ok := memLeases.m[s][id]
	if !ok || ls.g != g {
		return nil
	}
	var live []session.Lease
	for _, l := range ls.leases {
		if l.Expires.After(now) {
			live = append(live, l)
		}
	}
	return live
}
