package httpapi

import (
	"math"
	"net/http"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// GET /v1/sessions/{id}/covariance answers σ and C of the pending
// generation, in the spec's shape: σ·√C_ii are the session's stds. A
// session of more coordinates than it serves gets 422, an unknown one 404.
func TestCovariance(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "seed": 7})
	for range 5 {
		ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
	}
	r := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/covariance"})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	c := decode[struct {
		Generation int         `json:"generation"`
		Sigma      float64     `json:"sigma"`
		C          [][]float64 `json:"c"`
	}](t, r)
	got := decode[struct {
		Generation int       `json:"generation"`
		Stds       []float64 `json:"stds"`
	}](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID}))
	if c.Generation != got.Generation || len(c.C) != 3 {
		t.Fatalf("generation %d, %d rows; the session's generation %d", c.Generation, len(c.C), got.Generation)
	}
	for i := range 3 {
		if std := c.Sigma * math.Sqrt(c.C[i][i]); math.Abs(std-got.Stds[i]) > 1e-14*got.Stds[i] {
			t.Errorf("σ·√C_%d%d = %v, stds[%d] = %v", i, i, std, i, got.Stds[i])
		}
	}

	big := ts.create(t, map[string]any{"x0": make([]float64, session.MaxCovarianceDimension+1), "sigma0": 1})
	if r := ts.do(t, call{method: "GET", path: "/v1/sessions/" + big.ID + "/covariance"}); r.status != http.StatusUnprocessableEntity ||
		decode[errorView](t, r).Error.Code != "out_of_range" {
		t.Errorf("n = %d: %d %s, want 422 out_of_range", session.MaxCovarianceDimension+1, r.status, r.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/sessions/01890000-0000-7000-8000-000000000000/covariance"}); r.status != http.StatusNotFound {
		t.Errorf("an unknown session: %d %s, want 404", r.status, r.body)
	}
}
