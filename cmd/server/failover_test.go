package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
)

// failoverLoad is the clients of TestFailover: every request goes to a
// random one of the servers and is sent again while it gets no answer or
// a 503 (as a client honouring Retry-After would, but sooner, to measure
// the recovery), and it records what the outage answered.
type failoverLoad struct {
	bases []string

	mu        sync.Mutex
	rng       *rand.Rand
	acked     map[string]int // a session's generations told and acknowledged (200)
	outage    bool           // between the kill of the primary and the first write after the promotion
	promoted  time.Time      // zero: not yet
	back      time.Time      // the first write acknowledged after the promotion
	answers   map[string]int // during the outage: by status, "no answer" for a transport error
	fivehundr []string       // any 500, ever
}

func (l *failoverLoad) base() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bases[l.rng.IntN(len(l.bases))]
}

func (l *failoverLoad) count(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.outage {
		l.answers[what]++
	}
}

func (l *failoverLoad) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		sent := time.Now()
		code, b, err := send(method, l.base()+path, body)
		switch {
		case err != nil:
			l.count("no answer")
			time.Sleep(20 * time.Millisecond)
			continue
		case code >= 500:
			l.count(fmt.Sprint(code))
			if code != 503 || !bytes.Contains(b, []byte(`"store_unavailable"`)) {
				l.mu.Lock()
				l.fivehundr = append(l.fivehundr, fmt.Sprintf("%s %s: %d %s", method, path, code, b))
				l.mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		if l.outage {
			l.answers[fmt.Sprint(code)]++
			if method == "POST" && code < 300 && !l.promoted.IsZero() && sent.After(l.promoted) {
				l.outage, l.back = false, time.Now()
			}
		}
		l.mu.Unlock()
		return code, b
	}
	t.Fatalf("%s %s: no answer but 503s for minutes", method, path)
	return 0, nil
}

func (l *failoverLoad) must(t *testing.T, method, path string, body any, want ...int) []byte {
	t.Helper()
	code, b := l.do(t, method, path, body)
	for _, w := range want {
		if code == w {
			return b
		}
	}
	t.Fatalf("%s %s: %d %s, want %v", method, path, code, b, want)
	return nil
}

// TestFailover: a primary and a synchronous streaming standby (throwaway
// clusters: pg_basebackup -R, synchronous_standby_names), two servers on
// a URL of both hosts with target_session_attrs=read-write, four sessions
// told through them at random; the primary's postmaster is killed with
// SIGKILL mid-run and the standby promoted. No acknowledged value is lost,
// every session is bit for bit the run of a server on a bbolt file, the
// outage answers 503 store_unavailable (or nothing), never 500, and writes
// come back after the promotion: the log line gives the figures.
//
// The switchover: the same, but the primary is stopped on purpose (pg_ctl
// stop -m fast), and once the standby is promoted it comes back as the
// new primary's standby, reachable under the servers' URL still.
func TestFailover(t *testing.T) {
	bin := serverBinary(t)
	algs := []string{"cma-es", "self-cma-es", "cma-es", "self-cma-es"}
	refs := map[string]trace{}
	for _, alg := range algs[:2] {
		refs[alg] = reference(t, bin, alg)
	}
	t.Run("crash", func(t *testing.T) { testFailover(t, bin, algs, refs, false) })
	t.Run("switchover", func(t *testing.T) { testFailover(t, bin, algs, refs, true) })
}

// startFailoverLoad starts two servers on db (killed when the test ends)
// and the load's bookkeeping, its random stream seeded by (25, seed).
func startFailoverLoad(t *testing.T, bin, db string, seed uint64) *failoverLoad {
	t.Helper()
	l := &failoverLoad{rng: rand.New(rand.NewPCG(25, seed)), acked: map[string]int{}, answers: map[string]int{}}
	for range 2 {
		p, err := launch(bin, "-addr", "127.0.0.1:0", "-db", db, "-store-timeout", "5s")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.kill)
		l.bases = append(l.bases, p.base)
	}
	return l
}

// startOutage marks the start of the fault and returns its time.
func (l *failoverLoad) startOutage() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outage = true
	return time.Now()
}

func testFailover(t *testing.T, bin string, algs []string, refs map[string]trace, switchover bool) {
	primary := pgtest.NewCluster(t, "synchronous_standby_names=standby1")
	standby := primary.Standby(t, "standby1")
	primary.CreateDB(t, "selfcma")
	db := fmt.Sprintf("postgres://%s@%s,%s/selfcma?sslmode=disable&target_session_attrs=read-write",
		primary.User(), primary.Host(), standby.Host())
	l := startFailoverLoad(t, bin, db, 7)

	// The failover, once every session has told 5 generations; the
	// promotion once the servers have answered the outage 8 times
	// (conditions, not clocks).
	failover := make(chan struct{})
	var stopped time.Time
	go func() {
		defer close(failover)
		l.waitAcked(len(algs), 5)
		stopped = l.startOutage()
		if switchover {
			primary.Stop(t, "fast")
		} else {
			primary.Kill(t)
		}
		l.waitOutage(8)
		standby.Promote(t)
		l.mu.Lock()
		l.promoted = time.Now()
		l.mu.Unlock()
		if switchover {
			primary.Follow(t, standby, "old")
		}
	}()
	var wg sync.WaitGroup
	for w, alg := range algs {
		wg.Go(func() { l.run(t, w, alg, refs[alg]) })
	}
	wg.Wait()
	<-failover

	what := map[bool]string{false: "failover", true: "switchover"}[switchover]
	l.report(t, what, stopped)
	entries := 0
	for _, alg := range algs {
		entries += len(refs[alg].batches)
	}
	checkDB(t, bin, standby.URL("selfcma"), len(algs), entries)
	if switchover {
		waitFollows(t, primary, entries)
	}
}

// waitAcked waits until n sessions have told g generations each.
func (l *failoverLoad) waitAcked(n, g int) {
	for {
		l.mu.Lock()
		least := 1 << 30
		for _, a := range l.acked {
			least = min(least, a)
		}
		done := len(l.acked) == n && least >= g
		l.mu.Unlock()
		if done {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitOutage waits (2 minutes at most) until the servers have answered n
// requests 503 or not at all since the outage began.
func (l *failoverLoad) waitOutage(n int) {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		l.mu.Lock()
		got := l.answers["503"] + l.answers["no answer"]
		l.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run drives session w of algorithm alg to its end, checking each batch,
// and then its history and final state, against ref.
func (l *failoverLoad) run(t *testing.T, w int, alg string, ref trace) {
	var sess e2eSession
	json.Unmarshal(l.must(t, "POST", "/v1/sessions", withKey{createBody(alg), fmt.Sprintf("failover-%d", w)}, 201, 200), &sess)
	sp := "/v1/sessions/" + sess.ID
	for g := 0; sess.Status == "running"; g++ {
		var bt e2eBatch
		json.Unmarshal(l.must(t, "GET", sp+"/ask", nil, 200), &bt)
		if bt.Generation != g || g >= len(ref.batches) || !sameBits(bt.Candidates, ref.batches[g]) {
			t.Errorf("session %d (%s) generation %d: asked generation %d, the batch differs from the bbolt run's (a value lost?)", w, alg, g, bt.Generation)
			return
		}
		json.Unmarshal(l.must(t, "POST", sp+"/tell", tellOf(bt), 200), &sess)
		if sess.Generation != g+1 {
			t.Errorf("session %d: after the tell of generation %d answered 200 the session is at %d", w, g, sess.Generation)
			return
		}
		l.mu.Lock()
		l.acked[sess.ID] = sess.Generation
		l.mu.Unlock()
	}
	if hist := l.must(t, "GET", sp+"/history", nil, 200); !bytes.Equal(hist, ref.history) {
		t.Errorf("session %d (%s): the history differs from the bbolt run's", w, alg)
	}
	if final := finalOf(t, l.must(t, "GET", sp, nil, 200)); fmt.Sprint(final) != fmt.Sprint(ref.final) {
		t.Errorf("session %d (%s): final session differs:\n%v\n%v", w, alg, final, ref.final)
	}
}

// report checks and logs what the outage answered and when writes came
// back.
func (l *failoverLoad) report(t *testing.T, what string, stopped time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fivehundr) > 0 {
		t.Errorf("%d answers 5xx other than 503 store_unavailable, the first: %s", len(l.fivehundr), l.fivehundr[0])
	}
	if l.promoted.IsZero() || l.back.IsZero() {
		t.Fatalf("the %s did not happen during the run (promoted %v, writes back %v): the sessions ended first", what, l.promoted, l.back)
	}
	if l.answers["503"] == 0 {
		t.Errorf("no 503 during the outage: %v", l.answers)
	}
	keys := slices.Sorted(maps.Keys(l.answers))
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, l.answers[k]))
	}
	t.Logf("%s: outage answers {%s}; database back (promoted, started) %.2f s after the stop; writes back %.2f s after that (%.2f s after the stop)",
		what, strings.Join(parts, ", "), l.promoted.Sub(stopped).Seconds(), l.back.Sub(l.promoted).Seconds(), l.back.Sub(stopped).Seconds())
	if d := l.back.Sub(l.promoted); d > 2*time.Minute {
		t.Errorf("writes back %v after the promotion", d)
	}
}

// waitFollows waits (minutes) until c, the old primary, is in recovery
// with entries history entries: it follows the new one.
func waitFollows(t *testing.T, c *pgtest.Cluster, entries int) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var standby bool
		var n int
		conn, err := pgx.Connect(ctx, c.URL("selfcma"))
		if err == nil {
			err = conn.QueryRow(ctx, "SELECT pg_is_in_recovery(), (SELECT count(*) FROM history)").Scan(&standby, &n)
			conn.Close(ctx)
		}
		if err == nil && standby && n == entries {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old primary: in recovery %v, %d history entries of %d, %v", standby, n, entries, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
