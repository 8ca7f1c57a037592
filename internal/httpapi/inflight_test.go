package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInflightBytes: while a body without a Content-Length is being read
// (it counts as the largest body), a request whose body would pass the
// limit is 503 with Retry-After, unread and without effect; requests
// without a body pass; once the first ends, the next one is served.
func TestInflightBytes(t *testing.T) {
	ts := newTestServer(t, serverOpts{maxBody: 800, maxInflight: 1000})
	// The slow create goes through a second listener of the same router,
	// which tells when the handler starts reading the body: by then the
	// body is counted (the handler reads it after limitInflight).
	reading := make(chan struct{})
	var once sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = readSignal{r.Body, func() { once.Do(func() { close(reading) }) }}
		ts.mux.ServeHTTP(w, r)
	}))
	defer slow.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", slow.URL+"/v1/sessions", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := slow.Client().Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	pw.Write([]byte(`{"x0": [1, 2`))
	select { // the server is reading it
	case <-reading:
	case <-time.After(time.Minute):
		t.Fatal("the server did not start reading the slow body in a minute")
	}
	body := `{"x0": [1, 2], "sigma0": 1, "name": "` + strings.Repeat("n", 200) + `"}`
	r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("a create beyond the limit: %d, Retry-After %q; want 503 with Retry-After: %s", r.status, r.header.Get("Retry-After"), r.body)
	} else if e := decode[errorView](t, r); e.Error.Code != "overloaded" {
		t.Errorf("code %q, want overloaded", e.Error.Code)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/sessions"}); r.status != 200 || strings.Contains(string(r.body), `"id"`) {
		t.Errorf("list during the slow body: %d %s", r.status, r.body)
	}
	pw.Write([]byte(`], "sigma0": 1}`))
	pw.Close()
	if got := <-first; got != http.StatusCreated {
		t.Errorf("the slow create: %d", got)
	}
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body}); r.status != http.StatusCreated {
		t.Errorf("a create after: %d %s", r.status, r.body)
	}
}

// readSignal calls read before each Read of its body.
type readSignal struct {
	io.ReadCloser
	read func()
}

func (r readSignal) Read(p []byte) (int, error) {
	r.read()
	return r.ReadCloser.Read(p)
}
