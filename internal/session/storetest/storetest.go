// Package storetest is the conformance suite of session.Store: what every
// store (bbolt, PostgreSQL) must do for session.Manager to be correct, one
// server or several. A store's tests call Run:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) session.Store { ... a new, empty store ... })
//	}
//
// Run the suite under -race: some subtests race writers on one session.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// Run runs the conformance suite against the stores that open makes: each
// call of open returns a new, empty store (closed by open's t.Cleanup, if
// it needs closing).
//
// The cases of an optional interface (NewerGetter, Importer, Checker,
// Snapshotter) run only for a store that implements it; for one that does
// not, Run says so in its log. They are left out rather than skipped: a
// store without an optional interface is complete, and a skipped test
// fails make test under CI.
func Run(t *testing.T, open func(t *testing.T) session.Store) {
	probe := open(t)
	implements := map[string]bool{}
	_, implements["NewerGetter"] = probe.(session.NewerGetter)
	_, implements["Importer"] = probe.(session.Importer)
	_, implements["Checker"] = probe.(session.Checker)
	_, implements["Snapshotter"] = probe.(session.Snapshotter)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, session.Store)
	}{
		{"CAS", testCAS},
		{"Copies", testCopies},
		{"MetaOnly", testMetaOnly},
		{"History", testHistory},
		{"Keys", testKeys},
		{"List", testList},
		{"Delete", testDelete},
		{"Version", testVersion},
		{"NewerGetter", testNewerGetter},
		{"OddIDs", testOddIDs},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentCreates", testConcurrentCreates},
		{"Leases", testLeases},
		{"LeaseExpiry", testLeaseExpiry},
		{"LeasesDroppedByPut", testLeasesDroppedByPut},
		{"StaleLeases", testStaleLeases},
		{"ConcurrentLeases", testConcurrentLeases},
		{"DeleteRacesLeases", testDeleteRacesLeases},
		{"Importer", testImporter},
		{"Checker", testChecker},
		{"Snapshotter", testSnapshotter},
	} {
		if ok, optional := implements[tc.name]; optional && !ok {
			t.Logf("%s: not run, the store is no session.%s (optional)", tc.name, tc.name)
			continue
		}
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var ctx = context.Background()

func rec(id string, version uint64, meta, state string) session.Record {
	r := session.Record{ID: id, Version: version, Meta: []byte(meta)}
	if state != "" {
		r.State = []byte(state)
	}
	return r
}

func put(t *testing.T, st session.Store, r session.Record, h *session.HistoryEntry) uint64 {
	t.Helper()
	v, err := st.Put(ctx, r, h)
	if err != nil {
		t.Fatalf("Put %s at version %d: %v", r.ID, r.Version, err)
	}
	if v != r.Version+1 {
		t.Fatalf("Put %s at version %d gave version %d, want %d", r.ID, r.Version, v, r.Version+1)
	}
	return v
}

func hist(g uint64, data string) *session.HistoryEntry {
	return &session.HistoryEntry{Generation: g, Data: []byte(data)}
}

// wantRecord checks the stored record of id.
func wantRecord(t *testing.T, st session.Store, id string, version uint64, meta, state string) {
	t.Helper()
	got, err := st.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	if got.ID != id || got.Version != version || string(got.Meta) != meta || string(got.State) != state {
		t.Fatalf("Get %s = {%s %d %q %q}, want {%s %d %q %q}", id, got.ID, got.Version, got.Meta, got.State, id, version, meta, state)
	}
}

// wantHistory checks all of id's history, as "g:data" strings.
func wantHistory(t *testing.T, st session.Store, id string, want ...string) {
	t.Helper()
	ents, err := st.History(ctx, id, 0, 0)
	if err != nil {
		t.Fatalf("History %s: %v", id, err)
	}
	got := []string{}
	for _, e := range ents {
		got = append(got, fmt.Sprintf("%d:%s", e.Generation, e.Data))
	}
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("History %s = %q, want %q", id, got, want)
	}
}

func testCAS(t *testing.T, st session.Store) {
	put(t, st, rec("a", 0, "m1", "s1"), nil)
	if _, err := st.Put(ctx, rec("a", 0, "m-dup", "s-dup"), nil); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("Put of a new record over a stored id: %v, want ErrVersion", err)
	}
	put(t, st, rec("a", 1, "m2", "s2"), nil)
	for _, stale := range []uint64{1, 3} {
		if _, err := st.Put(ctx, rec("a", stale, "m-stale", "s-stale"), hist(0, "h-stale")); !errors.Is(err, session.ErrVersion) {
			t.Fatalf("Put at version %d, stored 2: %v, want ErrVersion", stale, err)
		}
	}
	wantRecord(t, st, "a", 2, "m2", "s2")
	wantHistory(t, st, "a")
	if _, err := st.Put(ctx, rec("nobody", 4, "m", "s"), nil); !errors.Is(err, session.ErrVersion) && !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Put at version 4 of an unknown id: %v, want ErrVersion or ErrNoRecord", err)
	}
	if _, err := st.Get(ctx, "nobody"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Get of an unknown id: %v, want ErrNoRecord", err)
	}
}

// The store keeps no slice handed in, and hands out slices of the caller's.
func testCopies(t *testing.T, st session.Store) {
	r := rec("a", 0, "meta", "state")
	h := hist(0, "hist")
	put(t, st, r, h)
	r.Meta[0], r.State[0], h.Data[0] = 'X', 'X', 'X'
	wantRecord(t, st, "a", 1, "meta", "state")
	got, _ := st.Get(ctx, "a")
	got.Meta[0], got.State[0] = 'Y', 'Y'
	wantRecord(t, st, "a", 1, "meta", "state")
	ents, _ := st.History(ctx, "a", 0, 0)
	ents[0].Data[0] = 'Y'
	wantHistory(t, st, "a", "0:hist")
}

func testMetaOnly(t *testing.T, st session.Store) {
	if _, err := st.Put(ctx, rec("a", 0, "m", ""), nil); err == nil {
		t.Fatal("Put of a new record without a state succeeded")
	}
	put(t, st, rec("a", 0, "m1", "state-1"), nil)
	put(t, st, rec("a", 1, "m2", ""), nil)
	wantRecord(t, st, "a", 2, "m2", "state-1")
	put(t, st, rec("a", 2, "m3", ""), hist(0, "h0"))
	wantRecord(t, st, "a", 3, "m3", "state-1")
	wantHistory(t, st, "a", "0:h0")
	put(t, st, rec("a", 3, "m4", "state-2"), nil)
	wantRecord(t, st, "a", 4, "m4", "state-2")
}

func testHistory(t *testing.T, st session.Store) {
	put(t, st, rec("a", 0, "m", "s0"), nil)
	put(t, st, rec("b", 0, "m", "s0"), hist(0, "b0"))
	for g := range uint64(5) {
		put(t, st, rec("a", g+1, "m", fmt.Sprint("s", g+1)), hist(g, fmt.Sprint("a", g)))
	}
	// A failed Put writes no history.
	if _, err := st.Put(ctx, rec("a", 1, "m", "s"), hist(5, "lost")); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("stale Put: %v", err)
	}
	wantHistory(t, st, "a", "0:a0", "1:a1", "2:a2", "3:a3", "4:a4")
	wantHistory(t, st, "b", "0:b0")
	for _, tc := range []struct {
		from  uint64
		limit int
		want  []uint64
	}{
		{0, 2, []uint64{0, 1}},
		{2, 2, []uint64{2, 3}},
		{3, 0, []uint64{3, 4}},
		{4, -1, []uint64{4}},
		{5, 10, nil},
		{1 << 63, 0, nil},
	} {
		ents, err := st.History(ctx, "a", tc.from, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, e := range ents {
			got = append(got, e.Generation)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("History(a, %d, %d) = %v, want %v", tc.from, tc.limit, got, tc.want)
		}
	}
	if ents, err := st.History(ctx, "nobody", 0, 0); err != nil || len(ents) != 0 {
		t.Errorf("History of an unknown id: %d entries, %v; want none", len(ents), err)
	}
}

func testKeys(t *testing.T, st session.Store) {
	if _, _, err := st.Key(ctx, "k1"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Key of an unused key: %v, want ErrNoRecord", err)
	}
	r := rec("a", 0, "m", "s")
	r.Key, r.KeyData = "k1", []byte("request-hash")
	put(t, st, r, hist(0, "h"))
	id, data, err := st.Key(ctx, "k1")
	if err != nil || id != "a" || string(data) != "request-hash" {
		t.Fatalf("Key(k1) = %q %q %v, want a request-hash", id, data, err)
	}
	r2 := rec("b", 0, "m", "s")
	r2.Key, r2.KeyData = "k1", []byte("other")
	if _, err := st.Put(ctx, r2, hist(0, "hb")); !errors.Is(err, session.ErrKeyTaken) {
		t.Fatalf("a second record with key k1: %v, want ErrKeyTaken", err)
	}
	if _, err := st.Get(ctx, "b"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("the record refused for its key was written: %v", err)
	}
	wantHistory(t, st, "b")
	// Writes of a stored record ignore Key; Get leaves it empty.
	r3 := rec("a", 1, "m2", "s2")
	r3.Key, r3.KeyData = "k2", []byte("x")
	put(t, st, r3, nil)
	if _, _, err := st.Key(ctx, "k2"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("a write of a stored record took key k2: %v", err)
	}
	if got, _ := st.Get(ctx, "a"); got.Key != "" || got.KeyData != nil {
		t.Fatalf("Get gave key %q %q, want none", got.Key, got.KeyData)
	}
	// Delete frees the key.
	if err := st.Delete(ctx, "a", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Key(ctx, "k1"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Key after Delete: %v, want ErrNoRecord", err)
	}
	put(t, st, r2, nil)
	if id, data, err := st.Key(ctx, "k1"); err != nil || id != "b" || string(data) != "other" {
		t.Fatalf("Key(k1) after it was taken again = %q %q %v", id, data, err)
	}
}

func testList(t *testing.T, st session.Store) {
	// Byte order: upper case before lower case, digits first, é and then
	// bytes that are no UTF-8 last; NUL first. Ids are bytes to a store.
	ids := []string{"b", "A", "a", "0f", "B", "é", "ab", "a-", "a\x00b", "\xff\xfe", "\x00"}
	for _, id := range ids {
		put(t, st, rec(id, 0, "meta-"+id, "state-"+id), nil)
	}
	put(t, st, rec("a", 1, "meta-a2", ""), nil)
	want := slices.Clone(ids)
	slices.Sort(want)
	var got []string
	for after := ""; ; {
		recs, err := st.List(ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) > 3 {
			t.Fatalf("List with limit 3 gave %d", len(recs))
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			wantMeta, wantV := "meta-"+r.ID, uint64(1)
			if r.ID == "a" {
				wantMeta, wantV = "meta-a2", 2
			}
			if string(r.Meta) != wantMeta || r.Version != wantV || r.State != nil {
				t.Errorf("List gave %s {%d %q %q}, want {%d %q no state}", r.ID, r.Version, r.Meta, r.State, wantV, wantMeta)
			}
			got = append(got, r.ID)
		}
		after = recs[len(recs)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List order %q, want %q", got, want)
	}
	if recs, err := st.List(ctx, "b", 10); err != nil || len(recs) != 2 || recs[0].ID != "é" {
		t.Fatalf("List after b: %v %v, want é and \\xff\\xfe", recs, err)
	}
}

func testDelete(t *testing.T, st session.Store) {
	r := rec("a", 0, "m", "s")
	r.Key, r.KeyData = "k", []byte("d")
	put(t, st, r, hist(0, "h0"))
	put(t, st, rec("a", 1, "m", "s"), hist(1, "h1"))
	put(t, st, rec("b", 0, "m", "s"), hist(0, "b0"))
	if err := st.UpdateLeases(ctx, "a", 2, func(now time.Time, _ []session.Lease) ([]session.Lease, error) {
		return []session.Lease{{Index: 0, Worker: "w", Expires: now.Add(time.Hour)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "a", 1); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("Delete at a stale version: %v, want ErrVersion", err)
	}
	if err := st.Delete(ctx, "nobody", 1); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Delete of an unknown id: %v, want ErrNoRecord", err)
	}
	wantRecord(t, st, "a", 2, "m", "s")
	if err := st.Delete(ctx, "a", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "a"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := st.Delete(ctx, "a", 2); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Delete again: %v, want ErrNoRecord", err)
	}
	wantHistory(t, st, "a")
	wantHistory(t, st, "b", "0:b0")
	if _, _, err := st.Key(ctx, "k"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Key after Delete: %v", err)
	}
	if _, _, err := st.Leases(ctx, "a", 2); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Leases after Delete: %v, want ErrNoRecord", err)
	}
	// The id made again starts with nothing of the deleted one.
	put(t, st, rec("a", 0, "m-new", "s-new"), nil)
	wantHistory(t, st, "a")
	if ls, _, err := st.Leases(ctx, "a", 2); err != nil || len(ls) != 0 {
		t.Fatalf("Leases of the id made again: %v %v, want none", ls, err)
	}
}

func testVersion(t *testing.T, st session.Store) {
	if _, err := st.Version(ctx, "a"); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Version of an unknown id: %v", err)
	}
	put(t, st, rec("a", 0, "m", "s"), nil)
	put(t, st, rec("a", 1, "m", ""), nil)
	if v, err := st.Version(ctx, "a"); err != nil || v != 2 {
		t.Fatalf("Version = %d %v, want 2", v, err)
	}
}

// GetNewer reads nothing but the version while it is the one given, and
// the whole record once it is not.
func testNewerGetter(t *testing.T, st session.Store) {
	ng, ok := st.(session.NewerGetter)
	if !ok {
		t.Fatal("the store is no session.NewerGetter")
	}
	if _, err := ng.GetNewer(ctx, "a", 1); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("GetNewer of an unknown id: %v", err)
	}
	put(t, st, rec("a", 0, "m1", "s1"), nil)
	r, err := ng.GetNewer(ctx, "a", 1)
	if err != nil || r.ID != "a" || r.Version != 1 || r.Meta != nil || r.State != nil {
		t.Fatalf("GetNewer at the stored version: %+v %v, want the version alone", r, err)
	}
	put(t, st, rec("a", 1, "m2", "s2"), nil)
	for _, cached := range []uint64{1, 0, 7} {
		r, err := ng.GetNewer(ctx, "a", cached)
		if err != nil || r.Version != 2 || string(r.Meta) != "m2" || string(r.State) != "s2" {
			t.Fatalf("GetNewer with version %d cached: %+v %v, want version 2, m2, s2", cached, r, err)
		}
	}
}

// Ids and keys are any bytes (a server looks up what a URL names): an
// unknown one is no record, never another error.
func testOddIDs(t *testing.T, st session.Store) {
	for _, id := range []string{"\xff\xfe", "a\x00b", "\x00"} {
		if _, err := st.Get(ctx, id); !errors.Is(err, session.ErrNoRecord) {
			t.Errorf("Get(%q): %v, want ErrNoRecord", id, err)
		}
		if _, err := st.Version(ctx, id); !errors.Is(err, session.ErrNoRecord) {
			t.Errorf("Version(%q): %v, want ErrNoRecord", id, err)
		}
		if err := st.Delete(ctx, id, 1); !errors.Is(err, session.ErrNoRecord) {
			t.Errorf("Delete(%q): %v, want ErrNoRecord", id, err)
		}
		if ents, err := st.History(ctx, id, 0, 0); err != nil || len(ents) != 0 {
			t.Errorf("History(%q): %v %v, want none", id, ents, err)
		}
		if _, _, err := st.Leases(ctx, id, 0); !errors.Is(err, session.ErrNoRecord) {
			t.Errorf("Leases(%q): %v, want ErrNoRecord", id, err)
		}
		if _, _, err := st.Key(ctx, id); !errors.Is(err, session.ErrNoRecord) {
			t.Errorf("Key(%q): %v, want ErrNoRecord", id, err)
		}
		if recs, err := st.List(ctx, id, 10); err != nil || len(recs) != 0 {
			t.Errorf("List after %q: %v %v, want none", id, recs, err)
		}
	}
	r := rec("\xff\x00", 0, "m", "s")
	r.Key = "k\xff"
	put(t, st, r, hist(0, "h"))
	wantRecord(t, st, "\xff\x00", 1, "m", "s")
	if id, _, err := st.Key(ctx, "k\xff"); err != nil || id != "\xff\x00" {
		t.Fatalf("Key: %q %v", id, err)
	}
}

// N writers Put the same version of one session at once: exactly one wins,
// and the record and history are the winner's.
func testConcurrentWriters(t *testing.T, st session.Store) {
	const writers, rounds = 8, 10
	put(t, st, rec("a", 0, "m", "s"), nil)
	for round := range uint64(rounds) {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Go(func() {
				_, errs[w] = st.Put(ctx, rec("a", round+1, fmt.Sprint("m", round, w), fmt.Sprint("s", round, w)), hist(round, fmt.Sprint(w)))
			})
		}
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, session.ErrVersion):
				t.Fatalf("round %d: writer %d: %v, want ErrVersion", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		wantRecord(t, st, "a", round+2, fmt.Sprint("m", round, winner), fmt.Sprint("s", round, winner))
		ents, err := st.History(ctx, "a", round, 0)
		if err != nil || len(ents) != 1 || string(ents[0].Data) != fmt.Sprint(winner) {
			t.Fatalf("round %d: history %v %v, want the winner %d's", round, ents, err, winner)
		}
	}
}

// N creates of different ids with one idempotency key: one wins.
func testConcurrentCreates(t *testing.T, st session.Store) {
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			r := rec(fmt.Sprint("id", w), 0, "m", "s")
			r.Key, r.KeyData = "k", []byte(fmt.Sprint(w))
			_, errs[w] = st.Put(ctx, r, hist(0, "h"))
		})
	}
	wg.Wait()
	won := 0
	for w, err := range errs {
		if err == nil {
			won++
			if id, data, err := st.Key(ctx, "k"); err != nil || id != fmt.Sprint("id", w) || string(data) != fmt.Sprint(w) {
				t.Errorf("Key(k) = %s %q %v, want the winner id%d", id, data, err, w)
			}
		} else if !errors.Is(err, session.ErrKeyTaken) {
			t.Errorf("create %d: %v, want ErrKeyTaken", w, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d creates with one key won, want 1", won)
	}
	if recs, _ := st.List(ctx, "", 100); len(recs) != 1 {
		t.Fatalf("%d records stored, want 1", len(recs))
	}
}

// sameLeases compares lease sets in any order; times to the microsecond
// (PostgreSQL's precision).
func sameLeases(got, want []session.Lease) bool {
	if len(got) != len(want) {
		return false
	}
	key := func(a, b session.Lease) int { return a.Index - b.Index }
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, key)
	slices.SortFunc(want, key)
	for i := range got {
		if got[i].Index != want[i].Index || got[i].Worker != want[i].Worker || got[i].Expires.Sub(want[i].Expires).Abs() >= time.Microsecond {
			return false
		}
	}
	return true
}

func testLeases(t *testing.T, st session.Store) {
	errFn := errors.New("fn says no")
	if err := st.UpdateLeases(ctx, "a", 0, func(time.Time, []session.Lease) ([]session.Lease, error) { return nil, nil }); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("UpdateLeases of an unknown id: %v, want ErrNoRecord", err)
	}
	if _, _, err := st.Leases(ctx, "a", 0); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Leases of an unknown id: %v, want ErrNoRecord", err)
	}
	put(t, st, rec("a", 0, "m", "s"), nil)
	put(t, st, rec("b", 0, "m", "s"), nil)
	var set []session.Lease
	before := time.Now()
	if err := st.UpdateLeases(ctx, "a", 3, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
		if len(cur) != 0 {
			t.Errorf("the first UpdateLeases saw %v", cur)
		}
		set = []session.Lease{
			{Index: 0, Worker: "w0", Expires: now.Add(time.Hour)},
			{Index: 2, Worker: "", Expires: now.Add(time.Minute)},
			{Index: 1, Worker: "gone", Expires: now.Add(-time.Second)}, // expired already
		}
		return set, nil
	}); err != nil {
		t.Fatal(err)
	}
	live := set[:2]
	ls, now, err := st.Leases(ctx, "a", 3)
	if err != nil || !sameLeases(ls, live) {
		t.Fatalf("Leases(a, 3) = %v %v, want %v", ls, err, live)
	}
	if d := now.Sub(before); d < -time.Minute || d > time.Minute {
		t.Errorf("the store's clock says %v, the test's %v", now, before)
	}
	for _, tc := range []struct {
		id string
		g  uint64
	}{{"a", 2}, {"a", 4}, {"b", 3}} {
		if ls, _, err := st.Leases(ctx, tc.id, tc.g); err != nil || len(ls) != 0 {
			t.Errorf("Leases(%s, %d) = %v %v, want none", tc.id, tc.g, ls, err)
		}
	}
	// fn sees the unexpired leases of g only; its error aborts, as is.
	if err := st.UpdateLeases(ctx, "a", 3, func(_ time.Time, cur []session.Lease) ([]session.Lease, error) {
		if !sameLeases(cur, live) {
			t.Errorf("fn saw %v, want %v", cur, live)
		}
		return nil, errFn
	}); err != errFn {
		t.Fatalf("UpdateLeases whose fn failed: %v, want fn's error as is", err)
	}
	if ls, _, _ := st.Leases(ctx, "a", 3); !sameLeases(ls, live) {
		t.Fatalf("the aborted UpdateLeases changed the leases: %v", ls)
	}
	// The set fn returns replaces g's.
	if err := st.UpdateLeases(ctx, "a", 3, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
		set = []session.Lease{{Index: 5, Worker: "w5", Expires: now.Add(time.Hour)}}
		return set, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ls, _, _ := st.Leases(ctx, "a", 3); !sameLeases(ls, set) {
		t.Fatalf("Leases after the set was replaced: %v, want %v", ls, set)
	}
	// Leases of another generation are dropped.
	if err := st.UpdateLeases(ctx, "a", 4, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
		if len(cur) != 0 {
			t.Errorf("fn of generation 4 saw %v", cur)
		}
		return []session.Lease{{Index: 1, Worker: "x", Expires: now.Add(time.Hour)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ls, _, _ := st.Leases(ctx, "a", 3); len(ls) != 0 {
		t.Fatalf("generation 3's leases after an UpdateLeases of 4: %v", ls)
	}
	if ls, _, _ := st.Leases(ctx, "a", 4); len(ls) != 1 {
		t.Fatalf("generation 4's leases: %v", ls)
	}
	// Writes of the record keep the leases; b has none of a's.
	put(t, st, rec("a", 1, "m2", ""), nil)
	put(t, st, rec("a", 2, "m3", "s3"), nil)
	if ls, _, _ := st.Leases(ctx, "a", 4); len(ls) != 1 {
		t.Fatalf("leases after writes without history: %v, want 1", ls)
	}
	if ls, _, _ := st.Leases(ctx, "b", 4); len(ls) != 0 {
		t.Fatalf("b's leases: %v", ls)
	}
}

func testLeaseExpiry(t *testing.T, st session.Store) {
	put(t, st, rec("a", 0, "m", "s"), nil)
	var until time.Time
	if err := st.UpdateLeases(ctx, "a", 0, func(now time.Time, _ []session.Lease) ([]session.Lease, error) {
		until = now.Add(300 * time.Millisecond)
		return []session.Lease{{Index: 0, Expires: until}, {Index: 1, Expires: now.Add(time.Hour)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for {
		ls, now, err := st.Leases(ctx, "a", 0)
		if err != nil {
			t.Fatal(err)
		}
		if now.Before(until) {
			if len(ls) != 2 {
				t.Fatalf("at %v, before %v: %d leases, want 2", now, until, len(ls))
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if len(ls) != 1 || ls[0].Index != 1 {
			t.Fatalf("at %v, after %v: leases %v, want the one of candidate 1", now, until, ls)
		}
		break
	}
	if err := st.UpdateLeases(ctx, "a", 0, func(_ time.Time, cur []session.Lease) ([]session.Lease, error) {
		if len(cur) != 1 || cur[0].Index != 1 {
			t.Errorf("fn saw %v, want the unexpired lease of candidate 1", cur)
		}
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// An UpdateLeases of a generation below the one whose leases are stored
// (a server that found g pending before another told it) writes nothing:
// it fails with ErrVersion and g+1's leases stay.
func testStaleLeases(t *testing.T, st session.Store) {
	put(t, st, rec("a", 0, "m", "s"), nil)
	var set []session.Lease
	if err := st.UpdateLeases(ctx, "a", 1, func(now time.Time, _ []session.Lease) ([]session.Lease, error) {
		set = []session.Lease{{Index: 0, Worker: "w0", Expires: now.Add(time.Hour)}, {Index: 2, Worker: "w2", Expires: now.Add(time.Minute)}}
		return set, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateLeases(ctx, "a", 0, func(now time.Time, _ []session.Lease) ([]session.Lease, error) {
		return []session.Lease{{Index: 1, Worker: "stale", Expires: now.Add(time.Hour)}}, nil
	}); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("UpdateLeases(0) over generation 1's leases: %v, want ErrVersion", err)
	}
	if ls, _, err := st.Leases(ctx, "a", 1); err != nil || !sameLeases(ls, set) {
		t.Fatalf("Leases(a, 1) after a stale UpdateLeases = %v %v, want %v", ls, err, set)
	}
	if ls, _, err := st.Leases(ctx, "a", 0); err != nil || len(ls) != 0 {
		t.Fatalf("Leases(a, 0) after a stale UpdateLeases = %v %v, want none", ls, err)
	}
}

// A Put with the history entry of generation g drops the leases of g and
// earlier generations, not of later ones.
func testLeasesDroppedByPut(t *testing.T, st session.Store) {
	put(t, st, rec("a", 0, "m", "s"), nil)
	lease := func(g uint64) {
		t.Helper()
		if err := st.UpdateLeases(ctx, "a", g, func(now time.Time, _ []session.Lease) ([]session.Lease, error) {
			return []session.Lease{{Index: 0, Worker: "w", Expires: now.Add(time.Hour)}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(g uint64) int {
		t.Helper()
		ls, _, err := st.Leases(ctx, "a", g)
		if err != nil {
			t.Fatal(err)
		}
		return len(ls)
	}
	lease(1)
	put(t, st, rec("a", 1, "m", "s"), hist(0, "h0"))
	if n := count(1); n != 1 {
		t.Fatalf("leases of generation 1 after the tell of 0: %d, want 1", n)
	}
	put(t, st, rec("a", 2, "m", ""), hist(1, "h1")) // a meta-only Put too
	if n := count(1); n != 0 {
		t.Fatalf("leases of generation 1 after its tell: %d, want 0", n)
	}
	lease(2)
	put(t, st, rec("a", 3, "m", "s"), hist(2, "h2"))
	if n := count(2); n != 0 {
		t.Fatalf("leases of generation 2 after its tell: %d, want 0", n)
	}
	// A failed Put drops nothing.
	lease(3)
	if _, err := st.Put(ctx, rec("a", 1, "m", "s"), hist(3, "h3")); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("stale Put: %v", err)
	}
	if n := count(3); n != 1 {
		t.Fatalf("leases after a failed Put: %d, want 1", n)
	}
}

// N UpdateLeases of one session at once, each adding a lease: they
// serialize, so all N are there at the end.
func testConcurrentLeases(t *testing.T, st session.Store) {
	const workers = 16
	put(t, st, rec("a", 0, "m", "s"), nil)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			err := st.UpdateLeases(ctx, "a", 7, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
				return append(slices.Clone(cur), session.Lease{Index: w, Worker: fmt.Sprint("w", w), Expires: now.Add(time.Hour)}), nil
			})
			if err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	ls, _, err := st.Leases(ctx, "a", 7)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, l := range ls {
		if seen[l.Index] || l.Worker != fmt.Sprint("w", l.Index) {
			t.Fatalf("leases %v", ls)
		}
		seen[l.Index] = true
	}
	if len(ls) != workers {
		t.Fatalf("%d leases after %d concurrent UpdateLeases adding one each: %v", len(ls), workers, ls)
	}
}

func testImporter(t *testing.T, st session.Store) {
	im, ok := st.(session.Importer)
	if !ok {
		t.Fatal("the store is no session.Importer")
	}
	r := session.Record{ID: "a", Version: 7, Meta: []byte("meta"), State: bytes.Repeat([]byte{0xff, 0}, 50000), Key: "k", KeyData: []byte("kd")}
	h := []session.HistoryEntry{{Generation: 0, Data: []byte("h0")}, {Generation: 1, Data: []byte("h1")}}
	if err := im.Import(ctx, r, h); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "a")
	if err != nil || !bytes.Equal(got.Meta, r.Meta) || !bytes.Equal(got.State, r.State) {
		t.Fatalf("Get of the imported record: %v, differs", err)
	}
	wantHistory(t, st, "a", "0:h0", "1:h1")
	if id, data, err := st.Key(ctx, "k"); err != nil || id != "a" || string(data) != "kd" {
		t.Fatalf("Key of the imported record: %s %q %v", id, data, err)
	}
	// It continues: a Put at its stored version.
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: got.Version, Meta: []byte("m2")}, hist(2, "h2")); err != nil {
		t.Fatalf("Put after Import: %v", err)
	}
	wantHistory(t, st, "a", "0:h0", "1:h1", "2:h2")
	if err := im.Import(ctx, r, h); !errors.Is(err, session.ErrVersion) {
		t.Fatalf("Import of a stored id: %v, want ErrVersion", err)
	}
}

func testChecker(t *testing.T, st session.Store) {
	c, ok := st.(session.Checker)
	if !ok {
		t.Fatal("the store is no session.Checker")
	}
	r := rec("a", 0, "m", "s")
	r.Key = "k"
	put(t, st, r, hist(0, "h"))
	if err := st.UpdateLeases(ctx, "a", 1, func(now time.Time, _ []session.Lease) ([]session.Lease, error) {
		return []session.Lease{{Index: 0, Expires: now.Add(time.Hour)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	put(t, st, rec("b", 0, "m", "s"), nil)
	if err := st.Delete(ctx, "b", 1); err != nil {
		t.Fatal(err)
	}
	if probs := c.Check(ctx); len(probs) != 0 {
		t.Fatalf("Check of a sound store: %v", probs)
	}
}

func testSnapshotter(t *testing.T, st session.Store) {
	sn, ok := st.(session.Snapshotter)
	if !ok {
		t.Fatal("the store is no session.Snapshotter")
	}
	put(t, st, rec("a", 0, "m", "s"), nil)
	rc, n, err := sn.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil || int64(len(b)) != n || n == 0 {
		t.Fatalf("Snapshot: %d bytes read of %d, %v", len(b), n, err)
	}
}
