// Command load drives a running selfcma server as its clients would and
// reports what it sustains: each of -sessions workers creates a session,
// then asks, evaluates the sphere and tells until -duration is over (a
// session that stops is replaced), over HTTP/1.1 with net/http and
// encoding/json, as a Go client would. It prints the generations per
// second of all workers together and the percentiles of one generation's
// time as a worker saw it (ask + tell, or one tell?next=true with -next).
//
//	go run ./cmd/server -db /tmp/load.db &
//	go run ./cmd/load -sessions 1 -dim 10 -duration 10s
//	go run ./cmd/load -sessions 64 -dim 10 -duration 10s
//	go run ./cmd/load -url https://127.0.0.1:8443 -cacert cert.pem
//	go run ./cmd/load -url http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083 -sessions 64
//
// With several servers (-url a comma-separated list, servers sharing one
// PostgreSQL database) each worker sends its requests to them in turn, as
// a round-robin load balancer would; with -sticky each worker keeps to one
// of them, as a balancer with session affinity would.
//
// The sessions it creates are deleted at the end unless -keep is set,
// those too whose create the end of the run cut short: every create
// carries an Idempotency-Key, sent again at the end to learn the session
// (if the cut create made one).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "load:", err)
		}
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	url       string   // as given
	urls      []string // the servers, each without a trailing slash
	sticky    bool
	token     string
	sessions  int
	dim       int
	lambda    int
	algorithm string
	duration  time.Duration
	next      bool
	keep      bool
	cacert    string
}

func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "the server, or a comma-separated list of servers that share one database, which each worker takes in turn")
	fs.BoolVar(&c.sticky, "sticky", false, "with several -url: each worker sends all its requests to one server (worker k to the k-th, in turn) instead of to each in turn")
	fs.StringVar(&c.token, "token", getenv("SELFCMA_TOKEN"), "bearer token (env SELFCMA_TOKEN)")
	fs.IntVar(&c.sessions, "sessions", 1, "sessions driven in parallel, one worker each")
	fs.IntVar(&c.dim, "dim", 10, "dimension n of the sessions")
	fs.IntVar(&c.lambda, "lambda", 0, "population size λ; 0 = the algorithm's default")
	fs.StringVar(&c.algorithm, "algorithm", "cma-es", "cma-es, self-cma-es or sep-cma-es")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to run")
	fs.BoolVar(&c.next, "next", false, "tell with ?next=true: one request per generation instead of two")
	fs.BoolVar(&c.keep, "keep", false, "keep the sessions instead of deleting them at the end")
	fs.StringVar(&c.cacert, "cacert", "", "for an https -url: PEM file of the certificates to trust (a self-signed server's) instead of the system's")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.sessions < 1:
		return c, fmt.Errorf("-sessions %d: want at least 1", c.sessions)
	case c.dim < 1:
		return c, fmt.Errorf("-dim %d: want at least 1", c.dim)
	case c.lambda != 0 && c.lambda < 2:
		return c, fmt.Errorf("-lambda %d: want 0 or at least 2", c.lambda)
	case c.algorithm != "cma-es" && c.algorithm != "self-cma-es" && c.algorithm != "sep-cma-es":
		return c, fmt.Errorf("-algorithm %q: want cma-es, self-cma-es or sep-cma-es", c.algorithm)
	case c.duration <= 0:
		return c, fmt.Errorf("-duration %v: want more than 0", c.duration)
	}
	for u := range strings.SplitSeq(c.url, ",") {
		if u = strings.TrimSuffix(strings.TrimSpace(u), "/"); u == "" {
			return c, fmt.Errorf("-url %q: an empty server in the list", c.url)
		}
		c.urls = append(c.urls, u)
	}
	return c, nil
}

// result is what the workers measured together.
type result struct {
	generations int
	elapsed     time.Duration
	times       []time.Duration // one per generation, sorted
	sessions    []string        // created, in order
	cut         []createReq     // creates whose answer the end of the run cut short
}

func (r result) percentile(p float64) time.Duration {
	if len(r.times) == 0 {
		return 0
	}
	return r.times[min(len(r.times)-1, int(p*float64(len(r.times))))]
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	tr, err := transport(c)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: tr}
	r, err := drive(ctx, c, hc)
	if !c.keep {
		cl := client{cfg: c, hc: hc}
		for _, cut := range r.cut { // made, perhaps: the key tells
			if cerr := cl.create(context.Background(), cut); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
		r.sessions = append(r.sessions, cl.created...)
		for _, id := range r.sessions {
			if derr := cl.do(context.Background(), http.MethodDelete, "/v1/sessions/"+id, nil, nil); derr != nil {
				err = errors.Join(err, derr)
			}
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d sessions of %s, n = %d: %d generations in %.1f s = %.0f generations/s\n",
		c.sessions, c.algorithm, c.dim, r.generations, r.elapsed.Seconds(), float64(r.generations)/r.elapsed.Seconds())
	how := "ask + tell"
	if c.next {
		how = "tell?next=true"
	}
	fmt.Fprintf(stdout, "one generation (%s): p50 %v, p90 %v, p99 %v, max %v\n", how,
		r.percentile(0.5).Round(time.Microsecond), r.percentile(0.9).Round(time.Microsecond),
		r.percentile(0.99).Round(time.Microsecond), r.percentile(1).Round(time.Microsecond))
	return nil
}

// transport is the workers' connections to the server: one each, kept
// open; with c.cacert, trusting its certificates.
func transport(c config) (*http.Transport, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: c.sessions, MaxConnsPerHost: c.sessions}
	if c.cacert != "" {
		pem, err := os.ReadFile(c.cacert)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-cacert %s: no certificate in it", c.cacert)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return tr, nil
}

// drive runs the workers for c.duration (or until ctx is done) over hc.
func drive(ctx context.Context, c config, hc *http.Client) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	errs := make([]error, c.sessions)
	var run [8]byte
	rand.Read(run[:])
	start := time.Now()
	for w := range c.sessions {
		wg.Go(func() {
			cl := &client{cfg: c, hc: hc, seed: w + 1, run: hex.EncodeToString(run[:]), turn: w}
			times, err := cl.loop(ctx)
			mu.Lock()
			defer mu.Unlock()
			res.times = append(res.times, times...)
			res.sessions = append(res.sessions, cl.created...)
			res.cut = append(res.cut, cl.cut...)
			errs[w] = err
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.generations = len(res.times)
	slices.Sort(res.times)
	return res, errors.Join(errs...)
}

// client is one worker: its session and its requests.
type client struct {
	cfg     config
	hc      *http.Client
	seed    int
	run     string      // this run's id, in the creates' keys
	created []string    // the sessions it created
	cut     []createReq // its creates that ctx's end cut short
	turn    int         // the server of its next request: cfg.urls[turn % len]
}

// base is the server of the next request, and moves on to the next
// (unless cfg.sticky).
func (cl *client) base() string {
	u := cl.cfg.urls[cl.turn%len(cl.cfg.urls)]
	if !cl.cfg.sticky {
		cl.turn++
	}
	return u
}

// createReq is a create: its body and its Idempotency-Key.
type createReq struct {
	body map[string]any
	key  string
}

type batch struct {
	Generation int         `json:"generation"`
	Candidates [][]float64 `json:"candidates"`
}

// loop creates a session and runs generations until ctx is done; it
// returns the time of each generation.
func (cl *client) loop(ctx context.Context) ([]time.Duration, error) {
	var times []time.Duration
	var pending *batch // the next batch, from tell?next=true
	id := ""
	for ctx.Err() == nil {
		if id == "" {
			req := cl.newCreate()
			if err := cl.create(ctx, req); err != nil {
				if ctx.Err() != nil {
					cl.cut = append(cl.cut, req)
				}
				return times, ctxErr(ctx, err)
			}
			id, pending = cl.created[len(cl.created)-1], nil
		}
		t := time.Now()
		b := pending
		if b == nil {
			b = new(batch)
			if err := cl.do(ctx, http.MethodGet, "/v1/sessions/"+id+"/ask", nil, b); err != nil {
				return times, ctxErr(ctx, err)
			}
		}
		fit := make([]float64, len(b.Candidates))
		for k, x := range b.Candidates {
			for _, v := range x {
				fit[k] += v * v
			}
		}
		path := "/v1/sessions/" + id + "/tell"
		if cl.cfg.next {
			path += "?next=true"
		}
		var ans struct {
			Status string `json:"status"`
			Next   *batch `json:"next"`
		}
		if err := cl.do(ctx, http.MethodPost, path, map[string]any{"generation": b.Generation, "fitness": fit}, &ans); err != nil {
			return times, ctxErr(ctx, err)
		}
		times = append(times, time.Since(t))
		pending = ans.Next
		if ans.Status != "running" {
			id = "" // stopped: a new session
		}
	}
	return times, nil
}

// ctxErr drops the error of a request that the end of the run cut short.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// newCreate is the worker's next create.
func (cl *client) newCreate() createReq {
	x0 := make([]float64, cl.cfg.dim)
	for i := range x0 {
		x0[i] = 1
	}
	body := map[string]any{"x0": x0, "sigma0": 0.5, "algorithm": cl.cfg.algorithm, "seed": cl.seed, "name": "load"}
	if cl.cfg.lambda > 0 {
		body["population_size"] = cl.cfg.lambda
	}
	req := createReq{body: body, key: fmt.Sprintf("load-%s-%d", cl.run, cl.seed)}
	cl.seed += 1 << 20 // the next session of this worker runs another stream
	return req
}

// create sends req and adds the session it answers to cl.created.
func (cl *client) create(ctx context.Context, req createReq) error {
	var s struct {
		ID string `json:"id"`
	}
	if err := cl.send(ctx, http.MethodPost, "/v1/sessions", req.body, &s, req.key); err != nil {
		return err
	}
	cl.created = append(cl.created, s.ID)
	return nil
}

// do sends one request and decodes a 2xx answer into out (if not nil).
func (cl *client) do(ctx context.Context, method, path string, body, out any) error {
	return cl.send(ctx, method, path, body, out, "")
}

// send is do with an Idempotency-Key (none if key is empty).
func (cl *client) send(ctx context.Context, method, path string, body, out any, key string) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base()+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+cl.cfg.token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
