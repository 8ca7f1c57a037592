package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/store/bolt"
)

// A file and its told-value log as a crash leaves them, with a record of
// the log damaged and a later one sound: -check reports the log, a server
// refuses the file, -salvage keeps every told value that reads.
func TestDamagedToldLog(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	base, _, stop := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", db}, nil)
	code, body := request(t, "POST", base+"/v1/sessions", "", `{"x0": [1, 2, 3], "sigma0": 1, "seed": 4, "population_size": 7}`)
	m := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(body)
	if code != 201 || m == nil {
		t.Fatalf("create: %d %s", code, body)
	}
	sp := base + "/v1/sessions/" + string(m[1])
	for _, part := range []string{`"indices": [0], "fitness": [1]`, `"indices": [3], "fitness": [4]`, `"indices": [5], "fitness": [6]`} {
		if code, body := request(t, "POST", sp+"/tell", "", `{"generation": 0, `+part+`}`); code != 200 {
			t.Fatalf("partial tell: %d %s", code, body)
		}
	}
	// The crash: the files as they are, the server running.
	crashed := filepath.Join(dir, "crashed.db")
	for _, suffix := range []string{"", bolt.LogSuffix} {
		b, err := os.ReadFile(db + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix != "" {
			b[512+40] ^= 1 // the second record's payload (a record a block)
		}
		if err := os.WriteFile(crashed+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	out, err := checkRun(crashed)
	if err == nil || !strings.Contains(out, "file: told-value log: at byte 512 a record whose CRC does not match, and record 3 of the epoch follows at byte 1024") || !strings.Contains(out, "-salvage") {
		t.Errorf("-check of a damaged log: %v\n%s", err, out)
	}
	var log bytes.Buffer
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", crashed}, func(string) string { return "" }, &log)
	if err == nil || !strings.Contains(err.Error(), "is damaged: told-value log") {
		t.Errorf("a server on the file: %v", err)
	}
	salvaged := filepath.Join(dir, "salvaged.db")
	log.Reset()
	if err := run(context.Background(), []string{"-salvage", "-db", crashed, "-out", salvaged}, func(string) string { return "" }, &log); err != nil {
		t.Fatalf("-salvage: %v\n%s", err, &log)
	}
	base, _, stop = startRun(t, []string{"-addr", "127.0.0.1:0", "-db", salvaged}, nil)
	defer stop()
	code, body = request(t, "GET", base+"/v1/sessions/"+string(m[1]), "", "")
	if code != 200 || !bytes.Contains(body, []byte(`"indices":[0,3,5]`)) {
		t.Errorf("the salvaged session: %d %s, want the values of candidates 0, 3 and 5 held", code, body)
	}
}
