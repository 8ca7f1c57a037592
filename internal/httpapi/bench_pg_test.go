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
// (self-CMA-ES, λ = 100).
func BenchmarkManagerGenerationStores(b *testing.B) {
	ctx := context.Background()
	for _, bc := range storeCases {
		for _, kind := range []string{"bbolt", "postgres"} {
			b.Run(bc.name+"/store="+kind, func(b *testing.B) {
				var st session.Store
				if kind == "bbolt" {
					bs, err := bolt.Open(filepath.Join(b.TempDir(), "b.db"), nil)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { bs.Close() })
					st = bs
				} else {
					st = postgresStore(b)
				}
				m := session.NewManager(st, session.Options{})
				p, err := decodeCreate(bytes.NewReader(createBody(b, bc, 1)))
				if err != nil {
					b.Fatal(err)
				}
				s, err := m.Create(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
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
