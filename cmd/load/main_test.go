package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// server is the service in process on a temporary file (fsync off),
// behind wrap if one is given.
func server(t *testing.T, token string, wrap ...func(http.Handler) http.Handler) (*httptest.Server, *session.Manager) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "l.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	m := session.NewManager(st, session.Options{})
	var h http.Handler = httpapi.New(httpapi.Config{Manager: m, Token: token})
	for _, w := range wrap {
		h = w(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		st.Close()
	})
	return ts, m
}

// runUntil runs load with args until cond holds (polled), then ends it
// as SIGINT would: the -duration that args give is only a deadline for a
// stuck run, so that no test depends on the speed of the machine. It fails
// the test if the run ended before cond held.
func runUntil(t *testing.T, args []string, getenv func(string) string, out io.Writer, cond func() bool) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, getenv, out) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case err := <-done:
			t.Fatalf("%q ended before its condition held: %v", args, err)
		case <-tick.C:
		}
	}
	cancel()
	return <-done
}

// counting counts the creates and the tells that h answered.
type counting struct {
	h             http.Handler
	create, tells atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.h.ServeHTTP(w, r)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/sessions":
		c.create.Add(1)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/tell"):
		c.tells.Add(1)
	}
}

var summary = regexp.MustCompile(`^(\d+) sessions of (\S+), n = (\d+): (\d+) generations in [\d.]+ s = \d+ generations/s\none generation \((.+)\): p50 \S+, p90 \S+, p99 \S+, max \S+\n$`)

// The workers run generations on their sessions, replace the ones that
// stop, report the totals and delete what they created (unless -keep).
// Each run lasts until the server has answered enough tells (and, for the
// 2-D sessions, which stop after about 100 generations, a second create).
func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		args []string
		how  string
		keep bool
	}{
		{[]string{"-sessions", "3", "-dim", "4", "-algorithm", "self-cma-es", "-lambda", "6"}, "ask + tell", false},
		{[]string{"-sessions", "1", "-dim", "2", "-next", "-keep"}, "tell?next=true", true},
	} {
		c := &counting{}
		ts, m := server(t, "tok", func(h http.Handler) http.Handler { c.h = h; return c })
		sessions, _ := strconv.Atoi(tc.args[1])
		const gens = 10
		var out bytes.Buffer
		args := append([]string{"-url", ts.URL + "/", "-duration", "5m"}, tc.args...)
		// Each worker's last answer may be lost to the end of the run.
		err := runUntil(t, args, func(string) string { return "tok" }, &out, func() bool {
			return c.tells.Load() >= int64(gens+sessions) && (!tc.keep || c.create.Load() >= 2)
		})
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		g := summary.FindStringSubmatch(out.String())
		if g == nil {
			t.Fatalf("%q: output\n%s", args, out.String())
		}
		got, _ := strconv.Atoi(g[4])
		if g[1] != tc.args[1] || g[3] != tc.args[3] || g[5] != tc.how || got < gens {
			t.Errorf("%q: %s", args, out.String())
		}
		list, err := m.List(context.Background(), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if tc.keep != (len(list) > 0) {
			t.Errorf("%q: %d sessions left on the server", args, len(list))
		}
		if tc.keep && len(list) < 2 {
			t.Errorf("%q: %d sessions created, none replaced", args, len(list))
		}
	}
}

// A run that ends while a create is under way ends without an error: the
// end of the run cut the request short, the server did not fail it. (Each
// create after the first waits here until the client gives up.)
func TestLoadEndsDuringCreate(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "l.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mux := httpapi.New(httpapi.Config{Manager: session.NewManager(st, session.Options{})})
	var creates atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/sessions" && creates.Add(1) > 1 {
			io.Copy(io.Discard, r.Body) // then the server watches the connection
			select {
			case <-r.Context().Done(): // the client went away
			case <-time.After(10 * time.Second):
			}
			return
		}
		mux.ServeHTTP(w, r)
	}))
	defer ts.Close()
	var out bytes.Buffer
	args := []string{"-url", ts.URL, "-dim", "2", "-duration", "5m", "-keep"}
	// Until the first session stopped (about 100 generations) and its
	// replacement's create is under way.
	if err := runUntil(t, args, func(string) string { return "" }, &out, func() bool { return creates.Load() >= 2 }); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if creates.Load() < 2 || !summary.MatchString(out.String()) {
		t.Errorf("%d creates; output\n%s", creates.Load(), out.String())
	}
}

func TestLoadErrors(t *testing.T) {
	ts, _ := server(t, "tok")
	none := func(string) string { return "" }
	if err := run(context.Background(), []string{"-url", ts.URL, "-duration", "5m"}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the token: %v", err)
	}
	for _, args := range [][]string{
		{"-sessions", "0"}, {"-dim", "0"}, {"-lambda", "1"}, {"-algorithm", "bipop"}, {"-duration", "0s"}, {"extra"},
	} {
		if err := run(context.Background(), args, none, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// A create that the end of the run cut short after the server committed it
// leaves no session behind: at the end load sends it again with its
// Idempotency-Key, learns the session and deletes it. (The first create is
// committed, and its answer held until the client gives up.)
func TestLoadDeletesCutCreates(t *testing.T) {
	ts0, m := server(t, "")
	var creates atomic.Int32
	var committed atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/sessions" && creates.Add(1) == 1 {
			ts0.Config.Handler.ServeHTTP(httptest.NewRecorder(), r) // committed; the answer is lost
			committed.Store(true)
			<-r.Context().Done()
			return
		}
		ts0.Config.Handler.ServeHTTP(w, r)
	}))
	defer ts.Close()
	var out bytes.Buffer
	args := []string{"-url", ts.URL, "-dim", "2", "-duration", "5m"}
	if err := runUntil(t, args, func(string) string { return "" }, &out, committed.Load); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	list, err := m.List(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if creates.Load() != 2 || len(list) != 0 {
		t.Errorf("%d creates (want the cut one sent again), %d sessions left on the server", creates.Load(), len(list))
	}
}

// Over HTTPS, -cacert trusts a self-signed server; without it the run
// fails on the certificate.
func TestLoadOverTLS(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "l.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := &counting{h: httpapi.New(httpapi.Config{Manager: session.NewManager(st, session.Options{})})}
	ts := httptest.NewTLSServer(c)
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-url", ts.URL, "-dim", "2", "-duration", "5m"}
	var out bytes.Buffer
	if err := runUntil(t, append(args, "-cacert", ca), func(string) string { return "" }, &out, func() bool { return c.tells.Load() > 0 }); err != nil || !summary.MatchString(out.String()) {
		t.Errorf("with -cacert: %v\n%s", err, out.String())
	}
	if err := run(context.Background(), args, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without -cacert: %v", err)
	}
}

// With a list of servers each worker takes them in turn, or keeps to one
// with -sticky.
func TestLoadServerList(t *testing.T) {
	ts0, _ := server(t, "")
	var counts [3]atomic.Int64
	var urls []string
	for i := range counts {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counts[i].Add(1)
			ts0.Config.Handler.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL+"/")
	}
	for _, tc := range []struct {
		sticky bool
		enough func(n [3]int64) bool // when to end the run
		want   func(n [3]int64) bool
	}{
		// Sticky first: a request of the run before that a busy server
		// reads only after the counts were reset is one of that run's, and
		// in turn it could reach server 2 (seen once under load).
		{true, func(n [3]int64) bool { return n[0] >= 20 && n[1] >= 20 },
			func(n [3]int64) bool { return n[0] > 0 && n[1] > 0 && n[2] == 0 }}, // workers 0 and 1
		{false, func(n [3]int64) bool { return n[0]+n[1]+n[2] >= 60 }, func(n [3]int64) bool { // in turn: about a third each
			sum := n[0] + n[1] + n[2]
			return 4*n[0] > sum && 4*n[1] > sum && 4*n[2] > sum
		}},
	} {
		for i := range counts {
			counts[i].Store(0)
		}
		args := []string{"-url", strings.Join(urls, ","), "-sessions", "2", "-dim", "2", "-duration", "5m"}
		if tc.sticky {
			args = append(args, "-sticky")
		}
		load := func() [3]int64 { return [3]int64{counts[0].Load(), counts[1].Load(), counts[2].Load()} }
		var out bytes.Buffer
		if err := runUntil(t, args, func(string) string { return "" }, &out, func() bool { return tc.enough(load()) }); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if n := load(); !tc.want(n) {
			t.Errorf("sticky %v: requests per server %v", tc.sticky, n)
		}
	}
	if _, err := parseConfig([]string{"-url", "http://a,,http://b"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "empty server") {
		t.Errorf("-url with an empty server: %v", err)
	}
}
