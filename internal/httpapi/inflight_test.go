package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestInflightBytes: while a body without a Content-Length is being read
// (it counts as the largest body), a request whose body would pass the
// limit is 503 with Retry-After, unread and without effect; requests
// without a body pass; once the first ends, the next one is served.
func TestInflightBytes(t *testing.T) {
	ts := newTestServer(t, serverOpts{maxBody: 800, maxInflight: 1000})
	pr, pw := io.Pipe()
	defer pw.Close()
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	pw.Write([]byte(`{"x0": [1, 2`)) // the server is reading it
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
