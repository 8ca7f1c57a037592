package httpapi

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestMetrics: GET /metrics counts the requests by route pattern and
// status (no session id in any label), times them, and needs the token.
func TestMetrics(t *testing.T) {
	const token = "tok"
	st, err := bolt.Open(filepath.Join(t.TempDir(), "t.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg := prometheus.NewRegistry()
	mux := New(Config{Manager: session.NewManager(st, session.Options{}), Token: token, Metrics: reg})
	ts := &testServer{Server: httptest.NewServer(mux), mux: mux, token: token}
	defer ts.Close()

	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 1})
	for range 3 {
		ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
	}
	ts.do(t, call{method: "GET", path: "/v1/sessions/nope"})
	ts.do(t, call{method: "GET", path: "/no/such/path"})
	ts.do(t, call{method: "GET", path: "/v1/sessions", header: map[string]string{"Authorization": ""}})

	r := ts.do(t, call{method: "GET", path: "/metrics"})
	if r.status != 200 {
		t.Fatalf("metrics: %d %s", r.status, r.body)
	}
	body := string(r.body)
	for _, want := range []string{
		`selfcma_http_requests_total{method="POST",route="/v1/sessions",status="201"} 1`,
		`selfcma_http_requests_total{method="GET",route="/v1/sessions/{id}/ask",status="200"} 3`,
		`selfcma_http_requests_total{method="POST",route="/v1/sessions/{id}/tell",status="200"} 3`,
		`selfcma_http_requests_total{method="GET",route="/v1/sessions/{id}",status="404"} 1`,
		`selfcma_http_requests_total{method="GET",route="other",status="404"} 1`,
		`selfcma_http_requests_total{method="GET",route="/v1/*",status="401"} 1`, // refused before the routing inside /v1
		`selfcma_http_request_duration_seconds_count{method="POST",route="/v1/sessions/{id}/tell"} 3`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, s.ID) {
		t.Errorf("a session id is a label:\n%s", body)
	}

	if r := ts.do(t, call{method: "GET", path: "/metrics", header: map[string]string{"Authorization": ""}}); r.status != 401 {
		t.Errorf("metrics without the token: %d %s", r.status, r.body)
	}
	plain := newTestServer(t, serverOpts{noMetrics: true})
	if r := plain.do(t, call{method: "GET", path: "/metrics"}); r.status != 404 || !strings.Contains(string(r.body), "no metrics") {
		t.Errorf("metrics of a server without a registry: %d %s", r.status, r.body)
	}
}
