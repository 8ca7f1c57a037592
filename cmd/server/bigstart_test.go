package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestStartCheckCost measures what the check at start costs on a file of
// about SELFCMA_START_CHECK_MB megabytes (unset: skipped; it takes a while):
// it builds the file with many sessions (the Manager on the store, without
// fsync), then times the real server from its start to its first /healthz
// answer, -check and -salvage (of every session, the file being sound),
// and logs them with the start's own time. Run as
//
//	SELFCMA_START_CHECK_MB=100 go test -run TestStartCheckCost -v ./cmd/server/
func TestStartCheckCost(t *testing.T) {
	mb, _ := strconv.Atoi(os.Getenv("SELFCMA_START_CHECK_MB"))
	if mb <= 0 {
		t.Skip("set SELFCMA_START_CHECK_MB=100 to measure the start check on a 100 MB file")
	}
	bin := serverBinary(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "big.db")
	st, err := bolt.Open(db, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	m := session.NewManager(st, session.Options{})
	x0 := make([]float64, 30)
	for i := range x0 {
		x0[i] = 1
	}
	sessions, gens := 0, 0
	for {
		if fi, err := os.Stat(db); err != nil || fi.Size() >= int64(mb)<<20 {
			break
		}
		seed := uint64(sessions)
		s, err := m.Create(ctx, session.CreateParams{X0: x0, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		sessions++
		for range 20 {
			b, err := m.Ask(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			f := make([]float64, len(b.Candidates))
			for i, x := range b.Candidates {
				for _, v := range x {
					f[i] += v * v
				}
			}
			if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
				t.Fatal(err)
			}
			gens++
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(db)
	t.Logf("the file: %.1f MB, %d sessions, %d generations told", float64(fi.Size())/(1<<20), sessions, gens)

	start := time.Now()
	p := startServer(t, bin, db)
	must(t, "GET", p.base+"/healthz", nil, 200)
	served := time.Since(start)
	p.stop(t)
	start = time.Now()
	out, err := exec.Command(bin, "-check", "-db", db).CombinedOutput()
	if err != nil {
		t.Fatalf("-check: %v\n%s", err, out)
	}
	checked := time.Since(start)
	start = time.Now()
	if out, err := exec.Command(bin, "-salvage", "-db", db, "-out", db+".salvaged").CombinedOutput(); err != nil {
		t.Fatalf("-salvage: %v\n%s", err, out)
	}
	salvaged := time.Since(start)
	// The check's own time, from the listening line of a second start.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", db)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := stdout.Read(buf)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	took := regexp.MustCompile(`check_took=(\S+)`).FindSubmatch(buf[:n])
	t.Logf("start to /healthz: %v; -check: %v; the start's open and check: %s; -salvage of the whole file: %v",
		served.Round(time.Millisecond), checked.Round(time.Millisecond), fmt.Sprint(string(took[1])), salvaged.Round(time.Millisecond))
}
