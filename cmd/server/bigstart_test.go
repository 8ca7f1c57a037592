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

// BenchmarkStartCheck measures what the check at start costs on a file of
// about SELFCMA_START_CHECK_MB megabytes (100 unless set; it takes a
// while): it builds the file with many sessions (the Manager on the store,
// without fsync), then times the real server from its start to its first
// /healthz answer, -check and -salvage (of every session, the file being
// sound), and logs them with the start's own time. A measurement, not a
// test (it was TestStartCheckCost, skipped unless asked for). Run as
//
//	go test -run '^$' -bench BenchmarkStartCheck -benchtime 1x -v ./cmd/server/
func BenchmarkStartCheck(b *testing.B) {
	mb, _ := strconv.Atoi(os.Getenv("SELFCMA_START_CHECK_MB"))
	if mb <= 0 {
		mb = 100
	}
	bin := serverBinary(b)
	ctx := context.Background()
	db := filepath.Join(b.TempDir(), "big.db")
	st, err := bolt.Open(db, &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
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
			b.Fatal(err)
		}
		sessions++
		for range 20 {
			bt, err := m.Ask(ctx, s.ID)
			if err != nil {
				b.Fatal(err)
			}
			f := make([]float64, len(bt.Candidates))
			for i, x := range bt.Candidates {
				for _, v := range x {
					f[i] += v * v
				}
			}
			if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: bt.Generation, Fitness: f}); err != nil {
				b.Fatal(err)
			}
			gens++
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(db)
	b.Logf("the file: %.1f MB, %d sessions, %d generations told", float64(fi.Size())/(1<<20), sessions, gens)

	start := time.Now()
	p := startServer(b, bin, db)
	must(b, "GET", p.base+"/healthz", nil, 200)
	served := time.Since(start)
	p.stop(b)
	start = time.Now()
	out, err := exec.Command(bin, "-check", "-db", db).CombinedOutput()
	if err != nil {
		b.Fatalf("-check: %v\n%s", err, out)
	}
	checked := time.Since(start)
	start = time.Now()
	if out, err := exec.Command(bin, "-salvage", "-db", db, "-out", db+".salvaged").CombinedOutput(); err != nil {
		b.Fatalf("-salvage: %v\n%s", err, out)
	}
	salvaged := time.Since(start)
	// The check's own time, from the listening line of a second start.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", db)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := stdout.Read(buf)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	took := regexp.MustCompile(`check_took=(\S+)`).FindSubmatch(buf[:n])
	b.Logf("start to /healthz: %v; -check: %v; the start's open and check: %s; -salvage of the whole file: %v",
		served.Round(time.Millisecond), checked.Round(time.Millisecond), fmt.Sprint(string(took[1])), salvaged.Round(time.Millisecond))
}
