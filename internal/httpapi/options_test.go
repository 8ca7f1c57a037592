package httpapi

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/testfn"
)

// restartsOf is the JSON of a session's active and restarts.
type restartsOf struct {
	Active   *bool `json:"active"`
	Restarts struct {
		Strategy   string   `json:"strategy"`
		Max        int      `json:"max"`
		IncPopSize *float64 `json:"incpopsize"`
		Point      string   `json:"point"`
		Region     *struct {
			Lower []float64 `json:"lower"`
			Upper []float64 `json:"upper"`
		} `json:"region"`
		Count int `json:"count"`
	} `json:"restarts"`
}

// active and each restarts field are taken, answered by the create and by
// GET as given, within the contract.
func TestCreateRestartOptions(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	body := map[string]any{
		"x0": []float64{1, 2}, "sigma0": 0.5, "algorithm": "cma-es", "seed": 1, "active": false,
		"bounds":   map[string]any{"lower": []float64{-5, -5}, "upper": []float64{5, 5}},
		"restarts": map[string]any{"strategy": "bipop", "max": 3, "incpopsize": 1.5, "point": "uniform", "region": map[string]any{"lower": []float64{-1, 0}, "upper": []float64{2, 5}}},
	}
	r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := decode[sessionView](t, r).ID
	get := ts.do(t, call{method: "GET", path: "/v1/sessions/" + id})
	for _, got := range []restartsOf{decode[restartsOf](t, r), decode[restartsOf](t, get)} {
		rs := got.Restarts
		if got.Active == nil || *got.Active || rs.Strategy != "bipop" || rs.Max != 3 || rs.IncPopSize == nil || *rs.IncPopSize != 1.5 || rs.Point != "uniform" ||
			rs.Region == nil || !reflect.DeepEqual(rs.Region.Lower, []float64{-1, 0}) || !reflect.DeepEqual(rs.Region.Upper, []float64{2, 5}) {
			t.Errorf("got %s", get.body)
		}
	}

	// Active, ipop, uniform in the bounds.
	body["active"] = true
	body["restarts"] = map[string]any{"strategy": "ipop", "max": 2, "point": "uniform"}
	got := decode[restartsOf](t, ts.do(t, call{method: "POST", path: "/v1/sessions", body: body}))
	if rs := got.Restarts; got.Active == nil || !*got.Active || rs.Strategy != "ipop" || rs.Max != 2 || rs.Point != "uniform" ||
		rs.Region == nil || !reflect.DeepEqual(rs.Region.Lower, []float64{-5, -5}) || rs.IncPopSize == nil || *rs.IncPopSize != defaults.For("cma-es").IncPopSize {
		t.Errorf("ipop uniform in the bounds: %+v", got)
	}

	// None: no incpopsize, no region.
	body["restarts"] = map[string]any{"strategy": "none"}
	got = decode[restartsOf](t, ts.do(t, call{method: "POST", path: "/v1/sessions", body: body}))
	if rs := got.Restarts; rs.Strategy != "none" || rs.Max != 0 || rs.IncPopSize != nil || rs.Point != "x0" || rs.Region != nil {
		t.Errorf("none: %+v", got)
	}
}

// A create that names neither the algorithm nor the new options gets
// internal/defaults'.
func TestCreateDefaultOptions(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	for _, alg := range []string{"", "cma-es", "self-cma-es"} {
		body := map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5}
		want := defaults.Algorithm
		if alg != "" {
			body["algorithm"], want = alg, alg
		}
		r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body})
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		def := defaults.For(want)
		got := decode[restartsOf](t, r)
		if got.Active == nil || *got.Active != def.Active {
			t.Errorf("%q: active %v, want %v", alg, got.Active, def.Active)
		}
		rs := got.Restarts
		if rs.Strategy != def.Restarts {
			t.Errorf("%q: strategy %q, want %q", alg, rs.Strategy, def.Restarts)
		}
		if def.Restarts != "none" && (rs.IncPopSize == nil || *rs.IncPopSize != def.IncPopSize || rs.Max < 1 || rs.Max > def.MaxRestarts) {
			t.Errorf("%q: %s", alg, r.body)
		}
		if rs.Point != defaults.PointX0 { // no bounds: x0 whatever the default
			t.Errorf("%q: point %q without bounds", alg, rs.Point)
		}
	}
}

// A BIPOP session's answers through its restarts, small and large runs,
// keep to the contract (regimes, stop reasons such as max_iter).
func TestBIPOPInTheContract(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 1, "algorithm": "cma-es", "population_size": 6, "seed": 2,
		"bounds":      map[string]any{"lower": []float64{-4, -4}, "upper": []float64{4, 4}},
		"restarts":    map[string]any{"strategy": "bipop", "max": 3, "point": "uniform"},
		"termination": map[string]any{"tol_fun": 1e-2}})
	for g := 0; ; g++ {
		if g > 2000 {
			t.Fatal("no 3 restarts in 2000 generations")
		}
		ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
		got := decode[restartsOf](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID}))
		if got.Restarts.Count >= 3 {
			break
		}
	}
	ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history"})
}

// termination.tol_worse: a cma-es session on Rastrigin, with the default,
// has restarts that end on tol_worse, and its answers keep to the
// contract; with 0 none does, nor with termination.tol_worse_delta 1; a
// negative ε or δ is refused, naming the field.
func TestTolWorseInTheContract(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	rastrigin := func(b batchView) map[string]any {
		f := make([]float64, len(b.Candidates))
		for i, x := range b.Candidates {
			f[i] = testfn.Rastrigin(x)
		}
		return map[string]any{"generation": b.Generation, "fitness": f}
	}
	type runs struct {
		Restarts struct {
			Runs []struct {
				StopReasons []struct {
					Name string `json:"name"`
				} `json:"stop_reasons"`
			} `json:"runs"`
		} `json:"restarts"`
	}
	endedOnTolWorse := func(termination map[string]any) bool {
		s := ts.create(t, map[string]any{"x0": []float64{3, 3, 3}, "sigma0": 2, "algorithm": "cma-es", "seed": 5,
			"bounds":      map[string]any{"lower": []float64{-5, -5, -5}, "upper": []float64{5, 5, 5}},
			"restarts":    map[string]any{"strategy": "bipop", "max": 4, "point": "uniform"},
			"termination": termination})
		for range 600 {
			ts.tell(t, s.ID, rastrigin(ts.ask(t, s.ID)))
		}
		ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history"})
		for _, r := range decode[runs](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})).Restarts.Runs {
			for _, x := range r.StopReasons {
				if x.Name == "tol_worse" {
					return true
				}
			}
		}
		return false
	}
	if !endedOnTolWorse(map[string]any{"max_evaluations": 100000}) {
		t.Error("the default: no run ended on tol_worse in 600 generations on Rastrigin")
	}
	if endedOnTolWorse(map[string]any{"max_evaluations": 100000, "tol_worse": 0}) {
		t.Error("tol_worse 0: a run ended on tol_worse")
	}
	if endedOnTolWorse(map[string]any{"max_evaluations": 100000, "tol_worse_delta": 1}) {
		t.Error("tol_worse_delta 1 (every run below where it began spared): a run ended on tol_worse")
	}
	r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: map[string]any{"x0": []float64{1}, "sigma0": 1, "termination": map[string]any{"tol_worse": -1}}, invalid: true})
	if e := decode[errorView](t, r); r.status != http.StatusUnprocessableEntity || e.Error.Code != "out_of_range" || !strings.Contains(e.Error.Message, "termination.tol_worse") {
		t.Errorf("tol_worse -1: %d %s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/v1/sessions", body: map[string]any{"x0": []float64{1}, "sigma0": 1, "termination": map[string]any{"tol_worse_delta": -1}}, invalid: true})
	if e := decode[errorView](t, r); r.status != http.StatusUnprocessableEntity || e.Error.Code != "out_of_range" || !strings.Contains(e.Error.Message, "termination.tol_worse_delta") {
		t.Errorf("tol_worse_delta -1: %d %s", r.status, r.body)
	}
}

// restarts.spare_best_small: a new cma-es session with nbipop reports the
// default, one that asks for true or false reports it, one with ipop
// false, and asking for it with ipop is a 422 naming the field that
// creates nothing.
func TestSpareBestSmallInTheContract(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	type view struct {
		ID       string `json:"id"`
		Restarts struct {
			Strategy       string `json:"strategy"`
			SpareBestSmall bool   `json:"spare_best_small"`
		} `json:"restarts"`
	}
	for _, c := range []struct {
		restarts map[string]any
		want     bool
	}{
		{map[string]any{"strategy": "nbipop"}, defaults.For(defaults.CMAES).SpareBestSmall},
		{map[string]any{"strategy": "nbipop", "spare_best_small": true}, true},
		{map[string]any{"strategy": "bipop", "spare_best_small": false}, false},
		{map[string]any{"strategy": "ipop"}, false},
	} {
		r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: map[string]any{"x0": []float64{1, 2}, "sigma0": 1, "algorithm": "cma-es", "restarts": c.restarts}})
		if v := decode[view](t, r); r.status != http.StatusCreated || v.Restarts.SpareBestSmall != c.want {
			t.Errorf("restarts %v: %d, spare_best_small %t, want %t", c.restarts, r.status, v.Restarts.SpareBestSmall, c.want)
		}
	}
	before := ts.do(t, call{method: "GET", path: "/v1/sessions"}).body
	r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: map[string]any{"x0": []float64{1}, "sigma0": 1, "restarts": map[string]any{"strategy": "ipop", "spare_best_small": true}}, invalid: true})
	if e := decode[errorView](t, r); r.status != http.StatusUnprocessableEntity || e.Error.Code != "out_of_range" || !strings.Contains(e.Error.Message, "restarts.spare_best_small") {
		t.Errorf("ipop with spare_best_small: %d %s", r.status, r.body)
	}
	if after := ts.do(t, call{method: "GET", path: "/v1/sessions"}).body; !bytes.Equal(before, after) {
		t.Error("the refused create changed the sessions listed")
	}
}
