package httpapi

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/testfn"
)

// The create option mirrored: the session reports it, its first run hands
// out mirrored pairs about the mean (x_j + x_{h+j} = 2m, h = ⌈λ/2⌉), false
// hands out no pair, an absent option is the algorithm's default, and an
// algorithm without it refuses true with a 422 naming the field.
func TestCreateMirrored(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	type view struct {
		ID       string    `json:"id"`
		Mirrored bool      `json:"mirrored"`
		Mean     []float64 `json:"mean"`
	}
	get := func(id string) view {
		return decode[view](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + id}))
	}
	pairs := func(id string) bool { return testfn.MirroredPairs(ts.ask(t, id).Candidates, get(id).Mean) }
	for _, alg := range []string{"cma-es", "self-cma-es"} {
		for _, on := range []bool{true, false} {
			s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "seed": 7, "population_size": 7,
				"algorithm": alg, "mirrored": on})
			for g := range 3 {
				if v := get(s.ID); v.Mirrored != on || pairs(s.ID) != on {
					t.Fatalf("%s, mirrored %t, generation %d: the session reports %t, pairs handed out %t", alg, on, g, v.Mirrored, pairs(s.ID))
				}
				ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
			}
		}
		s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": alg})
		if got, want := get(s.ID).Mirrored, defaults.For(alg).MirroredFirstRun; got != want {
			t.Errorf("%s without the option: mirrored %t, the default %t", alg, got, want)
		}
	}
	for _, body := range []map[string]any{
		{"x0": []float64{1}, "sigma0": 1, "algorithm": "sep-cma-es", "mirrored": true},
		{"integers": [][]float64{{0, 1, 2}}, "categories": []int{3}, "mirrored": false},
	} {
		r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
		if e := decode[errorView](t, r); r.status != http.StatusUnprocessableEntity || !bytes.Contains([]byte(e.Error.Message), []byte("mirrored")) {
			t.Errorf("%v: %d %s", body, r.status, r.body)
		}
	}
}
