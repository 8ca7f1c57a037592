package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/store/bolt"
)

// salvageRun runs the server with -salvage on db (and -out out, if not
// empty) and returns what it printed.
func salvageRun(db, out string) (string, error) {
	args := []string{"-salvage", "-db", db}
	if out != "" {
		args = append(args, "-out", out)
	}
	var b bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &b)
	return b.String(), err
}

// A page of one session's record overwritten: the server refuses the file,
// saying what to do, and leaves it as it was; -check names the damaged
// pages and that session only, and fails; -salvage writes the two others,
// byte for byte, to a new file that passes -check and serves them, and
// lists the one it lost.
func TestSalvageCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	base, _, stop := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", db}, nil)
	var ids []string
	for i, n := range []int{3, 60, 4} { // the second's record has pages of its own
		x0 := strings.TrimSuffix(strings.Repeat("1, ", n), ", ")
		code, body := request(t, "POST", base+"/v1/sessions", "", `{"x0": [`+x0+`], "sigma0": 1, "algorithm": "cma-es", "population_size": 6, "seed": `+strconv.Itoa(i)+`}`)
		id := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(body)
		if code != 201 || id == nil {
			t.Fatalf("create: %d %s", code, body)
		}
		ids = append(ids, string(id[1]))
		for g := range 3 {
			if code, body := request(t, "POST", base+"/v1/sessions/"+ids[i]+"/tell", "",
				`{"generation": `+strconv.Itoa(g)+`, "fitness": [1, 2, 3, 4, 5, 6]}`); code != 200 {
				t.Fatalf("tell: %d %s", code, body)
			}
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// The first page of the second session's that is no other's.
	d, err := bolt.OpenDamaged(db)
	if err != nil {
		t.Fatal(err)
	}
	mine := d.Pages(ids[1])
	for _, id := range []string{ids[0], ids[2]} {
		mine = slices.DeleteFunc(mine, func(p uint64) bool { return slices.Contains(d.Pages(id), p) })
	}
	ps := d.PageSize()
	d.Close()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	var page uint64
	for _, p := range mine {
		if binary.NativeEndian.Uint64(b[int(p)*ps:]) == p {
			page = p
			break
		}
	}
	if page == 0 {
		t.Fatalf("no page of %s alone: %v", ids[1], mine)
	}
	copy(b[int(page)*ps:], "not a page header")
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}

	var log bytes.Buffer
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db}, func(string) string { return "" }, &log)
	if err == nil || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "-salvage -db "+db) {
		t.Errorf("the server on the damaged file: %v", err)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, b) {
		t.Error("the server changed the damaged file")
	}

	out, err := checkRun(db)
	// The page may hold the record or history entries of the session,
	// whichever the file's layout put there: either way that session, and
	// no other, is damaged.
	if err == nil || !strings.Contains(out, "file: bucket ") || !strings.Contains(out, "session "+ids[1]+": ") ||
		strings.Contains(out, ids[0]) || strings.Contains(out, ids[2]) || !strings.Contains(out, "(2 read soundly)") || !strings.Contains(out, damagedAdvice(db)) {
		t.Errorf("-check of the damaged file: %v\n%s", err, out)
	}

	if _, err := salvageRun(db, ""); err == nil || !strings.Contains(err.Error(), "-out") {
		t.Errorf("-salvage without -out: %v", err)
	}
	salvaged := filepath.Join(dir, "salvaged.db")
	out, err = salvageRun(db, salvaged)
	if err != nil || !strings.Contains(out, "lost session "+ids[1]+": ") ||
		!strings.Contains(out, "salvaged 2 sessions (history entries 6, idempotency keys 0)") || !strings.Contains(out, "lost 1 sessions") ||
		!strings.Contains(out, salvaged+" passes -check") {
		t.Errorf("-salvage: %v\n%s", err, out)
	}
	if _, err := salvageRun(db, salvaged); err == nil {
		t.Error("-salvage wrote over a file that exists")
	}
	if out, err := checkRun(salvaged); err != nil {
		t.Errorf("-check of the salvaged file: %v\n%s", err, out)
	}

	base, _, stop = startRun(t, []string{"-addr", "127.0.0.1:0", "-db", salvaged}, nil)
	defer stop()
	for i, id := range ids {
		code, body := request(t, "GET", base+"/v1/sessions/"+id, "", "")
		if want := map[bool]int{true: 404, false: 200}[i == 1]; code != want {
			t.Errorf("session %d on the salvaged file: %d %s, want %d", i, code, body, want)
		}
		if i != 1 && !strings.Contains(string(body), `"generation":3`) {
			t.Errorf("session %d on the salvaged file: %s", i, body)
		}
	}
}
