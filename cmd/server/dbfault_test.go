package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
)

// The tests of a failing database: each on a cluster of its own
// (pgtest.NewCluster), which it stops, freezes or fills, with the server
// binary on it.

// unavailable checks that r is 503 store_unavailable with Retry-After.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

func sendH(t testing.TB, method, url string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func wantUnavailable(t testing.TB, what string, a answer) {
	t.Helper()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(a.body, &e)
	if a.code != 503 || e.Error.Code != "store_unavailable" || a.header.Get("Retry-After") == "" {
		t.Fatalf("%s: %d %s, Retry-After %q; want 503 store_unavailable with Retry-After", what, a.code, a.body, a.header.Get("Retry-After"))
	}
}

// waitReady waits (minutes) until base's /readyz answers 200.
func waitReady(t testing.TB, base string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		a := sendH(t, "GET", base+"/readyz", nil)
		if a.code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %s for minutes", a.code, a.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sessionOnCluster starts the server on a database of a throwaway
// cluster with -store-timeout timeout, creates a CMA-ES session and asks
// its first batch: the cluster, the server (the caller kills it), the
// session's URL and the batch. The server is killed when the test ends.
func sessionOnCluster(t *testing.T, timeout string) (*pgtest.Cluster, *proc, string, e2eBatch) {
	t.Helper()
	c := pgtest.NewCluster(t)
	p, err := launch(serverBinary(t), "-addr", "127.0.0.1:0", "-db", c.CreateDB(t, "selfcma"), "-store-timeout", timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	var s e2eSession
	json.Unmarshal(must(t, "POST", p.base+"/v1/sessions", createBody("cma-es"), 201), &s)
	sp := p.base + "/v1/sessions/" + s.ID
	var b e2eBatch
	json.Unmarshal(must(t, "GET", sp+"/ask", nil, 200), &b)
	return c, p, sp, b
}

// The database stopped, then started: requests (reads and writes) and
// /readyz answer 503 store_unavailable with Retry-After meanwhile,
// /healthz 200; then the session continues where it was.
func TestDatabaseDownUp(t *testing.T) {
	c, p, sp, b := sessionOnCluster(t, "5s")
	var s e2eSession
	waitReady(t, p.base)

	c.Stop(t, "immediate")
	wantUnavailable(t, "GET the session", sendH(t, "GET", sp, nil))
	wantUnavailable(t, "tell", sendH(t, "POST", sp+"/tell", tellOf(b)))
	wantUnavailable(t, "create", sendH(t, "POST", p.base+"/v1/sessions", createBody("cma-es")))
	wantUnavailable(t, "list", sendH(t, "GET", p.base+"/v1/sessions", nil))
	wantUnavailable(t, "/readyz", sendH(t, "GET", p.base+"/readyz", nil))
	if a := sendH(t, "GET", p.base+"/healthz", nil); a.code != 200 {
		t.Fatalf("/healthz with the database down: %d %s", a.code, a.body)
	}

	c.Start(t)
	waitReady(t, p.base)
	json.Unmarshal(must(t, "POST", sp+"/tell", tellOf(b), 200), &s)
	if s.Generation != 1 {
		t.Fatalf("after the database came back, the tell: generation %d", s.Generation)
	}
}

// A frozen database (every process SIGSTOPped: connections open, nothing
// answered): requests answer 503 within -store-timeout instead of hanging;
// thawed, it serves again.
func TestDatabaseFrozen(t *testing.T) {
	c, p, sp, b := sessionOnCluster(t, "2s")
	var s e2eSession

	c.Freeze(t)
	thawed := false
	defer func() {
		if !thawed {
			c.Continue(t)
		}
	}()
	// The client's own timeout (2 minutes) ends a hang: the assertion is
	// the 503.
	wantUnavailable(t, "GET the session", sendH(t, "GET", sp, nil))
	wantUnavailable(t, "tell", sendH(t, "POST", sp+"/tell", tellOf(b)))
	wantUnavailable(t, "/readyz", sendH(t, "GET", p.base+"/readyz", nil))
	c.Continue(t)
	thawed = true
	waitReady(t, p.base)
	json.Unmarshal(must(t, "POST", sp+"/tell", tellOf(b), 200), &s)
	if s.Generation != 1 {
		t.Fatalf("after the thaw, the tell: generation %d", s.Generation)
	}
}

// logged runs the server binary with args and returns its log so far (a
// function) and its end (a channel of its exit error).
func logged(t *testing.T, bin string, args ...string) (func() string, <-chan error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var mu sync.Mutex
	var buf bytes.Buffer
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &mu, w: &buf}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			buf.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
		close(copied)
	}()
	done := make(chan error, 1)
	go func() { <-copied; done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}, done
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// waitLog waits (minutes) until the log has n lines with want, or the
// process ends.
func waitLog(t *testing.T, log func() string, done <-chan error, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for strings.Count(log(), want) < n {
		select {
		case err := <-done:
			t.Fatalf("the server exited (%v) before %d lines with %q:\n%s", err, n, want, log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %d lines with %q in minutes:\n%s", n, want, log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server started while its database is down waits, logging each try,
// and serves once the database is up; with -store-wait passed it gives up
// and says so.
func TestStartBeforeDatabase(t *testing.T) {
	bin := serverBinary(t)
	c := pgtest.NewCluster(t)
	db := c.CreateDB(t, "selfcma")
	c.Stop(t, "fast")

	log, done := logged(t, bin, "-addr", "127.0.0.1:0", "-db", db, "-store-wait", "1s")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(log(), "gave up after") {
			t.Fatalf("-store-wait 1s with the database down: exit %v\n%s", err, log())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("-store-wait 1s: no exit in minutes:\n%s", log())
	}

	log, done = logged(t, bin, "-addr", "127.0.0.1:0", "-db", db)
	waitLog(t, log, done, `msg="store unavailable, waiting"`, 3)
	if strings.Contains(log(), "msg=listening") {
		t.Fatalf("listening before the database is up:\n%s", log())
	}
	c.Start(t)
	waitLog(t, log, done, "msg=listening", 1)
	m := listenRE.FindStringSubmatch(log())
	base := "http://" + m[1]
	waitReady(t, base)
	must(t, "POST", base+"/v1/sessions", createBody("cma-es"), 201)
	if !strings.Contains(log(), `msg="store reachable"`) {
		t.Errorf("no line of the store reachable:\n%s", log())
	}
}

// PostgreSQL's max_connections reached: a server started then waits; a
// server whose pool needs a connection it cannot get answers 503
// store_unavailable, never 500; with the connections given back, it
// serves.
func TestMaxConnections(t *testing.T) {
	bin := serverBinary(t)
	const max = 8
	c := pgtest.NewCluster(t, fmt.Sprintf("max_connections=%d", max), "superuser_reserved_connections=0")
	db := c.CreateDB(t, "selfcma")
	ctx := context.Background()
	var held []*pgx.Conn
	hold := func(n int) {
		for range n {
			conn, err := pgx.Connect(ctx, c.URL("postgres"))
			if err != nil {
				t.Fatalf("holding connection %d: %v", len(held)+1, err)
			}
			held = append(held, conn)
		}
	}
	release := func() {
		for _, conn := range held {
			conn.Close(ctx)
		}
		held = nil
	}
	defer release()

	// All taken: a start waits.
	hold(max)
	log, done := logged(t, bin, "-addr", "127.0.0.1:0", "-db", db, "-store-timeout", "5s")
	waitLog(t, log, done, `msg="store unavailable, waiting"`, 2)
	if !strings.Contains(log(), "SQLSTATE 53300") {
		t.Errorf("the waits do not say 53300:\n%s", log())
	}
	release()
	waitLog(t, log, done, "msg=listening", 1)
	base := "http://" + listenRE.FindStringSubmatch(log())[1]

	// The server holds a connection or two; the others taken, 8
	// concurrent creates need more than it has.
	must(t, "POST", base+"/v1/sessions", createBody("cma-es"), 201)
	for len(held) < max {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			break // the server's connections take the rest
		}
		held = append(held, conn)
	}
	counts := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			a := sendH(t, "POST", base+"/v1/sessions", createBody("self-cma-es"))
			mu.Lock()
			defer mu.Unlock()
			counts[a.code]++
			if a.code == 503 {
				wantUnavailable(t, "create with no connection left", a)
			}
		})
	}
	wg.Wait()
	t.Logf("16 creates with the connections taken: %v", counts)
	if counts[500] > 0 || counts[503] == 0 {
		t.Errorf("16 creates with the connections taken: %v; want some 503 and no 500", counts)
	}
	release()
	waitReady(t, base)
	must(t, "POST", base+"/v1/sessions", createBody("cma-es"), 201)
}
