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
// one shared window, and holds no more than Entries.
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
	if blocked, _ := th.Blocked(netip.MustParsePrefix("10.9.9.9/32")); !blocked {
		t.Error("a new address is not blocked once the shared window has failed 3 times")
	}
	if blocked, _ := th.Blocked(netip.MustParsePrefix("10.0.0.1/32")); blocked {
		t.Error("an address in the table with one failure is blocked")
	}
	now = now.Add(time.Minute)
	th.Fail(netip.MustParsePrefix("10.9.9.9/32"))
	if th.Len() > 4 {
		t.Errorf("%d addresses held after a sweep, want at most 4", th.Len())
	}
	if blocked, _ := th.Blocked(netip.MustParsePrefix("10.8.8.8/32")); blocked {
		t.Error("blocked after every window ended")
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
