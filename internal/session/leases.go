package session

import (
	"slices"
	"time"
)

// The claims' leases as pure functions of (now, the running leases, the
// candidates told, λ): Claim and Renew run them inside Store.UpdateLeases,
// so the store's clock judges expiry and every server sharing the store
// sees the same leases. cur holds the running leases of the pending
// generation only (UpdateLeases drops the expired), in any order.

// leased is the outcome of a claim or a renewal: the candidate leased (-1
// if none is free) and the end of its lease; with none free, the end of
// the first lease to run out.
type leased struct {
	Index   int
	Expires time.Time
}

// claimLease is Claim's lease, for lease from now, of the free candidate
// of lowest index (neither told nor leased) to worker, or a named worker's
// running lease again (renewed to now + lease if that is later). The
// leases of told candidates are dropped.
func claimLease(now time.Time, cur []Lease, told []bool, lease time.Duration, worker string) ([]Lease, leased) {
	next := slices.DeleteFunc(slices.Clone(cur), func(l Lease) bool {
		return l.Index < 0 || l.Index >= len(told) || told[l.Index]
	})
	if worker != "" {
		for k, l := range next {
			if l.Worker == worker && l.Expires.After(now) {
				if until := now.Add(lease); until.After(l.Expires) {
					next[k].Expires = until // renewed
				}
				return next, leased{Index: l.Index, Expires: next[k].Expires}
			}
		}
	}
	leaseEnd := make(map[int]time.Time, len(next))
	for _, l := range next {
		if l.Expires.After(now) {
			leaseEnd[l.Index] = l.Expires
		}
	}
	r := leased{Index: -1}
	for i := range told {
		until, running := leaseEnd[i]
		switch {
		case told[i]:
		case !running:
			r = leased{Index: i, Expires: now.Add(lease)}
			next = slices.DeleteFunc(next, func(l Lease) bool { return l.Index == i }) // an expired one
			return append(next, Lease{Index: i, Worker: worker, Expires: r.Expires}), r
		case r.Expires.IsZero() || until.Before(r.Expires):
			r.Expires = until
		}
	}
	return next, r
}

// renewLease is Renew's lease of candidate index of generation (g is the
// pending one) to worker, until now + lease or its running lease's end if
// later; the worker's other leases go. It is a conflict if generation is
// not pending, the candidate is told or another worker holds a running
// lease of it.
func renewLease(now time.Time, cur []Lease, told []bool, g, generation, index int, lease time.Duration, worker string) ([]Lease, leased, error) {
	conflict := func(format string, args ...any) ([]Lease, leased, error) {
		ce := errorf(CodeConflict, format, args...)
		ce.Generation = g
		return nil, leased{}, ce
	}
	switch {
	case generation != g:
		return conflict("generation %d is not pending (generation %d is)", generation, g)
	case index >= len(told):
		return nil, leased{}, errorf(CodeOutOfRange, "index %d, want below the population size %d", index, len(told))
	case told[index]:
		return conflict("candidate %d of generation %d has its value already", index, g)
	}
	until := now.Add(lease)
	for _, l := range cur {
		if l.Index != index || !l.Expires.After(now) {
			continue
		}
		if l.Worker != worker {
			return conflict("candidate %d of generation %d is leased to another worker until %s", index, g, l.Expires.UTC().Format(time.RFC3339))
		}
		if l.Expires.After(until) {
			until = l.Expires
		}
	}
	next := slices.DeleteFunc(slices.Clone(cur), func(l Lease) bool {
		return l.Index == index || l.Worker == worker // one lease at a time
	})
	return append(next, Lease{Index: index, Worker: worker, Expires: until}), leased{Index: index, Expires: until}, nil
}

// releaseLease is Release's: worker's running lease of candidate index
// goes; ok reports whether there was one.
func releaseLease(now time.Time, cur []Lease, index int, worker string) (next []Lease, ok bool) {
	next = slices.DeleteFunc(slices.Clone(cur), func(l Lease) bool {
		if l.Index == index && l.Worker == worker && l.Expires.After(now) {
			ok = true
			return true
		}
		return false
	})
	return next, ok
}
