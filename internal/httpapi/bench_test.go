package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// benchClient is a bare HTTP client of one session: ask, evaluate the
// sphere, tell, as a remote client would, without the spec checks.
type benchClient struct {
	tb     testing.TB
	hc     *http.Client
	url    string
	create []byte
	id     string
}

func (c *benchClient) roundTrip(method, path string, body []byte) []byte {
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(body))
	if err != nil {
		c.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.tb.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode >= 300 {
		c.tb.Fatalf("%s %s: %d %s %v", method, path, resp.StatusCode, b, err)
	}
	return b
}

func (c *benchClient) newSession() {
	var s sessionView
	json.Unmarshal(c.roundTrip("POST", "/v1/sessions", c.create), &s)
	c.id = s.ID
}

// generation runs one ask and tell; it reports whether the session runs on.
func (c *benchClient) generation() bool {
	var b batchView
	if err := json.Unmarshal(c.roundTrip("GET", "/v1/sessions/"+c.id+"/ask", nil), &b); err != nil {
		c.tb.Fatal(err)
	}
	tell, _ := json.Marshal(sphereTell(b))
	var s struct {
		Status string `json:"status"`
	}
	json.Unmarshal(c.roundTrip("POST", "/v1/sessions/"+c.id+"/tell", tell), &s)
	return s.Status == "running"
}

type benchCase struct {
	name      string
	alg       string
	n, lambda int
}

var benchCases = []benchCase{
	{name: "cma-es/n=10", alg: "cma-es", n: 10},
	{name: "self-cma-es/n=10", alg: "self-cma-es", n: 10},
	{name: "self-cma-es/n=100,lambda=100", alg: "self-cma-es", n: 100, lambda: 100},
}

func createBody(tb testing.TB, bc benchCase, seed int) []byte {
	x0 := make([]float64, bc.n)
	for i := range x0 {
		x0[i] = 1
	}
	b, err := json.Marshal(map[string]any{"x0": x0, "sigma0": 0.5, "algorithm": bc.alg, "population_size": bc.lambda, "seed": seed})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// genClient drives one session: benchClient (net/http and encoding/json)
// or rawClient (hand-written HTTP/1.1 and parsing), the latter also with
// tell?next=true (one request per generation).
type genClient interface {
	newSession()
	generation() bool
}

// clientKinds are the two benchmark clients, by the name the benchmarks
// report.
var clientKinds = []struct {
	name string
	dial func(tb testing.TB, ts *testServer, create []byte) genClient
}{
	{"client=net-http", func(tb testing.TB, ts *testServer, create []byte) genClient {
		return &benchClient{tb: tb, hc: ts.Client(), url: ts.URL, create: create}
	}},
	{"client=raw", func(tb testing.TB, ts *testServer, create []byte) genClient {
		return dialRaw(tb, ts.URL, create)
	}},
	{"client=raw-next", func(tb testing.TB, ts *testServer, create []byte) genClient {
		c := dialRaw(tb, ts.URL, create)
		c.next = true
		return c
	}},
}

// BenchmarkGeneration is one generation over HTTP: ask, evaluate, tell, with
// the fsync of the tell's commit (SELFCMA_BENCH_NOSYNC=1 leaves it out, to
// see what the rest costs). A session that stops is replaced, off the clock.
func BenchmarkGeneration(b *testing.B) {
	for _, bc := range benchCases {
		for _, ck := range clientKinds {
			b.Run(bc.name+"/"+ck.name, func(b *testing.B) {
				ts := newTestServer(b, serverOpts{sync: os.Getenv("SELFCMA_BENCH_NOSYNC") == ""})
				c := ck.dial(b, ts, createBody(b, bc, 1))
				c.newSession()
				b.ReportAllocs()
				for b.Loop() {
					if !c.generation() {
						b.StopTimer()
						c.newSession()
						b.StartTimer()
					}
				}
			})
		}
	}
}

// BenchmarkAlgorithm is the algorithm alone on the work BenchmarkGeneration
// gives it (the same start, seed and sphere): ask, evaluate, tell, in
// process, without encoding or storage. It is the "algorithm time" the HTTP
// generation is compared with; the engines' own benchmarks tell random
// values instead, which makes C, and so the eigendecomposition, different.
func BenchmarkAlgorithm(b *testing.B) {
	type engine interface {
		Ask() [][]float64
		Tell([]float64) error
		Status() cmaes.Status
	}
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			x0 := make([]float64, bc.n)
			for i := range x0 {
				x0[i] = 1
			}
			cfg := cmaes.Config{X0: x0, Sigma0: 0.5, Lambda: bc.lambda, Seed: 1}
			start := func() engine {
				if bc.alg == "cma-es" {
					e, err := cmaes.New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					return plainEngine{e}
				}
				e, err := selfcma.New(selfcma.Config{CMA: cfg})
				if err != nil {
					b.Fatal(err)
				}
				return selfEngine{e}
			}
			e := start()
			b.ReportAllocs()
			for b.Loop() {
				if e.Status().Stop != nil {
					b.StopTimer()
					e = start()
					b.StartTimer()
				}
				X := e.Ask()
				f := make([]float64, len(X))
				for i, x := range X {
					f[i] = sphere(x)
				}
				if err := e.Tell(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type plainEngine struct{ *cmaes.ES }

func (e plainEngine) Tell(f []float64) error { _, err := e.ES.Tell(f); return err }

type selfEngine struct{ *selfcma.ES }

func (e selfEngine) Tell(f []float64) error { _, err := e.ES.Tell(f); return err }

// benchSession opens a store (fsync on) in a temporary file, a Manager
// over it and a session of bc; it returns them with the create parameters.
func benchSession(b *testing.B, bc benchCase) (*bolt.Store, *session.Manager, session.CreateParams, session.Session) {
	st, err := bolt.Open(filepath.Join(b.TempDir(), "b.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m := session.NewManager(st, session.Options{})
	p, err := decodeCreate(bytes.NewReader(createBody(b, bc, 1)))
	if err != nil {
		b.Fatal(err)
	}
	s, err := m.Create(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	return st, m, p, s
}

// BenchmarkManagerGeneration is one generation through session.Manager on
// the same store (fsync on), without HTTP: what BenchmarkGeneration costs
// beyond it is the HTTP exchange and JSON.
func BenchmarkManagerGeneration(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			_, m, p, s := benchSession(b, bc)
			b.ReportAllocs()
			for b.Loop() {
				batch, ok := askOrReplace(b, m, p, &s)
				if !ok {
					continue
				}
				f := make([]float64, len(batch.Candidates))
				for i, x := range batch.Candidates {
					f[i] = sphere(x)
				}
				if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: batch.Generation, Fitness: f}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// askOrReplace asks *s's pending batch; once *s has stopped it creates a
// session of p in its place, off the clock, and reports false.
func askOrReplace(b *testing.B, m *session.Manager, p session.CreateParams, s *session.Session) (session.Batch, bool) {
	ctx := context.Background()
	batch, err := m.Ask(ctx, s.ID)
	if err == nil {
		return batch, true
	}
	b.StopTimer()
	if *s, err = m.Create(ctx, p); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	return session.Batch{}, false
}

// BenchmarkManagerPartialTell is one candidate's value told as a part
// (fsync on), the way workers tell: an op is one part, and every λ-th part
// completes a generation and applies it.
func BenchmarkManagerPartialTell(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			_, m, p, s := benchSession(b, bc)
			b.ReportAllocs()
			var batch session.Batch
			next := 0
			for b.Loop() {
				if next == len(batch.Candidates) {
					var ok bool
					batch, ok = askOrReplace(b, m, p, &s) // empty when replaced
					next = 0
					if !ok {
						continue
					}
				}
				tp := session.TellParams{Generation: batch.Generation, Indices: []int{next}, Fitness: []float64{sphere(batch.Candidates[next])}}
				if _, err := m.Tell(ctx, s.ID, tp); err != nil {
					b.Fatal(err)
				}
				next++
			}
		})
	}
}

// BenchmarkManagerClaim is a worker's claim of a candidate and the
// partial tell of its value (fsync on): since the leases are in the store,
// a claim is a commit of its own, as the tell is.
func BenchmarkManagerClaim(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			_, m, p, s := benchSession(b, bc)
			b.ReportAllocs()
			for b.Loop() {
				c, err := m.Claim(ctx, s.ID, time.Hour, "worker")
				if session.ErrorCode(err) == session.CodeStopped {
					b.StopTimer()
					if s, err = m.Create(ctx, p); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					continue
				}
				if err != nil || c.Index < 0 {
					b.Fatalf("claim: %+v, %v", c, err)
				}
				tp := session.TellParams{Generation: c.Generation, Indices: []int{c.Index}, Fitness: []float64{sphere(c.X)}}
				if _, err := m.Tell(ctx, s.ID, tp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCommit is the bare bbolt commit (fsync on) of a session record
// and history entry of the sizes BenchmarkGeneration writes, back to back.
func BenchmarkCommit(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			st, rec, hist := commitRecord(b, bc)
			b.SetBytes(int64(len(rec.Meta) + len(rec.State) + len(hist.Data)))
			commitLoop(b, st, rec, hist)
		})
	}
}

// commitLoop commits rec with a history entry back to back, b.Loop times.
func commitLoop(b *testing.B, st *bolt.Store, rec session.Record, hist *session.HistoryEntry) {
	b.ReportAllocs()
	var err error
	for b.Loop() {
		if rec.Version, err = st.Put(context.Background(), rec, hist); err != nil {
			b.Fatal(err)
		}
		hist.Generation++
	}
}

// BenchmarkCommitAmongSessions is BenchmarkCommit with other sessions'
// records of the same size in the file, their ids next to the written
// one's: the commit writes the pages of its own record however
// many neighbours it has (store layout 4; with layout 3 it rewrote up to
// three of them too).
func BenchmarkCommitAmongSessions(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchCases {
		for _, others := range []int{0, 3, 20} {
			b.Run(fmt.Sprintf("%s/others=%d", bc.name, others), func(b *testing.B) {
				st, rec, hist := commitRecord(b, bc)
				for i := range others {
					o := rec
					o.ID, o.Version = fmt.Sprintf("%s-%03d", rec.ID, i), 0 // next to rec's
					if _, err := st.Put(ctx, o, nil); err != nil {
						b.Fatal(err)
					}
				}
				commitLoop(b, st, rec, hist)
			})
		}
	}
}

// BenchmarkCommitOverHTTP is BenchmarkCommit behind a bare net/http
// handler, driven by the raw client: a request of a tell's size, the
// commit, an answer of a batch's size, with no algorithm, no JSON and no
// session logic. What it adds to BenchmarkCommit is the least any
// generation over HTTP costs on the machine beyond the commit (the
// exchange and the processors' wake-ups): the floor of
// BenchmarkGeneration.
func BenchmarkCommitOverHTTP(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			st, rec, hist := commitRecord(b, bc)
			lambda := bc.lambda
			switch {
			case lambda > 0:
			case bc.alg == "cma-es":
				lambda = cmaes.DefaultLambda(bc.n)
			default:
				lambda = selfcma.DefaultLambda(bc.n)
			}
			answer := bytes.Repeat([]byte("0.123456789012345,"), lambda*bc.n)
			var err error
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.Copy(io.Discard, r.Body); err != nil {
					b.Error(err)
				}
				if rec.Version, err = st.Put(ctx, rec, hist); err != nil {
					b.Error(err)
				}
				hist.Generation++
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(len(answer))) // as the server's answers
				w.Write(answer)
			}))
			defer srv.Close()
			c := dialRaw(b, srv.URL, nil)
			tell := bytes.Repeat([]byte("0.123456789012345,"), lambda)
			for b.Loop() {
				if status, _ := c.roundTrip("POST", "/", tell); status != http.StatusOK {
					b.Fatal(status)
				}
			}
		})
	}
}

// BenchmarkCommitAfterIdle is BenchmarkCommit with a sleep of 300 µs
// (about 1 ms on the build machine's timers) before each commit: as in a
// generation over HTTP, where the disk and the processors idle while the
// answer travels and the client evaluates, the commit no longer follows
// the last one at once. µs/commit is the figure (ns/op includes the sleep).
func BenchmarkCommitAfterIdle(b *testing.B) {
	ctx := context.Background()
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			st, rec, hist := commitRecord(b, bc)
			var (
				err    error
				commit time.Duration
			)
			for b.Loop() {
				time.Sleep(300 * time.Microsecond)
				t := time.Now()
				if rec.Version, err = st.Put(ctx, rec, hist); err != nil {
					b.Fatal(err)
				}
				commit += time.Since(t)
				hist.Generation++
			}
			b.ReportMetric(float64(commit.Nanoseconds())/1e3/float64(b.N), "µs/commit")
		})
	}
}

// commitRecord returns a store (fsync on) with the record of a session of
// bc a few generations in, when a self-CMA-ES state carries the step its
// next generation replays (twice the size of a new session's), and a
// history entry of the size a generation writes.
func commitRecord(b *testing.B, bc benchCase) (*bolt.Store, session.Record, *session.HistoryEntry) {
	ctx := context.Background()
	st, m, _, s := benchSession(b, bc)
	for range 3 {
		batch, err := m.Ask(ctx, s.ID)
		if err != nil {
			b.Fatal(err)
		}
		f := make([]float64, len(batch.Candidates))
		for i, x := range batch.Candidates {
			f[i] = sphere(x)
		}
		if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: batch.Generation, Fitness: f}); err != nil {
			b.Fatal(err)
		}
	}
	rec, err := st.Get(ctx, s.ID)
	if err != nil {
		b.Fatal(err)
	}
	return st, rec, &session.HistoryEntry{Generation: 1 << 20, Data: bytes.Repeat([]byte("x"), 160)} // 130-160 bytes
}

// BenchmarkParallelSessions is the aggregate throughput of 64 clients, each
// driving its own session over HTTP (fsync on); gens/s is the figure.
func BenchmarkParallelSessions(b *testing.B) {
	for _, bc := range benchCases[:2] {
		for _, ck := range clientKinds {
			b.Run(bc.name+"/sessions=64/"+ck.name, func(b *testing.B) {
				ts := newTestServer(b, serverOpts{sync: true})
				ts.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = 64
				clients := make(chan genClient, 64)
				for i := range 64 {
					c := ck.dial(b, ts, createBody(b, bc, i))
					c.newSession()
					clients <- c
				}
				b.SetParallelism((64 + 1) / 2) // 64 goroutines on 2 cores; more on more
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					var c genClient
					select {
					case c = <-clients:
					default:
						c = ck.dial(b, ts, createBody(b, bc, 1000))
						c.newSession()
					}
					for pb.Next() {
						if !c.generation() {
							c.newSession()
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gens/s")
			})
		}
	}
}
