package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listenRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startRun runs the server in process until the returned stop is called;
// stop returns run's error.
func startRun(t *testing.T, args []string, env map[string]string) (base string, log *syncBuffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log = new(syncBuffer)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, func(k string) string { return env[k] }, log) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if m := listenRE.FindStringSubmatch(log.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("run returned before listening: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no listening line:\n%s", log)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { stop() })
	return base, log, stop
}

func request(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// The server started in process on port 0 serves, logs its requests, shuts
// down on cancel and serves the same sessions after a restart on its file.
func TestRunRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	env := map[string]string{"SELFCMA_DB": db, "SELFCMA_ADDR": "127.0.0.1:0", "SELFCMA_TOKEN": "tok", "SELFCMA_LOG_LEVEL": "debug"}
	base, log, stop := startRun(t, nil, env)

	if code, _ := request(t, "GET", base+"/healthz", "", ""); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	if code, _ := request(t, "GET", base+"/v1/sessions", "", ""); code != 401 {
		t.Fatalf("without the token of SELFCMA_TOKEN: %d", code)
	}
	code, body := request(t, "POST", base+"/v1/sessions", "tok", `{"x0": [1, 2], "sigma0": 1, "seed": 4}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var s struct {
		ID string `json:"id"`
	}
	json.Unmarshal(body, &s)
	_, ask := request(t, "GET", base+"/v1/sessions/"+s.ID+"/ask", "tok", "")
	_, before := request(t, "GET", base+"/v1/sessions/"+s.ID, "tok", "")
	code, metrics := request(t, "GET", base+"/metrics", "tok", "")
	for _, want := range []string{"\nselfcma_store_writes_total 1\n", "\nselfcma_store_commit_duration_seconds_count 1\n",
		`selfcma_http_requests_total{method="POST",route="/v1/sessions",status="201"} 1`, "\ngo_goroutines ", "\nprocess_resident_memory_bytes ",
		"\ngo_build_info{", "\nselfcma_sessions_created_total 1\n", "\nselfcma_store_file_size_bytes ", `selfcma_sessions{status="running"} `,
		`selfcma_write_errors_total{kind="no_space"} 0`} {
		if code != 200 || !strings.Contains(string(metrics), want) {
			t.Errorf("GET /metrics: %d, lacks %q:\n%s", code, want, metrics)
		}
	}
	if code, _ := request(t, "GET", base+"/metrics", "", ""); code != 401 {
		t.Errorf("/metrics without the token: %d", code)
	}
	if err := stop(); err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	out := log.String()
	for _, want := range []string{"version=", "request_id=", "session_id=" + s.ID, "status=201", "duration=", "msg=stopped",
		`msg="session created" session_id=` + s.ID, "status=401 ", "error_code=unauthorized"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tok ") || strings.Contains(out, "=tok") {
		t.Errorf("the token is in the log:\n%s", out)
	}

	// Flags win over the environment.
	base, _, _ = startRun(t, []string{"-token", "other", "-addr", "127.0.0.1:0"}, env)
	if code, _ := request(t, "GET", base+"/v1/sessions", "tok", ""); code != 401 {
		t.Errorf("-token did not override SELFCMA_TOKEN: %d", code)
	}
	_, ask2 := request(t, "GET", base+"/v1/sessions/"+s.ID+"/ask", "other", "")
	_, after := request(t, "GET", base+"/v1/sessions/"+s.ID, "other", "")
	if !bytes.Equal(ask, ask2) || !bytes.Equal(before, after) {
		t.Errorf("after a restart:\nask %s\nthen %s\nsession %s\nthen %s", ask, ask2, before, after)
	}
}

// -version prints the build's version and exits, opening nothing.
func TestVersion(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-version", "-db", db}, func(string) string { return "" }, &out); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^selfcma \S+ .*go1\.\d+\S*\n$`).MatchString(out.String()) {
		t.Errorf("-version printed %q", out.String())
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-version opened the database: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"address taken", []string{"-addr", ln.Addr().String(), "-db", db}, nil, "listen"},
		{"bad flag", []string{"-nope"}, nil, "not defined"},
		{"bad env limit", []string{"-db", db}, map[string]string{"SELFCMA_MAX_DIMENSION": "x"}, "SELFCMA_MAX_DIMENSION"},
		{"stray argument", []string{"-db", db, "extra"}, nil, "unexpected"},
		{"tls cert without key", []string{"-db", db, "-tls-cert", "c.pem"}, nil, "-tls-cert and -tls-key go together"},
		{"tls files missing", []string{"-addr", "127.0.0.1:0", "-db", db, "-tls-cert", "nope.pem", "-tls-key", "nope.key"}, nil, "tls: "},
		{"bad log level", []string{"-db", db, "-log-level", "loud"}, nil, "-log-level"},
		{"bad env log level", []string{"-db", db}, map[string]string{"SELFCMA_LOG_LEVEL": "verbose"}, "-log-level"},
		{"bad idle-after", []string{"-db", db, "-idle-after", "-1h"}, nil, "-idle-after"},
		{"bad inflight", []string{"-db", db, "-max-inflight-bytes", "0"}, nil, "positive"},
		{"bad cache", []string{"-db", db, "-cache-bytes", "0"}, nil, "positive"},
		{"bad env cache", []string{"-db", db}, map[string]string{"SELFCMA_CACHE_BYTES": "-5"}, "SELFCMA_CACHE_BYTES"},
		{"db in a missing directory", []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(db, "no", "s.db")}, nil, "store"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
