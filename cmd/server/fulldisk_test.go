package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size (mount's size= option) on a new
// directory and unmounts it at the end of the test. Where it cannot (not
// root, no mount in the container) the test is skipped, or fails when CI is
// set.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		msg := "cannot mount a tmpfs to fill (run as root, in a container with CAP_SYS_ADMIN): " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file at path until the disk is full.
func fill(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	for _, chunk := range []int{1 << 16, 4096, 512} {
		b := make([]byte, chunk)
		for {
			m, err := f.Write(b)
			n += int64(m)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

type fullDiskRun struct {
	batches [][][]float64
	history []byte
}

// TestFullDisk: the real server on a file in a small tmpfs, a client
// telling a seeded session until the disk is full: the tell that finds no
// space is 507 storage_full with Retry-After and changes nothing (the
// session stays at its generation, the batch is the same); once space is
// freed, the same tell applies once and the run goes on exactly as an
// uninterrupted one of the same seed (every batch bit for bit, the same
// history), nothing acknowledged is lost over a restart, and -check passes.
func TestFullDisk(t *testing.T) {
	bin := serverBinary(t)
	dir := mountTmpfs(t, "4m")
	body := map[string]any{"x0": []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, "sigma0": 2, "algorithm": "self-cma-es", "seed": 77, "population_size": 12}

	db := filepath.Join(dir, "s.db")
	p := startServer(t, bin, db)
	t.Cleanup(func() { p.kill() }) // before the tmpfs is unmounted, on a failure
	var s e2eSession
	json.Unmarshal(must(t, "POST", p.base+"/v1/sessions", body, 201), &s)
	var run fullDiskRun
	full, freedAt := -1, -1
	filler := filepath.Join(dir, "filler")
	for g := 0; full < 0 || g < full+30; g++ {
		if g == 5 { // the disk filled but for 64 KiB, which the tells take
			n := fill(t, filler)
			if err := os.Truncate(filler, n-64<<10); err != nil {
				t.Fatal(err)
			}
			t.Logf("filled the disk with %d bytes, less 64 KiB", n)
		}
		if g > 3000 {
			t.Fatal("the disk never filled in 3000 generations")
		}
		var b e2eBatch
		json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+s.ID+"/ask", nil, 200), &b)
		if b.Generation != g {
			t.Fatalf("asked generation %d, want %d", b.Generation, g)
		}
		run.batches = append(run.batches, b.Candidates)
		tell := tellOf(b)
		code, resp, err := send("POST", p.base+"/v1/sessions/"+s.ID+"/tell", tell)
		if err != nil {
			t.Fatal(err)
		}
		if code == 507 {
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			json.Unmarshal(resp, &e)
			if e.Error.Code != "storage_full" || full >= 0 {
				t.Fatalf("generation %d: 507 %s (full since %d)", g, resp, full)
			}
			full = g
			t.Logf("generation %d: 507 storage_full", g)
			// The client retries while the disk is full: each 507 changes
			// nothing. (A retry may find room, the failed attempt's pages
			// being allocated already: then it applies, once.)
			for range 3 {
				code, resp, err = send("POST", p.base+"/v1/sessions/"+s.ID+"/tell", tell)
				if err != nil || code != 507 {
					break
				}
				var now e2eSession
				json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+s.ID, nil, 200), &now)
				var again e2eBatch
				json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+s.ID+"/ask", nil, 200), &again)
				if now.Generation != g || !sameBits(again.Candidates, b.Candidates) {
					t.Fatalf("a 507 changed the session: generation %d, same batch %v", now.Generation, sameBits(again.Candidates, b.Candidates))
				}
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			freedAt = g
			if code == 507 {
				code, resp, err = send("POST", p.base+"/v1/sessions/"+s.ID+"/tell", tell)
			} else {
				t.Logf("generation %d: a retry on the full disk applied", g)
			}
			if err != nil {
				t.Fatal(err)
			}
			// Sent once more, as a client that lost the answer would: a
			// retry, applied once.
			if c, r, err := send("POST", p.base+"/v1/sessions/"+s.ID+"/tell", tell); err != nil || c != 200 || !bytes.Contains(r, []byte(`"generation":`+strconv.Itoa(g+1))) {
				t.Fatalf("the tell sent once more: %d %s %v", c, r, err)
			}
		}
		if code != 200 {
			t.Fatalf("generation %d: tell: %d %s", g, code, resp)
		}
		json.Unmarshal(resp, &s)
		if s.Generation != g+1 {
			t.Fatalf("generation %d: told, the session is at %d", g, s.Generation)
		}
	}
	if freedAt < 0 {
		t.Fatal("the disk never filled")
	}
	gens := len(run.batches)
	p.stop(t)

	// Nothing acknowledged lost: a restarted server has every generation.
	p = startServer(t, bin, db)
	t.Cleanup(func() { p.kill() })
	var after e2eSession
	json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+s.ID, nil, 200), &after)
	if after.Generation != gens {
		t.Errorf("after a restart: generation %d, want %d", after.Generation, gens)
	}
	run.history = must(t, "GET", p.base+"/v1/sessions/"+s.ID+"/history", nil, 200)
	p.stop(t)
	if out, err := exec.Command(bin, "-check", "-db", db).CombinedOutput(); err != nil {
		t.Errorf("-check: %v\n%s", err, out)
	}

	// The same seed, uninterrupted, on an ordinary disk.
	ref := startServer(t, bin, filepath.Join(t.TempDir(), "ref.db"))
	defer ref.stop(t)
	var rs e2eSession
	json.Unmarshal(must(t, "POST", ref.base+"/v1/sessions", body, 201), &rs)
	for g := range gens {
		var b e2eBatch
		json.Unmarshal(must(t, "GET", ref.base+"/v1/sessions/"+rs.ID+"/ask", nil, 200), &b)
		if !sameBits(b.Candidates, run.batches[g]) {
			t.Fatalf("generation %d: the batch differs from the uninterrupted run's", g)
		}
		must(t, "POST", ref.base+"/v1/sessions/"+rs.ID+"/tell", tellOf(b), 200)
	}
	refHist := must(t, "GET", ref.base+"/v1/sessions/"+rs.ID+"/history", nil, 200)
	if !bytes.Equal(bytes.ReplaceAll(refHist, []byte(rs.ID), nil), bytes.ReplaceAll(run.history, []byte(s.ID), nil)) {
		t.Errorf("the history differs from the uninterrupted run's:\n%.400s\n%.400s", run.history, refHist)
	}
}
