package httpapi

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/store/postgres"
)

// TestMain stops the PostgreSQL cluster that the PostgreSQL benchmarks
// start (none otherwise).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// storeCases are the generations the store benchmarks compare: n = 10
// (CMA-ES, default λ) and n = 100 (self-CMA-ES, λ = 100).
var storeCases = []benchCase{
	{name: "cma-es/n=10", alg: "cma-es", n: 10},
	{name: "self-cma-es/n=100,lambda=100", alg: "self-cma-es", n: 100, lambda: 100},
}

// postgresStore is a PostgreSQL store on a new database of the test
// cluster, closed at the end of b.
func postgresStore(b *testing.B) *postgres.Store {
	ps, err := postgres.Open(context.Background(), pgtest.DB(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ps.Close() })
	return ps
}

// BenchmarkManagerGenerationStores is BenchmarkManagerGeneration on bbolt
// and on PostgreSQL (a local cluster, over TCP on 127.0.0.1), in one run
// so that the two compare: one durable generation (ask, evaluate, tell,
// the tell's commit durable) at n = 10 (CMA-ES, default λ) and n = 100
// (self-CMA-ES, λ = 100). It runs a generation the two ways a client can:
// visit=ask,tell is Ask then Tell, two visits to the store (Ask checks the
// cached session's version); visit=tell-next is TellAsk, the tell that
// hands back the next batch (tell?next=true), one visit.
func BenchmarkManagerGenerationStores(b *testing.B) {
	ctx := context.Background()
	for _, bc := range storeCases {
		for _, kind := range []string{"bbolt", "postgres"} {
			for _, visit := range []string{"ask,tell", "tell-next"} {
				b.Run(bc.name+"/store="+kind+"/visit="+visit, func(b *testing.B) {
					m := session.NewManager(benchStore(b, kind), session.Options{})
					p, err := decodeCreate(bytes.NewReader(createBody(b, bc, 1)))
					if err != nil {
						b.Fatal(err)
					}
					s, err := m.Create(ctx, p)
					if err != nil {
						b.Fatal(err)
					}
					var next *session.Batch
					b.ReportAllocs()
					for b.Loop() {
						if next == nil || visit == "ask,tell" {
							batch, ok := askOrReplace(b, m, p, &s)
							if !ok {
								continue
							}
							next = &batch
						}
						f := make([]float64, len(next.Candidates))
						for i, x := range next.Candidates {
							f[i] = sphere(x)
						}
						tp := session.TellParams{Generation: next.Generation, Fitness: f}
						if visit == "ask,tell" {
							_, err = m.Tell(ctx, s.ID, tp)
						} else {
							_, next, err = m.TellAsk(ctx, s.ID, tp) // nil once stopped: ask again
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// benchStore is a new store of the kind ("bbolt" or "postgres"), closed at
// the end of b.
func benchStore(b *testing.B, kind string) session.Store {
	if kind == "postgres" {
		return postgresStore(b)
	}
	bs, err := bolt.Open(filepath.Join(b.TempDir(), "b.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bs.Close() })
	return bs
}

// BenchmarkGenerationStores is BenchmarkGeneration (over HTTP, the lean
// client with tell?next=true: one request per generation, as a client
// sees it) on bbolt and on PostgreSQL, in one run.
func BenchmarkGenerationStores(b *testing.B) {
	for _, bc := range storeCases {
		for _, kind := range []string{"bbolt", "postgres"} {
			b.Run(bc.name+"/store="+kind, func(b *testing.B) {
				o := serverOpts{sync: true}
				if kind == "postgres" {
					ps := postgresStore(b)
					o.wrapStore = func(session.Store) session.Store { return ps }
				}
				ts := newTestServer(b, o)
				c := dialRaw(b, ts.URL, createBody(b, bc, 1))
				c.next = true
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
