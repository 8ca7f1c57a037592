package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
)

// servers is a set of servers on one database, some of which may be down
// (being restarted); every method is safe for concurrent use.
type servers struct {
	bin, db string
	mu      sync.Mutex
	ps      []*proc // nil: down
	served  []int   // requests server i answered since its start
	rng     *rand.Rand
	kills   int
	cut     int           // requests that got no answer (their server was killed)
	latency time.Duration // a moving average of the answered requests' times
}

func startServers(t *testing.T, bin, db string, n int) *servers {
	t.Helper()
	s := &servers{bin: bin, db: db, ps: make([]*proc, n), served: make([]int, n), rng: rand.New(rand.NewPCG(uint64(n), 15))}
	for i := range n {
		p, err := launch(bin, "-addr", "127.0.0.1:0", "-db", db)
		if err != nil {
			s.stopAll(t)
			t.Fatal(err)
		}
		s.ps[i] = p
	}
	t.Cleanup(func() { s.killAll() })
	return s
}

// base is the address of server i, "" when it is down.
func (s *servers) base(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ps[i] == nil {
		return ""
	}
	return s.ps[i].base
}

// any is a random server that is up (waiting for one): its index and
// process.
func (s *servers) any() (int, *proc) {
	for {
		s.mu.Lock()
		var up []int
		for i, p := range s.ps {
			if p != nil {
				up = append(up, i)
			}
		}
		if len(up) > 0 {
			i := up[s.rng.IntN(len(up))]
			p := s.ps[i]
			s.mu.Unlock()
			return i, p
		}
		s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

// answered records that process p, server i, answered a request in d.
func (s *servers) answered(i int, p *proc, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ps[i] == p {
		s.served[i]++
	}
	if s.latency == 0 {
		s.latency = d
	}
	s.latency += (d - s.latency) / 8
}

// servedSince is the number of requests server i answered since its start
// (0 while it is down), and the average time of a request.
func (s *servers) servedSince(i int) (int, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ps[i] == nil {
		return 0, s.latency
	}
	return s.served[i], s.latency
}

// restart kills server i with SIGKILL and starts it again on the database.
func (s *servers) restart(i int) error {
	s.mu.Lock()
	p := s.ps[i]
	s.ps[i] = nil
	s.kills++
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
	np, err := launch(s.bin, "-addr", "127.0.0.1:0", "-db", s.db)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ps[i], s.served[i] = np, 0
	s.mu.Unlock()
	return nil
}

// killer restarts a random server, again and again, until stop is closed;
// it returns the first error of a restart. It paces itself on the
// requests, not on the clock, so that it works on a slow or busy machine as
// on a fast one: it kills a server only after the server answered a
// request since its start (so a request sent again after a kill, which may
// take long as the new server loads the session, gets its answer), and then
// after a random gap of up to 8 times the average request's time (so a
// kill lands anywhere in a request, or between two).
func (s *servers) killer(seed uint64, stop <-chan struct{}) error {
	rng := rand.New(rand.NewPCG(7, seed))
	for {
		i := rng.IntN(len(s.ps))
		var lat time.Duration
		for {
			var n int
			if n, lat = s.servedSince(i); n > 0 {
				break
			}
			select {
			case <-stop:
				return nil
			case <-time.After(time.Millisecond):
			}
		}
		select {
		case <-stop:
			return nil
		case <-time.After(time.Duration(rng.Float64() * 8 * float64(lat))):
		}
		if err := s.restart(i); err != nil {
			return err
		}
	}
}

// killed is the number of kills so far.
func (s *servers) killed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kills
}

// cutShort is the number of requests that got no answer so far.
func (s *servers) cutShort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

func (s *servers) killAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.ps {
		if p != nil {
			p.kill()
			s.ps[i] = nil
		}
	}
}

func (s *servers) stopAll(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	ps := s.ps
	s.ps = make([]*proc, len(ps))
	s.mu.Unlock()
	for _, p := range ps {
		if p != nil {
			p.stop(t)
		}
	}
}

// do sends the request to random servers until one answers (a server
// killed under it gives a transport error: the client sends it again, as
// a client of a load balancer would).
func (s *servers) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	for range 200 {
		i, p := s.any()
		start := time.Now()
		code, b, err := send(method, p.base+path, body)
		if err == nil {
			s.answered(i, p, time.Since(start))
			return code, b
		}
		s.mu.Lock()
		s.cut++
		s.mu.Unlock()
	}
	t.Fatalf("%s %s: no server answered in 200 tries", method, path)
	return 0, nil
}

func (s *servers) must(t *testing.T, method, path string, body any, want int) []byte {
	t.Helper()
	code, b := s.do(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return b
}

func checkDB(t *testing.T, bin, db string, sessions, entries int) {
	t.Helper()
	out, err := exec.Command(bin, "-check", "-db", db).CombinedOutput()
	want := fmt.Sprintf(": sessions %d, history entries %d, problems 0\n", sessions, entries)
	if err != nil || !strings.HasSuffix(string(out), want) {
		t.Errorf("-check of the database: %v\n%s\nwant a line ending %q", err, out, want)
	}
}

// chunkedSessions is the number of sessions whose state the database keeps
// in chunks.
func chunkedSessions(t *testing.T, db string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM sessions WHERE chunks > 0").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Three servers on one database; a client sends each request to a random
// server while a killer SIGKILLs a random server at random moments and
// starts it again (at least 50 kills, at least 10 of them cutting a
// request short). Every candidate of every generation equals one bbolt
// server's uninterrupted run with the same seed, bit for bit; every tell
// answered 200 is applied (none lost, none twice: the history equals the
// reference's); -check finds no problem. With one server the same holds of
// a single server on PostgreSQL.
func TestPostgresKills(t *testing.T) {
	bin := serverBinary(t)
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d servers", n), func(t *testing.T) {
			algs := []string{"cma-es", "self-cma-es", algConstrained, algMixed}
			refs := map[string]trace{}
			for _, alg := range algs {
				refs[alg] = reference(t, bin, alg)
			}
			db := pgtest.DB(t)
			s := startServers(t, bin, db, n)
			stopKiller := make(chan struct{})
			killed := make(chan error, 1)
			go func() { killed <- s.killer(uint64(n), stopKiller) }()
			// Rounds of the three sessions (the same seeded runs again, under other
			// keys) until the killer has killed 50 times, 10 of them during a
			// request: about one round, the killer being paced on the
			// requests.
			enough := func() bool {
				return s.killed() >= 50 && s.cutShort() >= 10
			}
			entries, sessions := 0, 0
			for round := 0; round == 0 || !enough(); round++ {
				if round == 10 {
					t.Fatalf("%d kills, %d requests cut short, in 10 rounds", s.killed(), s.cutShort())
				}
				for _, alg := range algs {
					ref := refs[alg]
					sessions++
					entries += len(ref.batches)
					rng := rand.New(rand.NewPCG(uint64(len(alg)), uint64(round)))
					var sess e2eSession
					create := withKey{createBody(alg), fmt.Sprintf("pg-kills-%s-%d-%d", alg, n, round)}
					code, b := s.do(t, "POST", "/v1/sessions", create)
					if code != 201 && code != 200 {
						t.Fatalf("create: %d %s", code, b)
					}
					json.Unmarshal(b, &sess)
					sp := "/v1/sessions/" + sess.ID
					for g := 0; sess.Status == "running"; g++ {
						var bt e2eBatch
						json.Unmarshal(s.must(t, "GET", sp+"/ask", nil, 200), &bt)
						if bt.Generation != g || g >= len(ref.batches) || !sameBits(bt.points(), ref.batches[g]) {
							t.Fatalf("%s generation %d: asked generation %d, the batch differs from the bbolt run's", alg, g, bt.Generation)
						}
						tell := tellFor(alg, bt)
						if rng.IntN(3) == 0 { // in two parts
							half := len(bt.Candidates) / 2
							var part struct {
								Generation int `json:"generation"`
								Partial    *struct {
									Indices []int `json:"indices"`
								} `json:"partial"`
							}
							json.Unmarshal(s.must(t, "POST", sp+"/tell", partFor(tell, 0, half), 200), &part)
							if part.Generation != g || part.Partial == nil || len(part.Partial.Indices) != half {
								t.Fatalf("%s generation %d: the first part answered %+v", alg, g, part)
							}
							json.Unmarshal(s.must(t, "POST", sp+"/tell", partFor(tell, half, len(bt.Candidates)), 200), &sess)
						} else {
							json.Unmarshal(s.must(t, "POST", sp+"/tell", tell, 200), &sess)
						}
						if sess.Generation != g+1 {
							t.Fatalf("%s: after the tell of generation %d answered 200 the session is at %d", alg, g, sess.Generation)
						}
					}
					hist := s.must(t, "GET", sp+"/history", nil, 200)
					final := finalOf(t, s.must(t, "GET", sp, nil, 200))
					if !bytes.Equal(hist, ref.history) {
						t.Errorf("%s: the history differs from the bbolt run's", alg)
					}
					if fmt.Sprint(final) != fmt.Sprint(ref.final) {
						t.Errorf("%s: final session differs:\n%v\n%v", alg, final, ref.final)
					}
				}
			}
			close(stopKiller)
			if err := <-killed; err != nil {
				t.Fatal(err)
			}
			s.stopAll(t)
			t.Logf("%d sessions, %d generations, %d kills, %d requests cut short", sessions, entries, s.killed(), s.cutShort())
			checkDB(t, bin, db, sessions, entries)
			// The self-CMA-ES sessions (n = 10, λ = 100) are the ones whose
			// state is written in chunks (internal/store/postgres/chunks.go):
			// the kills hit those Puts too.
			if got, want := chunkedSessions(t, db), sessions/len(algs); got != want {
				t.Errorf("%d sessions stored in chunks, want the %d of self-CMA-ES", got, want)
			}
		})
	}
}

// 8 clients race different tells of one generation through three servers:
// each generation is applied once, one tell answered 200, the others 409.
func TestPostgresRacingTells(t *testing.T) {
	bin := serverBinary(t)
	db := pgtest.DB(t)
	s := startServers(t, bin, db, 3)
	var sess e2eSession
	json.Unmarshal(must(t, "POST", s.base(0)+"/v1/sessions", createBody("cma-es"), 201), &sess)
	sp := "/v1/sessions/" + sess.ID
	const clients, generations = 8, 20
	for g := range generations {
		var bt e2eBatch
		json.Unmarshal(must(t, "GET", s.base(g%3)+sp+"/ask", nil, 200), &bt)
		codes := make([]int, clients)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				tell := tellOf(bt)
				fit := tell["fitness"].([]float64)
				for i := range fit {
					fit[i] += float64(c) // a tell of its own
				}
				code, b, err := send("POST", s.base(c%3)+sp+"/tell", tell)
				if err != nil {
					t.Errorf("client %d: %v", c, err)
				}
				if code != 200 && code != 409 {
					t.Errorf("client %d: %d %s", c, code, b)
				}
				codes[c] = code
			})
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			if c == 200 {
				ok++
			}
		}
		if ok != 1 {
			t.Fatalf("generation %d: %d tells answered 200 (%v), want 1", g, ok, codes)
		}
		json.Unmarshal(must(t, "GET", s.base((g+1)%3)+sp, nil, 200), &sess)
		if sess.Generation != g+1 {
			t.Fatalf("after the race of generation %d the session is at %d", g, sess.Generation)
		}
	}
	s.stopAll(t)
	checkDB(t, bin, db, 1, generations)
}

type e2eClaim struct {
	Generation int       `json:"generation"`
	Index      *int      `json:"index"`
	X          []float64 `json:"x"`
}

// Workers claiming through different servers get different candidates; a
// renewal through a third server keeps the worker's candidate; after every
// server restarts, the leases hold: a new worker is not handed a candidate
// under lease, and the renewal still keeps it.
func TestPostgresLeasesAcrossServers(t *testing.T) {
	bin := serverBinary(t)
	db := pgtest.DB(t)
	s := startServers(t, bin, db, 3)
	var sess e2eSession
	json.Unmarshal(must(t, "POST", s.base(0)+"/v1/sessions", createBody("cma-es"), 201), &sess)
	sp := "/v1/sessions/" + sess.ID
	claim := func(server int, query string) e2eClaim {
		t.Helper()
		var c e2eClaim
		json.Unmarshal(must(t, "POST", s.base(server)+sp+"/claim?lease=600&"+query, nil, 200), &c)
		if c.Index == nil {
			t.Fatalf("claim %s through server %d: none free", query, server)
		}
		return c
	}
	a := claim(0, "worker=a")
	b := claim(1, "worker=b")
	if *a.Index == *b.Index {
		t.Fatalf("workers a and b, through two servers, both got candidate %d", *a.Index)
	}
	renew := "worker=a&generation=" + strconv.Itoa(a.Generation) + "&index=" + strconv.Itoa(*a.Index)
	if r := claim(2, renew); *r.Index != *a.Index || !sameBits([][]float64{r.X}, [][]float64{a.X}) {
		t.Fatalf("a's renewal through a third server gave candidate %d, want %d", *r.Index, *a.Index)
	}
	for i := range 3 {
		if err := s.restart(i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		c := claim(i, fmt.Sprintf("worker=c%d", i))
		if *c.Index == *a.Index || *c.Index == *b.Index {
			t.Fatalf("after every server restarted, worker c%d got candidate %d, leased to a (%d) or b (%d)", i, *c.Index, *a.Index, *b.Index)
		}
	}
	if r := claim(1, renew); *r.Index != *a.Index {
		t.Fatalf("a's renewal after the restarts gave candidate %d, want %d", *r.Index, *a.Index)
	}
	if r := claim(2, "worker=b"); *r.Index != *b.Index {
		t.Fatalf("b's claim sent again after the restarts gave candidate %d, want its %d", *r.Index, *b.Index)
	}
}

// A bbolt file copied into PostgreSQL continues there bit for bit: each
// session, one with a generation told in part, goes on as it goes on in
// the file; the idempotency key comes along; -copy-from run again copies
// nothing twice; -check finds no problem; /v1/backup names pg_dump.
func TestPostgresCopyContinues(t *testing.T) {
	bin := serverBinary(t)
	db := pgtest.DB(t)
	file := filepath.Join(t.TempDir(), "bolt.db")
	p := startServer(t, bin, file)
	type started struct {
		id  string
		key withKey
	}
	var sessions []started
	for i, alg := range []string{"cma-es", "self-cma-es"} {
		key := withKey{createBody(alg), "copy-" + alg}
		var s e2eSession
		json.Unmarshal(must(t, "POST", p.base+"/v1/sessions", key, 201), &s)
		sp := "/v1/sessions/" + s.ID
		for g := range 5 {
			var bt e2eBatch
			json.Unmarshal(must(t, "GET", p.base+sp+"/ask", nil, 200), &bt)
			if i == 1 && g == 4 { // the last generation told in part: held values are copied
				fit := tellOf(bt)["fitness"].([]float64)
				must(t, "POST", p.base+sp+"/tell", partOf(g, fit, 0, len(fit)/2), 200)
				break
			}
			must(t, "POST", p.base+sp+"/tell", tellOf(bt), 200)
		}
		sessions = append(sessions, started{s.ID, key})
	}
	p.stop(t)

	out, err := exec.Command(bin, "-copy-from", file, "-db", db).CombinedOutput()
	if err != nil || !regexp.MustCompile(`^copied 2 sessions \(9 history entries\) from .* to postgres://.*; 0 were there already\n$`).Match(out) {
		t.Fatalf("-copy-from: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "-copy-from", file, "-db", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "copied 0 sessions (0 history entries)") || !strings.Contains(string(out), "2 were there already") {
		t.Fatalf("-copy-from again: %v\n%s", err, out)
	}
	checkDB(t, bin, db, 2, 9)

	pb, pp := startServer(t, bin, file), startServer(t, bin, db)
	code, b, err := send("GET", pp.base+"/v1/backup", nil)
	if err != nil || code != 501 || !strings.Contains(string(b), `"code":"backup_unsupported"`) || !strings.Contains(string(b), "pg_dump") {
		t.Errorf("GET /v1/backup on PostgreSQL: %d %s %v, want 501 backup_unsupported naming pg_dump", code, b, err)
	}
	entries := 0
	for _, st := range sessions {
		var again e2eSession
		json.Unmarshal(must(t, "POST", pp.base+"/v1/sessions", st.key, 200), &again)
		if again.ID != st.id {
			t.Errorf("the create sent again to PostgreSQL answered session %s, want the copied %s", again.ID, st.id)
		}
		sp := "/v1/sessions/" + st.id
		var sb, sg e2eSession
		sb.Status = "running"
		for g := 0; sb.Status == "running"; g++ {
			var bb, bp e2eBatch
			json.Unmarshal(must(t, "GET", pb.base+sp+"/ask", nil, 200), &bb)
			json.Unmarshal(must(t, "GET", pp.base+sp+"/ask", nil, 200), &bp)
			if bb.Generation != bp.Generation || !sameBits(bb.Candidates, bp.Candidates) {
				t.Fatalf("session %s, generation %d on bbolt, %d on PostgreSQL: the batches differ", st.id, bb.Generation, bp.Generation)
			}
			tell := tellOf(bb)
			rb := must(t, "POST", pb.base+sp+"/tell", tell, 200)
			rp := must(t, "POST", pp.base+sp+"/tell", tell, 200)
			json.Unmarshal(rb, &sb)
			json.Unmarshal(rp, &sg)
			if fb, fp := finalOf(t, rb), finalOf(t, rp); fmt.Sprint(fb) != fmt.Sprint(fp) {
				t.Fatalf("session %s: the tells answered differently:\n%v\n%v", st.id, fb, fp)
			}
			if g > 3000 {
				t.Fatal("no end in 3000 generations")
			}
		}
		hb := must(t, "GET", pb.base+sp+"/history", nil, 200)
		hp := must(t, "GET", pp.base+sp+"/history", nil, 200)
		if !bytes.Equal(hb, hp) {
			t.Errorf("session %s: the histories differ", st.id)
		}
		entries += sg.Generation
		t.Logf("session %s continued to generation %d, %s, on both", st.id, sg.Generation, sg.Status)
	}
	pb.stop(t)
	pp.stop(t)
	checkDB(t, bin, db, 2, entries)
}
