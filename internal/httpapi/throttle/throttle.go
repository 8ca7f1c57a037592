// Package throttle counts failed authentications by client address and
// tells when an address has failed too often: the bearer token of the API
// and the login form of the web pages share one Throttle, so that a token
// cannot be guessed faster through either.
//
// An address that fails Max times within a Window is refused (whatever it
// sends, the right token too: else the refusals would tell the guesses
// apart) until that window ends. The table holds at most Entries
// addresses; once it is full of live windows, the addresses it cannot
// hold share one window, so that many addresses (an IPv6 range, say:
// addresses count by their /64) cannot guess without bound either.
package throttle

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Defaults of New.
const (
	DefaultMax     = 10
	DefaultWindow  = time.Minute
	DefaultEntries = 10000
)

// Throttle is safe for concurrent use.
type Throttle struct {
	Max     int           // failures per window
	Window  time.Duration // of each address, from its first failure
	Entries int           // most addresses held
	now     func() time.Time

	mu       sync.Mutex
	m        map[netip.Prefix]*window
	overflow window    // the addresses the table cannot hold
	swept    time.Time // the last sweep of a full table
}

type window struct {
	start    time.Time
	failures int
}

// New returns a Throttle with the defaults.
func New() *Throttle {
	return &Throttle{Max: DefaultMax, Window: DefaultWindow, Entries: DefaultEntries, now: time.Now, m: map[netip.Prefix]*window{}}
}

// Key is the address r comes from: the host of RemoteAddr (a proxy's,
// behind one), IPv6 by its /64.
func Key(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	a = a.Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// live returns w if its window is still open, else nil.
func (t *Throttle) live(w *window, now time.Time) *window {
	if w == nil || now.Sub(w.start) >= t.Window {
		return nil
	}
	return w
}

// Blocked reports whether key has failed Max times in its window, and
// how long until the window ends.
func (t *Throttle) Blocked(key netip.Prefix) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	w := t.live(t.m[key], now)
	if w == nil && t.m[key] == nil && len(t.m) >= t.Entries {
		w = t.live(&t.overflow, now)
	}
	if w == nil || w.failures < t.Max {
		return false, 0
	}
	return true, w.start.Add(t.Window).Sub(now)
}

// Fail counts a failure of key and reports whether key is now blocked
// (this failure the one that blocks it: first reports true once per
// window, for the log).
func (t *Throttle) Fail(key netip.Prefix) (blocked, first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	w := t.live(t.m[key], now)
	if w == nil {
		delete(t.m, key)
		if len(t.m) >= t.Entries && now.Sub(t.swept) >= t.Window/8 {
			t.sweep(now) // a full table is swept at most 8 times a window
		}
		if len(t.m) < t.Entries {
			w = &window{start: now}
			t.m[key] = w
		} else {
			if t.live(&t.overflow, now) == nil {
				t.overflow = window{start: now}
			}
			w = &t.overflow
		}
	}
	w.failures++
	return w.failures >= t.Max, w.failures == t.Max
}

// sweep drops the windows that have ended.
func (t *Throttle) sweep(now time.Time) {
	t.swept = now
	for k, w := range t.m {
		if t.live(w, now) == nil {
			delete(t.m, k)
		}
	}
}

// Len is how many addresses the table holds.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
