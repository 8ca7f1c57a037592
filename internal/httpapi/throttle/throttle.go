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
//
// That shared window refuses only the addresses that failed in it: each is
// marked in a set of bits by a keyed hash (1024 bits per entry of the
// table, at least 2^18; allocated at the first overflow, cleared when the
// window ends). An address that never failed is not refused, unless its
// bit is one an address that failed set too: the chance is at most the
// addresses beyond the table that failed in the window over the bits
// (10,000 of them over the default 10,240,000 bits: 0.1%). The
// trade-off: beyond the table, an attacker gets one guess per address it
// owns per window (the next is refused), not Max for all of them
// together, and only a flood of millions of addresses a window refuses
// many innocent ones by chance; the memory stays bounded (1.25 MiB of bits
// by default, besides the table), and an address that never failed is not
// refused because others did.
package throttle

import (
	"encoding/binary"
	"math/rand/v2"
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
	failed   []uint64  // bits of the addresses that failed in overflow; nil until one does
	hashKey  uint64    // of the bits' hash
	swept    time.Time // the last sweep of a full table
}

type window struct {
	start    time.Time
	failures int
}

// New returns a Throttle with the defaults.
func New() *Throttle {
	return &Throttle{Max: DefaultMax, Window: DefaultWindow, Entries: DefaultEntries, now: time.Now, m: map[netip.Prefix]*window{},
		hashKey: rand.Uint64()}
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
// how long until the window ends. An address outside the table is refused
// only if it failed in the shared window, once that is spent.
func (t *Throttle) Blocked(key netip.Prefix) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	w := t.live(t.m[key], now)
	if w == nil && t.m[key] == nil && t.marked(key) {
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
				clear(t.failed)
			}
			t.mark(key)
			w = &t.overflow
		}
	}
	w.failures++
	return w.failures >= t.Max, w.failures == t.Max
}

// bit is key's bit in failed, of n bits.
func (t *Throttle) bit(key netip.Prefix, n int) int {
	a := key.Addr().As16()
	h := binary.LittleEndian.Uint64(a[:8]) ^ t.hashKey
	h = mix(h) ^ binary.LittleEndian.Uint64(a[8:]) ^ uint64(key.Bits())
	return int(mix(h) % uint64(n))
}

// mix is the finalizer of splitmix64.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// mark records that key failed in the shared window.
func (t *Throttle) mark(key netip.Prefix) {
	if t.failed == nil {
		t.failed = make([]uint64, max(16*t.Entries, 1<<12)) // 1024 bits an entry, at least 2^18
	}
	i := t.bit(key, 64*len(t.failed))
	t.failed[i/64] |= 1 << (i % 64)
}

// marked reports whether key failed in the shared window (or shares its
// bit with one that did).
func (t *Throttle) marked(key netip.Prefix) bool {
	if t.failed == nil {
		return false
	}
	i := t.bit(key, 64*len(t.failed))
	return t.failed[i/64]&(1<<(i%64)) != 0
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
