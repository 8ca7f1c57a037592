package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// realFile makes a file with the real server: sessions of every kind
// (CMA-ES, self-CMA-ES with bounds, one of dimension 40 whose record spans
// pages, one created with an idempotency key, one holding a partial tell,
// one stopped, small ones beside), told for a few generations each.
func realFile(t *testing.T, bin string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "real.db")
	p := startServer(t, bin, db)
	defer p.stop(t)
	drive := func(body any, gens int) string {
		var s e2eSession
		json.Unmarshal(must(t, "POST", p.base+"/v1/sessions", body, 201), &s)
		for range gens {
			var b e2eBatch
			json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+s.ID+"/ask", nil, 200), &b)
			must(t, "POST", p.base+"/v1/sessions/"+s.ID+"/tell", tellOf(b), 200)
		}
		return s.ID
	}
	x0 := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.5
		}
		return x
	}
	drive(map[string]any{"x0": x0(3), "sigma0": 1, "algorithm": "cma-es", "seed": 1}, 12)
	drive(map[string]any{"x0": x0(4), "sigma0": 1, "seed": 2, "population_size": 8,
		"bounds": map[string]any{"lower": []float64{-1, -1, -1, -1}, "upper": []float64{2, 2, 2, 2}}}, 8)
	drive(map[string]any{"x0": x0(40), "sigma0": 1, "algorithm": "cma-es", "seed": 3}, 25)
	drive(withKey{map[string]any{"x0": x0(5), "sigma0": 1, "algorithm": "cma-es", "seed": 4}, "create-once"}, 6)
	id := drive(map[string]any{"x0": x0(6), "sigma0": 1, "algorithm": "cma-es", "seed": 5}, 4)
	var b e2eBatch
	json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+id+"/ask", nil, 200), &b)
	f := tellOf(b)["fitness"].([]float64)
	must(t, "POST", p.base+"/v1/sessions/"+id+"/tell", partOf(b.Generation, f, 0, 3), 200)
	id = drive(map[string]any{"x0": x0(3), "sigma0": 1, "algorithm": "self-cma-es", "seed": 6, "population_size": 10}, 5)
	must(t, "POST", p.base+"/v1/sessions/"+id+"/stop", nil, 200)
	for i := range 10 {
		drive(map[string]any{"x0": x0(2 + i%4), "sigma0": 1, "algorithm": "cma-es", "seed": 10 + i}, 3+i)
	}
	return db
}

// sessionRead is what the file holds of a session, read without bbolt.
type sessionRead struct {
	rec  session.Record
	hist []session.HistoryEntry
	key  string
	data []byte
}

func readSessions(t *testing.T, d *bolt.Damaged) map[string]sessionRead {
	t.Helper()
	ctx := context.Background()
	out := map[string]sessionRead{}
	recs, _ := d.List(ctx, "", 0)
	for _, r := range recs {
		rec, err := d.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		h, err := d.History(ctx, r.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		key, data, _ := d.KeyOf(ctx, r.ID)
		out[r.ID] = sessionRead{rec: rec, hist: h, key: key, data: data}
	}
	return out
}

// exitOf runs cmd with a deadline and returns its exit status; a crash (a
// signal, Go's exit status 2 of a fault or panic) or a hang fails the test.
func exitOf(t *testing.T, what string, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: no exit in 30 s\n%s", what, out.String())
	}
	code := cmd.ProcessState.ExitCode()
	if code != 0 && code != 1 {
		t.Fatalf("%s: exit %v, want 0 or 1 (never a crash)\n%s", what, cmd.ProcessState, out.String())
	}
	return code, out.String()
}

// serves starts the server on db and reports whether it served: it
// answered /healthz (then it is stopped, and must exit 0), or it exited
// with status 1 before.
func serves(t *testing.T, bin, db string) (bool, string) {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", db)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := listenRE.FindStringSubmatch(lines.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
		close(addr)
	}()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	wait := func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("the server did not exit: %s", stderr.String())
		}
	}
	a, ok := <-addr
	if !ok {
		wait()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Fatalf("the server exited %v, want 1 (never a crash)\n%s", cmd.ProcessState, stderr.String())
		}
		return false, stderr.String()
	}
	code, body, err := send("GET", "http://"+a+"/healthz", nil)
	cmd.Process.Signal(os.Interrupt)
	wait()
	if err != nil || code != 200 || !cmd.ProcessState.Success() {
		t.Fatalf("the server: /healthz %d %s %v; exit %v\n%s", code, body, err, cmd.ProcessState, stderr.String())
	}
	return true, ""
}

// TestDamagedCopies: 100 copies of a real file, cut short or with bytes
// overwritten at random. Neither -check, nor -salvage, nor the server ever
// crashes (exit status 0 or 1 only); the server serves a copy exactly when
// -check passes it; salvage writes a file that passes -check and holds
// every session whose pages the damage left alone, byte for byte (record,
// version, history, idempotency key). A file refused is left as it was.
func TestDamagedCopies(t *testing.T) {
	bin := serverBinary(t)
	orig := realFile(t, bin)
	whole, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	d, err := bolt.OpenDamaged(orig)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Problems(); len(p) > 0 {
		t.Fatalf("the real file: %v", p)
	}
	want := readSessions(t, d)
	pages := map[string][]uint64{}
	for id := range want {
		pages[id] = d.Pages(id)
	}
	ps, metaPage := d.PageSize(), uint64(d.MetaPage())
	d.Close()
	if len(want) != 16 {
		t.Fatalf("%d sessions in the real file, want 16", len(want))
	}
	// bbolt grows its file ahead, with zeros: the damage goes to the pages
	// written.
	span := (len(bytes.TrimRight(whole, "\x00")) + ps - 1) / ps * ps
	t.Logf("the real file: %d bytes, %d pages of %d written", len(whole), span/ps, ps)

	seed := uint64(16)
	switch s := os.Getenv("SELFCMA_DAMAGE_SEED"); s {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (SELFCMA_DAMAGE_SEED=N repeats a run, =random draws one)", seed)
	rng := rand.New(rand.NewPCG(seed, 16))
	dir := t.TempDir()
	var served, rejected, intactSeen, salvagedAll int
	for i := range 100 {
		b := bytes.Clone(whole)
		touched := map[uint64]bool{}
		overwrite := func(at, n int) {
			for j := at; j < min(len(b), at+n); j++ {
				if v := byte(rng.Uint32()); v != b[j] {
					b[j] = v
					touched[uint64(j/ps)] = true
				}
			}
		}
		var how string
		switch i % 5 {
		case 0:
			n := 1 + rng.IntN(8)
			for range n {
				overwrite(rng.IntN(span), 1)
			}
			how = fmt.Sprintf("%d bytes overwritten", n)
		case 1:
			at, n := rng.IntN(span), 1+rng.IntN(256)
			overwrite(at, n)
			how = fmt.Sprintf("%d bytes overwritten at %d", n, at)
		case 2:
			pg := rng.IntN(span / ps)
			overwrite(pg*ps, 16)
			how = fmt.Sprintf("the header of page %d overwritten", pg)
		case 3:
			n := rng.IntN(span)
			b = b[:n]
			for p := n / ps; p <= len(whole)/ps; p++ {
				touched[uint64(p)] = true
			}
			how = fmt.Sprintf("cut to %d bytes", n)
		case 4:
			n := rng.IntN(span)
			b = b[:n]
			for p := n / ps; p <= len(whole)/ps; p++ {
				touched[uint64(p)] = true
			}
			overwrite(rng.IntN(len(b)+1), 1+rng.IntN(32))
			how = fmt.Sprintf("cut to %d bytes and overwritten", n)
		}
		path := filepath.Join(dir, fmt.Sprintf("copy%d.db", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("copy %d (%s)", i, how)

		checkCode, checkOut := exitOf(t, what+": -check", exec.Command(bin, "-check", "-db", path))

		out := path + ".salvaged"
		salvageCode, salvageOut := exitOf(t, what+": -salvage", exec.Command(bin, "-salvage", "-db", path, "-out", out))
		var intact []string
		for id, ps := range pages {
			if !touched[metaPage] && !slices.ContainsFunc(ps, func(p uint64) bool { return touched[p] }) {
				intact = append(intact, id)
			}
		}
		intactSeen += len(intact)
		if salvageCode != 0 {
			if len(intact) > 0 {
				t.Errorf("%s: salvage failed, with sessions %v untouched:\n%s", what, intact, salvageOut)
			}
		} else {
			if c, o := exitOf(t, what+": -check of the salvaged file", exec.Command(bin, "-check", "-db", out)); c != 0 {
				t.Errorf("%s: the salvaged file does not pass -check:\n%s", what, o)
			}
			sd, err := bolt.OpenDamaged(out)
			if err != nil {
				t.Fatal(err)
			}
			got := readSessions(t, sd)
			sd.Close()
			for _, id := range intact {
				g, ok := got[id]
				if !ok || !reflect.DeepEqual(g, want[id]) {
					t.Errorf("%s: session %s, untouched, not salvaged as it was (salvaged: %v)\n%s", what, id, ok, salvageOut)
				}
			}
			if len(got) == len(want) {
				salvagedAll++
			}
		}

		ok, why := serves(t, bin, path)
		if after, _ := os.ReadFile(path); !ok && !bytes.Equal(after, b) {
			t.Errorf("%s: the server refused the file but changed it", what)
		}
		switch {
		case ok && checkCode != 0:
			t.Errorf("%s: the server served a file that -check rejects (exit %d):\n%s", what, checkCode, checkOut)
		case !ok && checkCode == 0:
			t.Errorf("%s: the server refused a file that -check passes:\n%s", what, why)
		case ok:
			served++
		default:
			rejected++
		}
		os.Remove(path)
		os.Remove(out)
	}
	t.Logf("served %d copies, refused %d; %d untouched sessions in all; %d salvages kept every session", served, rejected, intactSeen, salvagedAll)
	if rejected == 0 {
		t.Error("no copy was refused: the damage did not reach the file")
	}
}
