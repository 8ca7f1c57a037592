package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/pgtest"
)

// A server on PostgreSQL says so in its log and /metrics, keeps the URL's
// password out of both, and answers /v1/backup with 501 naming pg_dump.
func TestServerOnPostgres(t *testing.T) {
	url := strings.Replace(pgtest.DB(t), "postgres@", "postgres:s3cret@", 1) // trust: any password
	base, log, stop := startRun(t, []string{"-addr", "127.0.0.1:0"}, map[string]string{"SELFCMA_DB": url})
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/v1/backup"); code != 501 || !strings.Contains(body, `"code":"backup_unsupported"`) || !strings.Contains(body, "pg_dump") || strings.Contains(body, "s3cret") {
		t.Errorf("GET /v1/backup: %d %s", code, body)
	}
	if _, body := get("/ui/"); !strings.Contains(body, `href="/openapi.yaml"`) || strings.Contains(body, "/v1/backup") {
		t.Errorf("the pages link to a backup PostgreSQL does not make, or are not there:\n%s", body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, `selfcma_store_info{kind="postgres"} 1`) {
		t.Errorf("/metrics does not say the store is postgres")
	}
	resp, err := http.Post(base+"/v1/sessions", "application/json", strings.NewReader(`{"x0": [1, 2], "sigma0": 1}`))
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if s := log.String(); !strings.Contains(s, "store=postgres") || strings.Contains(s, "s3cret") {
		t.Errorf("the log:\n%s", s)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-check", "-db", url}, func(string) string { return "" }, &out); err != nil || !strings.HasSuffix(out.String(), ": sessions 1, history entries 0, problems 0\n") || strings.Contains(out.String(), "s3cret") {
		t.Errorf("-check: %v\n%s", err, out.String())
	}
}

func TestCopyFromNeedsPostgres(t *testing.T) {
	err := run(context.Background(), []string{"-copy-from", "a.db", "-db", filepath.Join(t.TempDir(), "b.db")}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no postgres:// URL") {
		t.Errorf("-copy-from into a file: %v", err)
	}
}
