package httpapi

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// BenchmarkWorkerEvaluation is a worker's evaluation over HTTP, as
// client.work makes it: claim one candidate (POST claim?worker=), evaluate
// the sphere, tell its value (a partial tell), two requests on one
// keep-alive connection, fsync on (bbolt). The claim's lease waits for no
// fsync (the store holds leases in memory), the tell's value for one
// (SELFCMA_BENCH_NOSYNC=1 leaves it out, to see what the rest costs).
// ops/s = 1e9 / ns/op is the evaluations a second of one worker.
func BenchmarkWorkerEvaluation(b *testing.B) {
	for _, bc := range benchCases[:2] { // n = 10
		b.Run(bc.name, func(b *testing.B) {
			ts := newTestServer(b, serverOpts{sync: os.Getenv("SELFCMA_BENCH_NOSYNC") == ""})
			c := &benchClient{tb: b, hc: ts.Client(), url: ts.URL, create: createBody(b, bc, 1)}
			c.newSession()
			var cl struct {
				Generation int       `json:"generation"`
				Index      *int      `json:"index"`
				X          []float64 `json:"x"`
			}
			var s struct {
				Status string `json:"status"`
			}
			b.ReportAllocs()
			for b.Loop() {
				cl.Index = nil
				if err := json.Unmarshal(c.roundTrip("POST", "/v1/sessions/"+c.id+"/claim?worker=w", nil), &cl); err != nil || cl.Index == nil {
					b.Fatalf("claim: %+v %v", cl, err)
				}
				tell := fmt.Appendf(nil, `{"generation":%d,"indices":[%d],"fitness":[%v]}`, cl.Generation, *cl.Index, sphere(cl.X))
				json.Unmarshal(c.roundTrip("POST", "/v1/sessions/"+c.id+"/tell", tell), &s)
				if s.Status != "running" {
					b.StopTimer()
					c.newSession()
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkWorkerTellClaim is BenchmarkWorkerEvaluation as client.work
// makes it now: each tell claims the next candidate (tell?claim=true),
// one request an evaluation.
func BenchmarkWorkerTellClaim(b *testing.B) {
	for _, bc := range benchCases[:2] { // n = 10
		b.Run(bc.name, func(b *testing.B) {
			ts := newTestServer(b, serverOpts{sync: os.Getenv("SELFCMA_BENCH_NOSYNC") == ""})
			c := &benchClient{tb: b, hc: ts.Client(), url: ts.URL, create: createBody(b, bc, 1)}
			type claim struct {
				Generation int       `json:"generation"`
				Index      *int      `json:"index"`
				X          []float64 `json:"x"`
			}
			var a struct {
				Status string `json:"status"`
				Claim  *claim `json:"claim"`
			}
			b.ReportAllocs()
			for b.Loop() {
				if a.Claim == nil || a.Claim.Index == nil { // the session stopped
					b.StopTimer()
					c.newSession()
					a.Claim = new(claim)
					if err := json.Unmarshal(c.roundTrip("POST", "/v1/sessions/"+c.id+"/claim?worker=w", nil), a.Claim); err != nil || a.Claim.Index == nil {
						b.Fatalf("claim: %+v %v", a.Claim, err)
					}
					b.StartTimer()
				}
				cl := a.Claim
				tell := fmt.Appendf(nil, `{"generation":%d,"indices":[%d],"fitness":[%v]}`, cl.Generation, *cl.Index, sphere(cl.X))
				a.Claim = nil
				if err := json.Unmarshal(c.roundTrip("POST", "/v1/sessions/"+c.id+"/tell?claim=true&worker=w", tell), &a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
