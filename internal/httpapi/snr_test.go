package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// hyperOf is the JSON of a session's hyperparameters.
type hyperOf struct {
	Hyper struct {
		C1  float64 `json:"c1"`
		SNR *bool   `json:"snr"`
	} `json:"hyperparameters"`
}

// hyperparameters.snr: a self-CMA-ES runs the signal-to-noise rule unless
// told false, and says so; a CMA-ES refuses true with a 422 naming the
// field and reports no snr.
func TestCreateSNR(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	create := func(alg string, hyper map[string]any) response {
		body := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": alg, "seed": 3}
		if hyper != nil {
			body["hyperparameters"] = hyper
		}
		return ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
	}
	for _, c := range []struct {
		alg   string
		hyper map[string]any
		want  *bool
	}{
		{"self-cma-es", nil, ptr(true)},
		{"self-cma-es", map[string]any{"snr": false}, ptr(false)},
		{"self-cma-es", map[string]any{"snr": true, "init": "uniform"}, ptr(true)},
		{"cma-es", nil, nil},
		{"cma-es", map[string]any{"snr": false}, nil},
	} {
		r := create(c.alg, c.hyper)
		if r.status != http.StatusCreated {
			t.Fatalf("%s %v: %d %s", c.alg, c.hyper, r.status, r.body)
		}
		id := decode[sessionView](t, r).ID
		got := decode[hyperOf](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + id})).Hyper.SNR
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s %v: snr %v, want %v", c.alg, c.hyper, got, c.want)
		}
	}
	r := create("cma-es", map[string]any{"snr": true})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(decode[errorView](t, r).Error.Message, "hyperparameters.snr") {
		t.Fatalf("cma-es with snr true: %d %s", r.status, r.body)
	}
	bad := map[string]any{"x0": []float64{1}, "sigma0": 1, "algorithm": "self-cma-es", "hyperparameters": map[string]any{"snr": "yes"}}
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: bad, invalid: true}); r.status != http.StatusBadRequest {
		t.Fatalf("snr \"yes\": %d %s", r.status, r.body)
	}
}
