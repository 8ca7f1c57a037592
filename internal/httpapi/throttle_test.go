package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// TestWrongTokensThrottled: wrong bearer tokens from one address are 401
// and logged, until the tenth, after which that address is 429 with
// Retry-After, the right token too; a missing token is no guess.
func TestWrongTokensThrottled(t *testing.T) {
	var buf bytes.Buffer
	log := &syncWriter{w: &buf}
	ts := newTestServer(t, serverOpts{token: "right", log: log})
	for range 20 {
		if r := ts.do(t, call{method: "GET", path: "/v1/sessions", header: map[string]string{"Authorization": ""}}); r.status != 401 {
			t.Fatalf("no token: %d", r.status)
		}
	}
	for i := range 10 {
		if r := ts.do(t, call{method: "GET", path: "/v1/sessions", header: map[string]string{"Authorization": "Bearer wrong" + strconv.Itoa(i)}}); r.status != 401 {
			t.Fatalf("wrong token %d: %d", i, r.status)
		}
	}
	for _, token := range []string{"wrong", "right"} {
		r := ts.do(t, call{method: "GET", path: "/v1/sessions", header: map[string]string{"Authorization": "Bearer " + token}})
		if r.status != http.StatusTooManyRequests {
			t.Errorf("token %q after 10 wrong ones: %d, want 429", token, r.status)
		}
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
		}
	}
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1}`}); r.status != http.StatusTooManyRequests {
		t.Errorf("create from the throttled address: %d", r.status)
	}
	logged := log.bytes(&buf)
	if n := bytes.Count(logged, []byte("wrong bearer token")); n < 10 {
		t.Errorf("%d wrong tokens logged, want 10", n)
	}
	if !bytes.Contains(logged, []byte(`msg="client throttled" client=127.0.0.1/32`)) {
		t.Errorf("no line for the throttled client in\n%s", logged)
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// bytes returns a copy of what buf, its writer, holds.
func (s *syncWriter) bytes(buf *bytes.Buffer) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(buf.Bytes())
}
