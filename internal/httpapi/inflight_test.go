package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowServer serves ts's router on a second listener that counts the body
// bytes the handlers have read; read is signalled at every read.
func slowServer(t *testing.T, ts *testServer) (*httptest.Server, *atomic.Int64, chan struct{}) {
	t.Helper()
	var n atomic.Int64
	read := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countReads{r.Body, &n, read}
		ts.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n, read
}

// countReads adds what each Read returns to n and signals read.
type countReads struct {
	io.ReadCloser
	n    *atomic.Int64
	read chan struct{}
}

func (r countReads) Read(p []byte) (int, error) {
	k, err := r.ReadCloser.Read(p)
	r.n.Add(int64(k))
	select {
	case r.read <- struct{}{}:
	default:
	}
	return k, err
}

// pipedCreate posts a create to srv whose body, without a Content-Length,
// is what is written to the pipe returned; the answer's status comes on
// the channel (0: no answer).
func pipedCreate(srv *httptest.Server) (*io.PipeWriter, chan int) {
	pr, pw := io.Pipe()
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/sessions", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			status <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	return pw, status
}

// waitFor waits up to a minute for cond, looking at each read of a body.
func waitFor(t *testing.T, read chan struct{}, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-read:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// TestInflightBytes: a body counts by the bytes read of it. While 700
// bytes of a slow body without a Content-Length are held (limit 1000), a
// create declaring 400 more is 503 with Retry-After, unread and without
// effect; requests without a body and small ones pass; once the slow body
// ends, the large create is served.
func TestInflightBytes(t *testing.T) {
	ts := newTestServer(t, serverOpts{maxBody: 800, maxInflight: 1000, grace: 10 * time.Minute})
	slow, _, signal := slowServer(t, ts)
	pw, first := pipedCreate(slow)
	defer pw.Close()
	head := `{"metadata": {"pad": "` + strings.Repeat("s", 660) + `"}, "x0": [1, 2`
	pw.Write([]byte(head))
	// Wait for the bytes to be charged, not only read: the create below
	// must find them in the budget.
	waitFor(t, signal, "the server charges the slow body", func() bool { return ts.srv.inflight.n.Load() >= int64(len(head)) })

	body := `{"x0": [1, 2], "sigma0": 1, "metadata": {"pad": "` + strings.Repeat("n", 360) + `"}}`
	r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("a create beyond the limit: %d, Retry-After %q; want 503 with Retry-After: %s", r.status, r.header.Get("Retry-After"), r.body)
	} else if e := decode[errorView](t, r); e.Error.Code != "overloaded" {
		t.Errorf("code %q, want overloaded", e.Error.Code)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/sessions"}); r.status != 200 || strings.Contains(string(r.body), `"id"`) {
		t.Errorf("list during the slow body: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1}`}); r.status != http.StatusCreated {
		t.Errorf("a small create during the slow body: %d %s", r.status, r.body)
	}
	pw.Write([]byte(`], "sigma0": 1}`))
	pw.Close()
	if got := <-first; got != http.StatusCreated {
		t.Errorf("the slow create: %d", got)
	}
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body}); r.status != http.StatusCreated {
		t.Errorf("a create after: %d %s", r.status, r.body)
	}
}

// TestSlowClientsServeOthers: 8 connections that declare bodies of the
// largest size and send one byte (the slow clients, the in-flight
// limit being 8 such bodies) hold the server's connections but not its
// budget: another client's creates and tells are served meanwhile. And 16
// tells without a Content-Length, all under way at once, each held open
// half sent, are all served (each counts what it sent, not the largest
// body).
func TestSlowClientsServeOthers(t *testing.T) {
	const maxBody = 4096
	ts := newTestServer(t, serverOpts{maxBody: maxBody, maxInflight: 8 * maxBody, grace: 10 * time.Minute})
	slow, read, signal := slowServer(t, ts)
	addr := strings.TrimPrefix(slow.URL, "http://")
	for i := range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", maxBody)
		waitFor(t, signal, fmt.Sprintf("the server reads slow body %d", i), func() bool { return read.Load() >= int64(i+1) })
	}
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "population_size": 16, "algorithm": "cma-es", "seed": 1})
	for range 3 {
		ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
	}

	// 16 partial tells of generation 3, each sent in two parts.
	b := ts.ask(t, s.ID)
	var wg sync.WaitGroup
	statuses := make([]int, 16)
	pws := make([]*io.PipeWriter, 16)
	before := read.Load()
	for i := range 16 {
		pr, pw := io.Pipe()
		pws[i] = pw
		wg.Go(func() {
			req, _ := http.NewRequest("POST", slow.URL+"/v1/sessions/"+s.ID+"/tell", pr)
			req.Header.Set("Content-Type", "application/json")
			resp, err := slow.Client().Do(req)
			if err != nil {
				t.Errorf("tell %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
		pw.Write([]byte(`{"generation": 3, `))
	}
	waitFor(t, signal, "the server reads the first part of 16 tells", func() bool {
		return read.Load() >= before+16*int64(len(`{"generation": 3, `))
	})
	for i, pw := range pws {
		fmt.Fprintf(pw, `"indices": [%d], "fitness": [%v]}`, i, sphere(b.Candidates[i]))
		pw.Close()
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Errorf("tell %d without a Content-Length: %d, want 200", i, st)
		}
	}
	if got := decode[sessionView](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})); got.Generation != 4 {
		t.Errorf("after 16 partial tells of λ = 16: generation %d, want 4", got.Generation)
	}
}

// TestSlowBodyCut: a body that comes slower than the minimum rate, after
// the grace, is cut with 408 body_too_slow in JSON; the server is then
// free for others.
func TestSlowBodyCut(t *testing.T) {
	ts := newTestServer(t, serverOpts{maxBody: 4096, maxInflight: 4096, grace: 50 * time.Millisecond, minRate: 1 << 20})
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"x0\": [1")
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to the slow body: %v", err)
	}
	defer resp.Body.Close()
	var e errorView
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusRequestTimeout || e.Error.Code != "body_too_slow" {
		t.Fatalf("the slow body: %d %+v %v, want 408 body_too_slow", resp.StatusCode, e, err)
	}
	if !strings.Contains(e.Error.Message, "too slowly") {
		t.Errorf("message %q", e.Error.Message)
	}
	// Its bytes are given back: a create of nearly the whole budget passes.
	body := `{"x0": [1, 2], "sigma0": 1, "name": "` + strings.Repeat("n", 200) + `"}`
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body}); r.status != http.StatusCreated {
		t.Errorf("a create after: %d %s", r.status, r.body)
	}
}

// TestInflightOneBodyPastLimit: of bodies that pass the in-flight limit
// together, each partly read, the first to pass it is read on (so that a
// burst of large bodies is not cut whole, every one 503) and the others
// are 503. Limit 1000: A holds 600 bytes and B 300; B passes the limit
// with 200 more and is read on; A, passing it after, is 503; B's create is
// served, and every byte is given back.
func TestInflightOneBodyPastLimit(t *testing.T) {
	ts := newTestServer(t, serverOpts{maxBody: 800, maxInflight: 1000, grace: 10 * time.Minute})
	slow, _, signal := slowServer(t, ts)
	charged := func(what string, n int) {
		waitFor(t, signal, what, func() bool { return ts.srv.inflight.n.Load() >= int64(n) })
	}
	head := `{"x0": [1, 2], "sigma0": 1, "metadata": {"pad": "`
	tail := `"}}`
	a, aStatus := pipedCreate(slow)
	defer a.Close()
	b, bStatus := pipedCreate(slow)
	defer b.Close()
	aHead := head + strings.Repeat("a", 600-len(head))
	a.Write([]byte(aHead))
	charged("A's 600 bytes", 600)
	b.Write([]byte(head + strings.Repeat("b", 300-len(head))))
	charged("B's 300 bytes", 900)
	b.Write([]byte(strings.Repeat("b", 200)))
	// B's bytes are charged before it takes its place past the limit.
	waitFor(t, signal, "B read on past the limit", func() bool {
		return ts.srv.inflight.n.Load() >= 1100 && ts.srv.inflight.over.Load() != nil
	})

	go func() { // A passes the limit while B is past it
		a.Write([]byte(strings.Repeat("a", 100) + tail))
		a.Close()
	}()
	if got := <-aStatus; got != http.StatusServiceUnavailable {
		t.Errorf("A, past the limit after B: %d, want 503", got)
	}
	b.Write([]byte(tail))
	b.Close()
	if got := <-bStatus; got != http.StatusCreated {
		t.Errorf("B, the first past the limit: %d, want 201", got)
	}
	waitFor(t, signal, "every byte given back", func() bool {
		return ts.srv.inflight.n.Load() == 0 && ts.srv.inflight.over.Load() == nil
	})
}
