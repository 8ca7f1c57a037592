package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A backup that its client does not read holds a read transaction; a
// shutdown still ends within its timeout (and then some), cutting it,
// rather than waiting for the download's deadline to close the file (a
// minute and more: the test waits 50 s, a deadline for a loaded machine).
func TestShutdownCutsStalledBackup(t *testing.T) {
	db := filepath.Join(t.TempDir(), "b.db")
	base, _, stop := startRun(t, []string{"-db", db, "-addr", "127.0.0.1:0", "-shutdown-timeout", "300ms"}, nil)
	x0 := "[" + strings.Repeat("0.5,", 99) + "0.5]"
	for range 80 { // about 10 MB: more than the connection's buffers
		if code, body := request(t, "POST", base+"/v1/sessions", "", `{"x0": `+x0+`, "sigma0": 1, "population_size": 100, "algorithm": "cma-es"}`); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	if code, body := request(t, "GET", base+"/ui/", "", ""); code != 200 || !strings.Contains(string(body), `<a href="/v1/backup"`) {
		t.Errorf("the pages on bbolt without a token: %d, no backup link:\n%s", code, body)
	}
	resp, err := http.Get(base + "/v1/backup")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength < 8<<20 {
		t.Fatalf("backup: %d, %d bytes", resp.StatusCode, resp.ContentLength)
	}
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case <-done:
	case <-time.After(50 * time.Second):
		t.Fatal("no shutdown with a stalled backup")
	}
}
