package httpapi

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/selfcma/selfcma/internal/defaults"
)

// The create option mean_rate: the session reports it, an absent option is
// the algorithm's default (self-cma-es on, cma-es off), and an algorithm
// without it refuses it with a 422 naming the field.
func TestCreateMeanRate(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	type view struct {
		MeanRate bool `json:"mean_rate"`
	}
	get := func(id string) view {
		return decode[view](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + id}))
	}
	for _, alg := range []string{"cma-es", "self-cma-es"} {
		for _, on := range []bool{true, false} {
			s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": alg, "mean_rate": on,
				"restarts": map[string]any{"strategy": "bipop"}})
			if v := get(s.ID); v.MeanRate != on {
				t.Errorf("%s, mean_rate %t: the session reports %t", alg, on, v.MeanRate)
			}
		}
		s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": alg})
		if got, want := get(s.ID).MeanRate, defaults.For(alg).MeanRateLargeRuns; got != want {
			t.Errorf("%s without the option: mean_rate %t, the default %t", alg, got, want)
		}
	}
	if !defaults.For("self-cma-es").MeanRateLargeRuns || defaults.For("cma-es").MeanRateLargeRuns {
		t.Error("the defaults: self-cma-es adapts the mean's rate in its large restarts, cma-es does not")
	}
	for _, body := range []map[string]any{
		{"x0": []float64{1}, "sigma0": 1, "algorithm": "sep-cma-es", "mean_rate": true},
		{"integers": [][]float64{{0, 1, 2}}, "categories": []int{3}, "mean_rate": false},
	} {
		r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
		if e := decode[errorView](t, r); r.status != http.StatusUnprocessableEntity || !bytes.Contains([]byte(e.Error.Message), []byte("mean_rate")) {
			t.Errorf("%v: %d %s", body, r.status, r.body)
		}
	}
}
