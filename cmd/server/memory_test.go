package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestMemoryBounded measures the peak resident memory (VmHWM) of the
// server binary under two loads, each on a server of its own:
//
//   - 100 clients tell 8 MiB bodies at once: under 1 GB;
//   - 100 clients create sessions (n = 100) with 8 MiB bodies at once:
//     under 1 GB;
//   - 10 clients read the whole history of a session of 30,000
//     generations at once: under 200 MB;
//   - 6 clients tell 6 self-CMA-ES sessions of n = 2000 at once, the
//     server's -cache-bytes 256 MiB: under that and 1 GB.
//
// It moves about a gigabyte and builds a long session first (about 5 s
// here); -short skips it, except in CI:
//
//	go test -run TestMemoryBounded -v ./cmd/server/
func TestMemoryBounded(t *testing.T) {
	ci := os.Getenv("CI") != ""
	if testing.Short() && !ci {
		t.Skip("SKIP: -short: the memory test moves about a gigabyte")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		if ci {
			t.Fatal("no /proc: cannot read the server's peak memory, and CI must measure it")
		}
		t.Skip("SKIP: no /proc: cannot read a process's peak memory")
	}
	bin := serverBinary(t)

	t.Run("tells of 8 MiB", func(t *testing.T) {
		p := startServer(t, bin, filepath.Join(t.TempDir(), "tells.db"))
		defer p.stop(t)
		const lambda = 100000
		code, body := request(t, "POST", p.base+"/v1/sessions", "", `{"x0": [0], "sigma0": 1, "algorithm": "cma-es", "population_size": `+strconv.Itoa(lambda)+`}`)
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		id := jsonField(t, body, "id")
		tell := tellBody(lambda, 8<<20)
		status, first := postAtOnce(p.base+"/v1/sessions/"+id+"/tell", tell, 100)
		hwm := peakRSS(t, p.cmd.Process.Pid)
		t.Logf("100 concurrent tells of %d bytes: statuses %v; server VmHWM %d MB", len(tell), status, hwm>>20)
		// 200: the tell, or a retry of it (the same values); 503: over
		// the limit of the bytes under way.
		if status[http.StatusOK] < 1 || status[http.StatusOK]+status[http.StatusServiceUnavailable] != 100 {
			t.Errorf("statuses %v, want 200 for the tell and its retries, 503 for the others; the first answers: %v", status, first)
		}
		if hwm >= 1<<30 {
			t.Errorf("peak RSS %d MB, want under 1 GB", hwm>>20)
		}
	})

	t.Run("creates of 8 MiB", func(t *testing.T) {
		// The state of a session takes memory too, what its engine says it holds while
		// it is built and a third of it in the Manager's cache: creates of
		// the largest dimension (SELFCMA_MEMORY_CREATE_DIM=2000) measure
		// that rather than the bodies.
		creates, dim := 100, 100
		if v, err := strconv.Atoi(os.Getenv("SELFCMA_MEMORY_CREATES")); err == nil {
			creates = v
		}
		if v, err := strconv.Atoi(os.Getenv("SELFCMA_MEMORY_CREATE_DIM")); err == nil {
			dim = v
		}
		p := startServer(t, bin, filepath.Join(t.TempDir(), "creates.db"))
		defer p.stop(t)
		body := []byte(`{"x0": [` + strings.Repeat("0.5, ", dim-1) + `0.5], "sigma0": 1, "algorithm": "cma-es"`)
		body = append(append(body, bytes.Repeat([]byte{' '}, 8<<20-len(body)-1)...), '}')
		status, first := postAtOnce(p.base+"/v1/sessions", body, creates)
		hwm := peakRSS(t, p.cmd.Process.Pid)
		t.Logf("%d concurrent creates of %d bytes, dimension %d: statuses %v; server VmHWM %d MB", creates, len(body), dim, status, hwm>>20)
		if status[http.StatusCreated] < 1 || status[http.StatusCreated]+status[http.StatusServiceUnavailable] != creates {
			t.Errorf("statuses %v, want 201 or 503; the first answers: %v", status, first)
		}
		if hwm >= 1<<30 {
			t.Errorf("peak RSS %d MB, want under 1 GB", hwm>>20)
		}
	})

	t.Run("tells of six self-CMA-ES sessions at n = 2000", func(t *testing.T) {
		// Each session holds about 400 MB decoded (selfcma.HeldBytes),
		// more than the cache's bound: the six tells take turns (the
		// cache reserves a session's bytes before it decodes it), so the
		// peak is the bound plus one session and the collector's headroom,
		// not six sessions (4.2 GB before). Each tell decodes C's
		// eigendecomposition and makes one: about a minute in all here.
		const n, sessions, cacheBytes = 2000, 6, 256 << 20
		const slack = 1 << 30 // one session (≤ 0.5 GB) and the GC's headroom
		db := filepath.Join(t.TempDir(), "large.db")
		p, err := launch(bin, "-addr", "127.0.0.1:0", "-db", db, "-cache-bytes", strconv.Itoa(cacheBytes))
		if err != nil {
			t.Fatal(err)
		}
		defer p.stop(t)
		create := `{"x0": [` + strings.Repeat("0.5, ", n-1) + `0.5], "sigma0": 1, "algorithm": "self-cma-es"}`
		ids := make([]string, sessions)
		for i := range ids {
			code, body := request(t, "POST", p.base+"/v1/sessions", "", create)
			if code != http.StatusCreated {
				t.Fatalf("create %d: %d %s", i, code, body)
			}
			ids[i] = jsonField(t, body, "id")
		}
		lambda := 4 + int(3*math.Log(n))
		status := map[int]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				code := 0
				resp, err := http.Post(p.base+"/v1/sessions/"+id+"/tell", "application/json", bytes.NewReader(tellBody(lambda, 0)))
				if err != nil {
					t.Errorf("tell: %v", err)
				} else {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if code = resp.StatusCode; code != http.StatusOK {
						t.Errorf("tell: %d %s", code, b)
					}
				}
				mu.Lock()
				status[code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		hwm := peakRSS(t, p.cmd.Process.Pid)
		t.Logf("%d sessions (n = %d, self-CMA-ES) created, then told at once, -cache-bytes %d MiB: statuses %v; server VmHWM %d MB", sessions, n, cacheBytes>>20, status, hwm>>20)
		if hwm >= cacheBytes+slack {
			t.Errorf("peak RSS %d MB, want under %d MB (the cache's bound and %d MB)", hwm>>20, (cacheBytes+slack)>>20, slack>>20)
		}
	})

	t.Run("histories of 30000 generations", func(t *testing.T) {
		const gens = 30000
		db := filepath.Join(t.TempDir(), "history.db")
		id := longSession(t, db, gens)
		p := startServer(t, bin, db)
		defer p.stop(t)
		sizes := make([]int64, 10)
		var wg sync.WaitGroup
		for i := range sizes {
			wg.Go(func() {
				resp, err := http.Get(p.base + "/v1/sessions/" + id + "/history")
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				n, err := io.Copy(io.Discard, resp.Body)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Errorf("history: %d, %v", resp.StatusCode, err)
				}
				sizes[i] = n
			})
		}
		wg.Wait()
		// The whole history, by its last record.
		code, last := request(t, "GET", p.base+"/v1/sessions/"+id+"/history?from="+strconv.Itoa(gens-1), "", "")
		if code != http.StatusOK || !strings.Contains(string(last), `"generation":`+strconv.Itoa(gens-1)+`,`) {
			t.Errorf("last record: %d %s", code, last)
		}
		hwm := peakRSS(t, p.cmd.Process.Pid)
		t.Logf("10 concurrent histories of %d generations (%d bytes each): server VmHWM %d MB", gens, sizes[0], hwm>>20)
		if hwm >= 200<<20 {
			t.Errorf("peak RSS %d MB, want under 200 MB", hwm>>20)
		}
	})
}

// tellBody is a tell of generation 0 with lambda values, padded with
// spaces to size bytes.
func tellBody(lambda, size int) []byte {
	b := []byte(`{"generation": 0, "fitness": [`)
	for i := range lambda {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, rand.Float64(), 'g', 17, 64)
	}
	b = append(b, "]}"...)
	if pad := size - len(b); pad > 0 {
		b = append(b[:len(b)-1], append(bytes.Repeat([]byte{' '}, pad), '}')...)
	}
	return b
}

// longSession writes a session of gens generations into the file db, on a
// sphere whose centre moves on a circle (so that it never converges), with
// every criterion that could stop it off, and returns its id.
func longSession(t *testing.T, db string, gens int) string {
	t.Helper()
	st, err := bolt.Open(db, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := session.NewManager(st, session.Options{})
	ctx := context.Background()
	zero, no := 0.0, false
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{0, 0}, Sigma0: 1, Algorithm: session.AlgorithmCMAES,
		Termination: session.Termination{TolFun: &zero, TolX: &zero, ConditionCov: &zero, TolUpSigma: &zero,
			NoEffectAxis: &no, NoEffectCoord: &no, Stagnation: &no, EqualFunValues: &no}})
	if err != nil {
		t.Fatal(err)
	}
	for g := range gens {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatalf("ask %d: %v", g, err)
		}
		f := make([]float64, len(b.Candidates))
		c := [2]float64{10 * math.Cos(float64(g)/100), 10 * math.Sin(float64(g)/100)}
		for i, x := range b.Candidates {
			f[i] = (x[0]-c[0])*(x[0]-c[0]) + (x[1]-c[1])*(x[1]-c[1])
		}
		if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			t.Fatalf("tell %d: %v", g, err)
		}
	}
	return s.ID
}

// peakRSS reads the peak resident set size of process pid (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func jsonField(t *testing.T, body []byte, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(string(body), `"`+name+`":"`)
	v, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatalf("no %s in %s", name, body)
	}
	return v
}

// postAtOnce posts body to url from n clients at once and counts the
// statuses of the answers (0: no answer), with the first answer of each
// status (its error, for 0), cut to 300 bytes, to say why.
func postAtOnce(url string, body []byte, n int) (status map[int]int, first map[int]string) {
	status, first = map[int]int{}, map[int]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			code, text := 0, fmt.Sprint(err)
			if err == nil {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code, text = resp.StatusCode, string(b)
			}
			mu.Lock()
			status[code]++
			if _, ok := first[code]; !ok {
				first[code] = text
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return status, first
}
