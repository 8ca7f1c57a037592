package session_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// clock is a settable clock, for the store (which times the leases) and
// the Manager.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// openStoreClock opens the store at path timed by clk.
func openStoreClock(t *testing.T, path string, clk *clock) *bolt.Store {
	t.Helper()
	st, err := bolt.Open(path, &bolt.Options{NoSync: true, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// claimSession returns a Manager on a store of its own with a settable
// clock, and a 2-D CMA-ES session of population size lambda in it.
func claimSession(t *testing.T, lambda int, sd uint64) (*session.Manager, *bolt.Store, session.Session, *clock) {
	t.Helper()
	clk := &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	_, path := newManager(t)
	st := openStoreClock(t, path+"2", clk)
	t.Cleanup(func() { st.Close() })
	m := session.NewManager(st, session.Options{Now: clk.Now})
	s, err := m.Create(context.Background(), session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: lambda, Seed: seed(sd)})
	if err != nil {
		t.Fatal(err)
	}
	return m, st, s, clk
}

// TestClaims: claims hand out each candidate without a value once while its
// lease runs, again when the lease has run out, none when all are leased
// (with the first expiry), and start over with the next generation; the
// leases and the values survive a restart.
func TestClaims(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	_, path := newManager(t)
	st := openStoreClock(t, path+"2", clk)
	m := session.NewManager(st, session.Options{Now: clk.Now})
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(9)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	claim := func(lease time.Duration) session.Claim {
		t.Helper()
		c, err := m.Claim(ctx, s.ID, lease, "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i := range 3 {
		c := claim(time.Duration(i+1) * time.Minute)
		if c.Generation != 0 || c.Index != i || !reflect.DeepEqual(c.X, b.Candidates[i]) || !c.Expires.Equal(clk.Now().Add(time.Duration(i+1)*time.Minute)) {
			t.Fatalf("claim %d: %+v", i, c)
		}
	}
	// Candidate 1's value arrives; 3 is claimed; none is left.
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{1}, Fitness: []float64{sphere(b.Candidates[1])}}); err != nil {
		t.Fatal(err)
	}
	if c := claim(time.Hour); c.Index != 3 || !c.Expires.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("the fourth claim: %+v", c)
	}
	if c := claim(0); c.Index != -1 || c.X != nil || !c.Expires.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("with every candidate leased or told: %+v", c)
	}
	// Candidate 0's lease (1 minute) runs out: it is handed out again; 1 has
	// its value and never is.
	clk.advance(90 * time.Second)
	if c := claim(time.Hour); c.Index != 0 || !reflect.DeepEqual(c.X, b.Candidates[0]) {
		t.Fatalf("after the first lease ran out: %+v", c)
	}
	if c := claim(0); c.Index != -1 || !c.Expires.Equal(clk.Now().Add(90*time.Second)) {
		t.Fatalf("then: %+v, want candidate 2's lease to run out first", c)
	}

	// A restart keeps the leases and candidate 1's value: nothing is free
	// until the leases run out (3's, an hour, last).
	st.Close()
	st = openStoreClock(t, path+"2", clk)
	defer st.Close()
	m = session.NewManager(st, session.Options{Now: clk.Now})
	if c := claim(0); c.Index != -1 || !c.Expires.Equal(clk.Now().Add(90*time.Second)) {
		t.Fatalf("after a restart: %+v, want none free until candidate 2's lease runs out", c)
	}
	clk.advance(time.Hour + 2*time.Minute)
	var got []int
	for c := claim(0); c.Index >= 0; c = claim(0) {
		got = append(got, c.Index)
	}
	if !reflect.DeepEqual(got, []int{0, 2, 3}) {
		t.Fatalf("after a restart and the leases' end the claims are %v, want 0, 2, 3", got)
	}
	// The generation completes: its successor's candidates are claimed.
	f := fitness(b)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{3, 0, 2}, Fitness: []float64{f[3], f[0], f[2]}}); err != nil {
		t.Fatal(err)
	}
	b1, _ := m.Ask(ctx, s.ID)
	if c := claim(0); c.Generation != 1 || c.Index != 0 || !reflect.DeepEqual(c.X, b1.Candidates[0]) {
		t.Fatalf("the first claim of generation 1: %+v", c)
	}

	for _, lease := range []time.Duration{time.Millisecond, -time.Second, session.MaxLease + time.Second} {
		_, err := m.Claim(ctx, s.ID, lease, "")
		wantCode(t, err, session.CodeOutOfRange)
	}
	_, err = m.Claim(ctx, "nope", 0, "")
	wantCode(t, err, session.CodeNotFound)
	if _, err := m.Stop(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = m.Claim(ctx, s.ID, 0, "")
	wantCode(t, err, session.CodeStopped)
}

// TestClaimsOutliveEviction: a session with a running lease stays in the
// Manager's cache however many other sessions pass through it.
func TestClaimsOutliveEviction(t *testing.T) {
	ctx := context.Background()
	_, path := newManager(t)
	st := openStore(t, path+"2")
	defer st.Close()
	m := session.NewManager(st, session.Options{CacheCap: 2})
	p := session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, Seed: seed(1)}
	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := m.Claim(ctx, s.ID, 0, ""); err != nil || c.Index != 0 {
		t.Fatalf("first claim: %+v, %v", c, err)
	}
	for range 8 {
		if _, err := m.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := m.Claim(ctx, s.ID, 0, ""); err != nil || c.Index != 1 {
		t.Fatalf("after eight other sessions: claimed %+v, %v; want candidate 1", c, err)
	}
}

// TestClaimsByWorker: a worker that names itself gets its running lease
// again (a claim sent again after a lost answer leases nothing more), and a
// new one once its candidate has a value or its lease has run out.
func TestClaimsByWorker(t *testing.T) {
	ctx := context.Background()
	m, _, s, clk := claimSession(t, 5, 2)
	claim := func(worker string, lease time.Duration) session.Claim {
		t.Helper()
		c, err := m.Claim(ctx, s.ID, lease, worker)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := claim("node-a", time.Minute)
	clk.advance(time.Second)
	if again := claim("node-a", time.Second); !reflect.DeepEqual(again, a) {
		t.Fatalf("node-a again: %+v, want its lease %+v", again, a)
	}
	a.Expires = clk.Now().Add(time.Hour)
	if renewed := claim("node-a", time.Hour); !reflect.DeepEqual(renewed, a) {
		t.Fatalf("node-a renewing: %+v, want %+v", renewed, a)
	}
	if b := claim("node-b", time.Minute); b.Index != a.Index+1 {
		t.Fatalf("node-b: %+v", b)
	}
	if anon := claim("", time.Minute); anon.Index != a.Index+2 {
		t.Fatalf("anonymous: %+v", anon)
	}
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{a.Index}, Fitness: []float64{sphere(a.X)}}); err != nil {
		t.Fatal(err)
	}
	if next := claim("node-a", time.Minute); next.Index != a.Index+3 {
		t.Fatalf("node-a after its value: %+v", next)
	}
	clk.advance(2 * time.Minute) // every lease runs out
	if c := claim("node-b", time.Minute); c.Index != 1 {
		t.Fatalf("node-b after the leases ran out: %+v, want the first candidate without a value", c)
	}
	for _, bad := range []string{"a b", "é", string(make([]byte, session.MaxWorkerID+1))} {
		_, err := m.Claim(ctx, s.ID, 0, bad)
		wantCode(t, err, session.CodeInvalid)
	}
}

// TestRenew: a restart keeps the leases (a Manager anew sees them); once
// they have run out, workers renewing by candidate take their own
// candidates again, so a claim hands out neither. Renew is a conflict for
// another generation, a candidate with a value or one leased to another
// worker, keeps one lease per worker, and extends a lease.
func TestRenew(t *testing.T) {
	ctx := context.Background()
	m, st, s, clk := claimSession(t, 5, 9)
	claim := func(m *session.Manager, worker string) int {
		t.Helper()
		c, err := m.Claim(ctx, s.ID, time.Hour, worker)
		if err != nil {
			t.Fatal(err)
		}
		return c.Index
	}
	if claim(m, "w0") != 0 || claim(m, "w1") != 1 {
		t.Fatal("the first claims")
	}

	// The restart: a Manager anew on the same store sees w1's lease.
	m = session.NewManager(st, session.Options{Now: clk.Now})
	if i := claim(m, "w1"); i != 1 {
		t.Fatalf("w1's claim after a restart leased candidate %d, want its own, 1", i)
	}
	// The leases run out (or were lost): the workers renew by candidate.
	clk.advance(2 * time.Hour)
	b, _ := m.Ask(ctx, s.ID)
	for w, i := range []int{0, 1} {
		c, err := m.Renew(ctx, s.ID, 0, i, time.Hour, []string{"w0", "w1"}[w])
		if err != nil || c.Index != i || c.Generation != 0 || !reflect.DeepEqual(c.X, b.Candidates[i]) || !c.Expires.Equal(clk.Now().Add(time.Hour)) {
			t.Fatalf("Renew of %d: %+v, %v", i, c, err)
		}
	}
	if i := claim(m, ""); i != 2 {
		t.Errorf("a claim after the renewals: candidate %d, want 2", i)
	}

	// A longer lease renews; a shorter one leaves the end as it is.
	clk.advance(time.Minute)
	if c, _ := m.Renew(ctx, s.ID, 0, 0, 2*time.Hour, "w0"); !c.Expires.Equal(clk.Now().Add(2 * time.Hour)) {
		t.Errorf("renewed to %v", c.Expires)
	}
	if c, _ := m.Renew(ctx, s.ID, 0, 0, time.Second, "w0"); !c.Expires.Equal(clk.Now().Add(2 * time.Hour)) {
		t.Errorf("a shorter lease moved the end to %v", c.Expires)
	}

	// One lease per worker: w0 renewing candidate 3 gives up 0.
	if c, err := m.Renew(ctx, s.ID, 0, 3, time.Hour, "w0"); err != nil || c.Index != 3 {
		t.Fatalf("Renew of 3 by w0: %+v, %v", c, err)
	}
	if i := claim(m, "w2"); i != 0 {
		t.Errorf("w0's first candidate is not free again: a claim got %d", i)
	}

	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{1}, Fitness: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		g, i   int
		worker string
		code   session.Code
	}{
		{0, 1, "w1", session.CodeConflict},    // has its value
		{0, 2, "w1", session.CodeConflict},    // leased (anonymously)
		{0, 0, "w1", session.CodeConflict},    // leased to w2
		{1, 4, "w1", session.CodeConflict},    // not the pending generation
		{0, 5, "w1", session.CodeOutOfRange},  // no such candidate
		{0, -1, "w1", session.CodeOutOfRange}, // no such candidate
		{0, 4, "", session.CodeInvalid},       // no worker
		{0, 4, "w 1", session.CodeInvalid},    // not a token
	} {
		_, err := m.Renew(ctx, s.ID, tc.g, tc.i, time.Hour, tc.worker)
		wantCode(t, err, tc.code)
	}

	// The conflicts carry the pending generation (the 409's "generation").
	f := fitness(b)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{0, 2, 3, 4}, Fitness: []float64{f[0], f[2], f[3], f[4]}}); err != nil {
		t.Fatal(err)
	}
	if i := claim(m, "w3"); i != 0 {
		t.Fatalf("w3's claim in generation 1: candidate %d, want 0", i)
	}
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 1, Indices: []int{1}, Fitness: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ g, i int }{
		{0, 0}, // not the pending generation
		{1, 1}, // has its value
		{1, 0}, // leased to w3
	} {
		_, err := m.Renew(ctx, s.ID, tc.g, tc.i, time.Hour, "w4")
		var se *session.Error
		if !errors.As(err, &se) || se.Code != session.CodeConflict || se.Generation != 1 {
			t.Errorf("Renew(%d, %d) by w4: %v (%+v), want a conflict naming generation 1", tc.g, tc.i, err, se)
		}
	}
}

// TestClaimsUnchangedNoCommit: claims and renewals write nothing to the
// bbolt file (no commit, no sync of the disk): it holds the leases in
// memory while open (a lost lease costs an evaluation twice, never a
// value), and writes them back when it closes.
func TestClaimsUnchangedNoCommit(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	_, path := newManager(t)
	var commits atomic.Int64
	st, err := bolt.Open(path+"2", &bolt.Options{NoSync: true, Now: clk.Now, OnCommit: func(int, time.Duration) { commits.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := session.NewManager(st, session.Options{Now: clk.Now})
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(9)})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []string{"w0", "w1", "", "w3"} {
		before := commits.Load()
		if c, err := m.Claim(ctx, s.ID, time.Hour, w); err != nil || c.Index != i {
			t.Fatalf("claim %d: %+v, %v", i, c, err)
		}
		if n := commits.Load() - before; n != 0 {
			t.Fatalf("claim %d leased a candidate in %d commits, want none", i, n)
		}
	}
	before := commits.Load()
	for range 10 {
		for _, w := range []string{"", "w9", "w0"} { // none free; w0's lease as it is (the clock stands)
			c, err := m.Claim(ctx, s.ID, time.Hour, w)
			if err != nil || (w == "w0") != (c.Index == 0) || (w != "w0" && c.Index != -1) {
				t.Fatalf("claim by %q with none free: %+v, %v", w, c, err)
			}
		}
		if _, err := m.Renew(ctx, s.ID, 0, 1, time.Minute, "w1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := commits.Load() - before; n != 0 {
		t.Fatalf("40 claims and renewals that changed no lease made %d commits, want 0", n)
	}
	clk.advance(time.Minute)
	if c, err := m.Claim(ctx, s.ID, time.Hour, "w0"); err != nil || c.Index != 0 || !c.Expires.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("w0's renewing claim a minute later: %+v, %v", c, err)
	}
	if n := commits.Load() - before; n != 0 {
		t.Fatalf("a renewal that moved an expiry made %d commits, want none", n)
	}
}

// TestRelease: a released lease frees its candidate at once; a release of
// a lease not held (another worker's, run out, released already, of a
// generation told) answers false and changes nothing; Leases shows the
// leases held and the candidates free.
func TestRelease(t *testing.T) {
	ctx := context.Background()
	m, _, s, clk := claimSession(t, 4, 5)
	a, err := m.Claim(ctx, s.ID, 0, "a")
	if err != nil || a.Index != 0 || !a.Expires.Equal(clk.Now().Add(session.DefaultLease)) {
		t.Fatalf("claim of a: %+v %v", a, err)
	}
	if session.DefaultLease > 2*time.Minute {
		t.Fatalf("the default lease is %v, want about a minute", session.DefaultLease)
	}
	if b, err := m.Claim(ctx, s.ID, 0, "b"); err != nil || b.Index != 1 {
		t.Fatalf("claim of b: %+v %v", b, err)
	}
	v, err := m.Leases(ctx, s.ID)
	if err != nil || v.Held != 2 || v.Free != 2 || !v.NextExpiry.Equal(a.Expires) {
		t.Fatalf("leases: %+v %v, want 2 held, 2 free", v, err)
	}
	for _, tc := range []struct {
		gen, index int
		worker     string
	}{{0, 0, "b"}, {1, 0, "a"}, {0, 2, "a"}} {
		if ok, err := m.Release(ctx, s.ID, tc.gen, tc.index, tc.worker); err != nil || ok {
			t.Fatalf("release %+v: %v %v, want false", tc, ok, err)
		}
	}
	if ok, err := m.Release(ctx, s.ID, 0, 0, "a"); err != nil || !ok {
		t.Fatalf("release of a's lease: %v %v", ok, err)
	}
	if ok, err := m.Release(ctx, s.ID, 0, 0, "a"); err != nil || ok {
		t.Fatalf("release sent again: %v %v, want false", ok, err)
	}
	if c, err := m.Claim(ctx, s.ID, 0, "c"); err != nil || c.Index != 0 {
		t.Fatalf("a claim after the release: %+v %v, want candidate 0", c, err)
	}
	_, err = m.Release(ctx, s.ID, 0, 0, "")
	wantCode(t, err, session.CodeInvalid)
	_, err = m.Release(ctx, "nope", 0, 0, "a")
	wantCode(t, err, session.CodeNotFound)
}
