package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/selfcma/selfcma/internal/pgtest"
)

// -check of a PostgreSQL database in use (as the docs pair it with
// pg_dump) reads one snapshot: under four sessions told without pause it
// reports no problem, run after run. (Each table in a statement of its
// own, it reported histories ahead of their sessions.)
func TestCheckPostgresInUse(t *testing.T) {
	bin := serverBinary(t)
	db := pgtest.DB(t)
	p, err := launch(bin, "-addr", "127.0.0.1:0", "-db", db)
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var tells atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			for !stop.Load() {
				var s e2eSession
				code, b, err := send("POST", p.base+"/v1/sessions", createBody([]string{"cma-es", "self-cma-es"}[w%2]))
				if err != nil || code != 201 {
					t.Errorf("create: %d %s %v", code, b, err)
					return
				}
				json.Unmarshal(b, &s)
				for s.Status == "running" && !stop.Load() {
					var bt e2eBatch
					_, b, _ := send("GET", p.base+"/v1/sessions/"+s.ID+"/ask", nil)
					json.Unmarshal(b, &bt)
					code, b, err := send("POST", p.base+"/v1/sessions/"+s.ID+"/tell", tellOf(bt))
					if err != nil || code != 200 {
						t.Errorf("tell: %d %s %v", code, b, err)
						return
					}
					json.Unmarshal(b, &s)
					tells.Add(1)
				}
			}
		})
	}
	for run := range 6 {
		before := tells.Load()
		out, err := exec.Command(bin, "-check", "-db", db).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "problems 0\n") {
			t.Errorf("-check %d under load: %v\n%s", run, err, out)
		}
		if tells.Load() == before {
			t.Logf("-check %d: no tell during it", run)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d tells during 6 checks", tells.Load())
}
