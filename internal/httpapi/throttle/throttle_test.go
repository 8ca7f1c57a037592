package throttle

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func newAt(now *time.Time) *Throttle {
	t := New()
	t.Max, t.Window, t.Entries = 3, time.Minute, 4
	t.now = func() time.Time { return *now }
	t.hashKey = 1 // the same bits every run
	return t
}

func TestBlocksAfterMax(t *testing.T) {
	now := time.Unix(1000, 0)
	th := newAt(&now)
	a, b := netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.0.0.2/32")
	for i := 1; i <= 3; i++ {
		if blocked, _ := th.Blocked(a); blocked {
			t.Fatalf("blocked before failure %d", i)
		}
		blocked, first := th.Fail(a)
		if blocked != (i == 3) || first != (i == 3) {
			t.Fatalf("failure %d: blocked %v first %v", i, blocked, first)
		}
		now = now.Add(10 * time.Second)
	}
	blocked, wait := th.Blocked(a)
	if !blocked || wait != 30*time.Second {
		t.Errorf("after 3 failures: blocked %v, wait %v; want true, 30s", blocked, wait)
	}
	if _, first := th.Fail(a); first {
		t.Error("a fourth failure reported as the first to block")
	}
	if blocked, _ := th.Blocked(b); blocked {
		t.Error("another address is blocked")
	}
	now = now.Add(30 * time.Second)
	if blocked, _ := th.Blocked(a); blocked {
		t.Error("still blocked after its window")
	}
}

// A full table of live windows sends the addresses it cannot hold into
// one shared window, which refuses those that failed in it once spent,
// and holds no more than Entries.
func TestOverflow(t *testing.T) {
	now := time.Unix(1000, 0)
	th := newAt(&now)
	for i := range 4 {
		th.Fail(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 32))
	}
	for i := range 3 {
		th.Fail(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(i)}), 32))
	}
	if th.Len() != 4 {
		t.Errorf("%d addresses held, want 4", th.Len())
	}
	for i := range 3 {
		if blocked, _ := th.Blocked(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(i)}), 32)); !blocked {
			t.Errorf("10.0.1.%d failed in the shared window, spent, and is not blocked", i)
		}
	}
	if blocked, _ := th.Blocked(netip.MustParsePrefix("10.9.9.9/32")); blocked {
		t.Error("a new address is blocked by the others' failures")
	}
	if blocked, _ := th.Blocked(netip.MustParsePrefix("10.0.0.1/32")); blocked {
		t.Error("an address in the table with one failure is blocked")
	}
	now = now.Add(time.Minute)
	th.Fail(netip.MustParsePrefix("10.9.9.9/32"))
	if th.Len() > 4 {
		t.Errorf("%d addresses held after a sweep, want at most 4", th.Len())
	}
	if blocked, _ := th.Blocked(netip.MustParsePrefix("10.0.1.1/32")); blocked {
		t.Error("blocked after every window ended")
	}
}

// With the table full (Entries = 3) and the shared window spent, no
// address that never failed is blocked, the right token included; those
// that failed in the shared window are; the memory stays bounded.
func TestOverflowSparesInnocents(t *testing.T) {
	now := time.Unix(1000, 0)
	th := newAt(&now)
	th.Entries = 3
	addr := func(a, b byte) netip.Prefix { return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, a, b}), 32) }
	for i := range 3 {
		th.Fail(addr(0, byte(i)))
	}
	for i := range 10 { // the shared window is spent after 3; each address after still fails once
		th.Fail(addr(1, byte(i)))
	}
	if th.Len() != 3 || len(th.failed) != 1<<12 {
		t.Errorf("%d addresses held and %d words of bits, want 3 and %d", th.Len(), len(th.failed), 1<<12)
	}
	for i := range 256 {
		if blocked, _ := th.Blocked(addr(2, byte(i))); blocked {
			t.Errorf("10.1.2.%d never failed and is blocked", i)
		}
		v6 := netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, byte(i)}), 64)
		if blocked, _ := th.Blocked(v6); blocked {
			t.Errorf("%s never failed and is blocked", v6)
		}
	}
	for i := range 10 {
		if blocked, _ := th.Blocked(addr(1, byte(i))); !blocked {
			t.Errorf("10.1.1.%d failed in the spent shared window and is not blocked", i)
		}
	}
}

// Under a flood of addresses beyond the table, the share of innocent
// addresses blocked by chance stays near the package doc's bound (the
// addresses that failed over the bits).
func TestOverflowFalseBlocks(t *testing.T) {
	now := time.Unix(1000, 0)
	th := newAt(&now)
	th.Entries = 3
	addr := func(i int) netip.Prefix {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
	}
	const flood, innocents = 20000, 20000
	for i := range flood {
		th.Fail(addr(i))
	}
	blocked := 0
	for i := range innocents {
		if b, _ := th.Blocked(addr(flood + i)); b {
			blocked++
		}
	}
	bound := float64(flood) / float64(64*len(th.failed))
	t.Logf("%d of %d innocent addresses blocked (bound %.2f%%)", blocked, innocents, 100*bound)
	if got := float64(blocked) / innocents; got > 1.2*bound {
		t.Errorf("%.2f%% of innocent addresses blocked, want at most about %.2f%%", 100*got, 100*bound)
	}
}

func TestKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.1:5000":            "192.0.2.1/32",
		"[2001:db8:1:2:3::4]:5000":  "2001:db8:1:2::/64",
		"[::ffff:192.0.2.1]:80":     "192.0.2.1/32",
		"[2001:db8:1:2:ffff::]:443": "2001:db8:1:2::/64",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = addr
		if got := Key(r); got.String() != want {
			t.Errorf("%s: %s, want %s", addr, got, want)
		}
	}
}
