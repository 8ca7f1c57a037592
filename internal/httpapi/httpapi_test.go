package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/internal/session"
)

// specPrefixes are the parts of the URL space that api/openapi.yaml
// describes; the web pages (/ui) are another package's.
var specPrefixes = []string{"/v1/", "/healthz", "/readyz", "/metrics", "/openapi.yaml"}

// Every route of the router is in the spec and every operation of the spec
// is a route.
func TestRoutesMatchSpec(t *testing.T) {
	doc, _ := loadSpec(t)
	ts := newTestServer(t, serverOpts{})
	var routes []string
	err := chi.Walk(ts.mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if hasPrefixAny(route, specPrefixes...) {
			routes = append(routes, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	slices.Sort(routes)
	slices.Sort(ops)
	for _, r := range routes {
		if !slices.Contains(ops, r) {
			t.Errorf("route %s is not in api/openapi.yaml", r)
		}
	}
	for _, o := range ops {
		if !slices.Contains(routes, o) {
			t.Errorf("api/openapi.yaml has %s, the router does not", o)
		}
	}
}

// writeOps are the operations that write to the store (a full disk is 507).
var writeOps = []string{"createSession", "deleteSession", "stopSession", "claim", "tell", "inject"}

// Every operation lists the statuses the middleware can answer it with:
// 401 and 429 (throttle) where the token is needed; 413 and 503 (bodies
// under way) where a body is read or allowed; 415 where the body is JSON;
// 507 on every write.
func TestSpecMiddlewareStatuses(t *testing.T) {
	doc, _ := loadSpec(t)
	writes := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			var want []string
			if op.Security == nil || len(*op.Security) > 0 { // the document's: bearerAuth
				want = append(want, "401", "429")
			}
			if op.RequestBody != nil {
				want = append(want, "413", "415", "503")
			}
			if op.OperationID == "askPost" { // any body is ignored, but read
				want = append(want, "413", "503")
			}
			if slices.Contains(writeOps, op.OperationID) {
				want = append(want, "507")
				writes++
			}
			for _, code := range want {
				if op.Responses.Value(code) == nil {
					t.Errorf("%s %s (%s) does not list %s", method, path, op.OperationID, code)
				}
			}
		}
	}
	if writes != len(writeOps) {
		t.Errorf("%d of the %d writes %v found in the spec", writes, len(writeOps), writeOps)
	}
}

func TestSessionLifecycle(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	if r := ts.do(t, call{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
	for _, alg := range []string{"cma-es", "self-cma-es"} {
		t.Run(alg, func(t *testing.T) {
			s := ts.create(t, map[string]any{
				"x0": []float64{1, -1, 0.5}, "sigma0": 0.3, "algorithm": alg, "seed": uint64(math.MaxUint64),
				"name": "lifecycle", "metadata": map[string]any{"owner": "test", "tags": []string{"a"}},
				"bounds":      map[string]any{"lower": []float64{-2, -2, -2}, "upper": []float64{2, 2, 2}},
				"restarts":    map[string]any{"strategy": "ipop", "max": 2},
				"termination": map[string]any{"max_evaluations": 1000, "target_fitness": 1e-10, "tol_fun": 0, "stagnation": false},
			})
			if s.Seed != math.MaxUint64 || s.Generation != 0 || s.Status != "running" {
				t.Fatalf("created %+v", s)
			}
			b := ts.ask(t, s.ID)
			if b2 := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/ask"}); !bytes.Equal(b2.body, mustJSON(t, b)) {
				t.Fatalf("POST ask differs from GET ask")
			}
			for _, x := range b.Candidates {
				for _, v := range x {
					if v < -2 || v > 2 {
						t.Fatalf("candidate %v outside the bounds", x)
					}
				}
			}
			// A failed evaluation is null.
			tell := sphereTell(b)
			f := tell["fitness"].([]float64)
			fit := make([]any, len(f))
			for i := range f {
				fit[i] = f[i]
			}
			fit[1] = nil
			body := map[string]any{"generation": 0, "fitness": fit}
			first := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell", body: body})
			retry := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell", body: body})
			if first.status != 200 || !bytes.Equal(first.body, retry.body) {
				t.Fatalf("retried tell: %d %s\nthen %d %s", first.status, first.body, retry.status, retry.body)
			}
			for range 5 {
				ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
			}
			got := decode[sessionView](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID}))
			if got.Generation != 6 || got.Evaluations != 6*got.PopulationSize || got.Best == nil {
				t.Fatalf("after 6 tells: %+v", got)
			}
			h := decode[struct {
				Records []map[string]any `json:"records"`
			}](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history?from=2&limit=3"}))
			if len(h.Records) != 3 || h.Records[0]["generation"] != 2.0 || (alg == "self-cma-es") != (h.Records[0]["aux_mean"] != nil) {
				t.Fatalf("history: %+v", h.Records)
			}
			csv := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history?format=csv"})
			if lines := strings.Split(strings.TrimSpace(string(csv.body)), "\n"); csv.status != 200 || len(lines) != 7 ||
				!strings.HasPrefix(lines[0], "generation,run,lambda") || !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") {
				t.Fatalf("csv history: %d %q", csv.status, csv.body)
			}
		})
	}
	list := decode[struct {
		Sessions []sessionView `json:"sessions"`
		Next     string        `json:"next"`
	}](t, ts.do(t, call{method: "GET", path: "/v1/sessions?limit=1"}))
	if len(list.Sessions) != 1 || list.Next == "" {
		t.Fatalf("list page: %+v", list)
	}
	rest := decode[struct {
		Sessions []sessionView `json:"sessions"`
		Next     string        `json:"next"`
	}](t, ts.do(t, call{method: "GET", path: "/v1/sessions?after=" + list.Next}))
	if len(rest.Sessions) != 1 || rest.Next != "" || rest.Sessions[0].ID == list.Sessions[0].ID {
		t.Fatalf("second page: %+v", rest)
	}
	id := rest.Sessions[0].ID
	if r := ts.do(t, call{method: "DELETE", path: "/v1/sessions/" + id}); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	for _, c := range []call{
		{method: "GET", path: "/v1/sessions/" + id},
		{method: "DELETE", path: "/v1/sessions/" + id},
		{method: "GET", path: "/v1/sessions/" + id + "/history"},
	} {
		if r := ts.do(t, c); r.status != http.StatusNotFound {
			t.Errorf("%s %s after delete: %d %s", c.method, c.path, r.status, r.body)
		}
	}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return append(b, '\n')
}

// Bad input gets the documented 4xx with an error naming the problem, and
// changes nothing: GET of the session is byte-identical before and after.
func TestBadInput(t *testing.T) {
	const token = "s3cret-token"
	ts := newTestServer(t, serverOpts{token: token, maxBody: 4096, limits: session.Limits{
		MaxDimension: 50, MaxPopulation: 1000, MaxBatch: 100000, MaxNameBytes: 64, MaxMetadataLen: 1024,
	}})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 1, "seed": 5, "population_size": 100})
	b := ts.ask(t, s.ID)
	ts.tell(t, s.ID, sphereTell(b)) // generation 0 told: 1 is pending
	stale := sphereTell(b)
	stale["fitness"].([]float64)[0] += 1
	good := sphereTell(ts.ask(t, s.ID))
	sp := "/v1/sessions/" + s.ID
	big := `{"x0": [` + strings.Repeat("1,", 3000) + `1], "sigma0": 1}`
	// The session holds candidate 0's value of generation 1.
	f0 := good["fitness"].([]float64)[0]
	ts.tell(t, s.ID, map[string]any{"generation": 1, "indices": []int{0}, "fitness": []float64{f0}})
	against := slices.Clone(good["fitness"].([]float64))
	against[0]++
	part := func(indices, fitness string) string {
		return `{"generation": 1, "indices": ` + indices + `, "fitness": ` + fitness + `}`
	}

	tests := []struct {
		name   string
		c      call
		status int
		code   string
		msg    string // in the message
	}{
		{"malformed JSON", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1,`}, 400, "invalid", "truncated"},
		{"malformed JSON syntax", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1,]}`}, 400, "invalid", "malformed JSON"},
		{"empty body", call{method: "POST", path: "/v1/sessions", body: ``}, 400, "invalid", "empty"},
		{"trailing data", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1} {}`}, 400, "invalid", "after the JSON"},
		{"not an object", call{method: "POST", path: "/v1/sessions", body: `[1, 2]`}, 400, "invalid", "want an object"},
		{"unknown field", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "sigma": 2}`}, 400, "invalid", `unknown field "sigma"`},
		{"unknown nested field", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "termination": {"tolfun": 1}}`}, 400, "invalid", `"tolfun"`},
		{"x0 wrong type", call{method: "POST", path: "/v1/sessions", body: `{"x0": "1,2", "sigma0": 1}`}, 400, "invalid", "x0"},
		{"sigma0 string", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": "1"}`}, 400, "invalid", "sigma0"},
		{"NaN string", call{method: "POST", path: "/v1/sessions", body: `{"x0": ["NaN"], "sigma0": 1}`}, 400, "invalid", "x0"},
		{"Infinity string", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": "Infinity"}`}, 400, "invalid", "sigma0"},
		{"bare NaN", call{method: "POST", path: "/v1/sessions", body: `{"x0": [NaN], "sigma0": 1}`}, 400, "invalid", "x0[0]: NaN is not a JSON number"},
		{"duplicate key", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "x0": [2]}`}, 400, "invalid", `x0: the key "x0" is given twice`},
		{"name in another case", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "Fitness": [1]}`}, 400, "invalid", `Fitness: field names are case-sensitive`},
		{"unknown field suggested", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "termination": {"ftarget": 1}}`}, 400, "invalid", "termination.ftarget: unknown field \"ftarget\" (did you mean target_fitness?)"},
		{"create as a form", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1}`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "unsupported_media_type", "application/json"},
		{"tell as text", call{method: "POST", path: sp + "/tell", body: good, header: map[string]string{"Content-Type": "text/plain"}}, 415, "unsupported_media_type", "application/json"},
		{"tell without a Content-Type", call{method: "POST", path: sp + "/tell", body: good, header: map[string]string{"Content-Type": ""}}, 415, "unsupported_media_type", "application/json"},
		{"inject as text", call{method: "POST", path: sp + "/inject", body: `{"points": []}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, "unsupported_media_type", "application/json"},
		{"x0 1e999", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1, 1e999], "sigma0": 1}`}, 400, "invalid", "1e999"},
		{"x0 null element", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1, null], "sigma0": 1}`}, 400, "invalid", "x0[1]"},
		{"x0 missing", call{method: "POST", path: "/v1/sessions", body: `{"sigma0": 1}`}, 400, "invalid", "x0 is required"},
		{"sigma0 missing", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1]}`}, 400, "invalid", "sigma0 is required"},
		{"seed negative", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "seed": -1}`}, 400, "invalid", "seed"},
		{"population fraction", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "population_size": 2.5}`}, 400, "invalid", "population_size"},
		{"x0 empty", call{method: "POST", path: "/v1/sessions", body: `{"x0": [], "sigma0": 1}`}, 422, "out_of_range", "x0 has 0 values"},
		{"sigma0 zero", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 0}`}, 422, "out_of_range", "sigma0"},
		{"sigma0 negative", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": -0.5}`}, 422, "out_of_range", "sigma0"},
		{"lambda 1", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "population_size": 1}`}, 422, "out_of_range", "population_size"},
		{"lambda over limit", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "population_size": 1001}`}, 422, "out_of_range", "population_size"},
		{"dimension over limit", call{method: "POST", path: "/v1/sessions", body: `{"x0": [` + strings.Repeat("0,", 50) + `0], "sigma0": 1}`}, 422, "out_of_range", "x0 has 51 values"},
		{"bounds lower = upper", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1, 1], "sigma0": 1, "bounds": {"lower": [0, 1], "upper": [2, 1]}}`}, 422, "out_of_range", "bounds.lower[1]"},
		{"bounds lower > upper", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "bounds": {"lower": [3], "upper": [2]}}`}, 422, "out_of_range", "bounds.lower[0]"},
		{"x0 outside bounds", call{method: "POST", path: "/v1/sessions", body: `{"x0": [5], "sigma0": 1, "bounds": {"lower": [0], "upper": [2]}}`}, 422, "out_of_range", "outside the bounds"},
		{"bounds length", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "bounds": {"lower": [0, 0], "upper": [2, 2]}}`}, 422, "out_of_range", "bounds"},
		{"unknown algorithm", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "algorithm": "pso"}`}, 422, "out_of_range", "algorithm"},
		{"init for cma-es", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "algorithm": "cma-es", "hyperparameters": {"init": "uniform"}}`}, 422, "out_of_range", "init"},
		{"restarts strategy", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "lpop"}}`}, 422, "out_of_range", "restarts.strategy"},
		{"restarts too many", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "max": 40}}`}, 422, "out_of_range", "restarts.max"},
		{"bipop too many", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "population_size": 100, "restarts": {"strategy": "bipop", "max": 4}}`}, 422, "out_of_range", "restarts.max 4"},
		{"bipop max 0", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "bipop", "max": 0}}`}, 422, "out_of_range", "restarts.max 0"},
		{"max with none", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "none", "max": 2}}`}, 422, "out_of_range", "restarts.max"},
		{"restarts over the limits", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "population_size": 600, "restarts": {"strategy": "bipop"}}`}, 422, "out_of_range", "restarts"},
		{"active not a boolean", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "active": "yes"}`}, 400, "invalid", "active"},
		{"incpopsize 1", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "incpopsize": 1}}`}, 422, "out_of_range", "restarts.incpopsize"},
		{"incpopsize string", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "incpopsize": "2"}}`}, 400, "invalid", "restarts.incpopsize"},
		{"incpopsize with none", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "none", "incpopsize": 3}}`}, 422, "out_of_range", "restarts.incpopsize"},
		{"incpopsize past the limits", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "population_size": 100, "restarts": {"strategy": "ipop", "max": 2, "incpopsize": 5}}`}, 422, "out_of_range", "restarts.max 2"},
		{"point unknown", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "bipop", "point": "best"}}`}, 422, "out_of_range", "restarts.point"},
		{"point with none", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "none", "point": "x0"}}`}, 422, "out_of_range", "restarts.point"},
		{"uniform without a box", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "uniform"}}`}, 422, "out_of_range", "restarts.point"},
		{"region with x0", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "x0", "region": {"lower": [0], "upper": [1]}}}`}, 422, "out_of_range", "restarts.region"},
		{"region dimension", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "uniform", "region": {"lower": [0, 0], "upper": [1, 1]}}}`}, 422, "out_of_range", "restarts.region"},
		{"region lower = upper", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "uniform", "region": {"lower": [1], "upper": [1]}}}`}, 422, "out_of_range", "restarts.region.lower[0]"},
		{"region outside the bounds", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "bounds": {"lower": [0], "upper": [2]}, "restarts": {"strategy": "ipop", "point": "uniform", "region": {"lower": [0], "upper": [3]}}}`}, 422, "out_of_range", "restarts.region.upper[0]"},
		{"region without upper", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "uniform", "region": {"lower": [0]}}}`}, 400, "invalid", "restarts.region"},
		{"region null element", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "uniform", "region": {"lower": [null], "upper": [1]}}}`}, 400, "invalid", "restarts.region.lower[0]"},
		{"region 1e999", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "point": "uniform", "region": {"lower": [0], "upper": [1e999]}}}`}, 400, "invalid", "1e999"},
		{"restarts unknown field", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "restarts": {"strategy": "bipop", "inc_pop_size": 2}}`}, 400, "invalid", `"inc_pop_size"`},
		{"tolerance negative", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "termination": {"tol_x": -1}}`}, 422, "out_of_range", "tol_x"},
		{"metadata not object", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "metadata": [1]}`}, 400, "invalid", "metadata"},
		{"name too long", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "name": "` + strings.Repeat("n", 65) + `"}`}, 422, "out_of_range", "name"},
		{"body over the limit", call{method: "POST", path: "/v1/sessions", body: big}, 413, "too_large", "limit"},
		{"tell body over the limit", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [` + strings.Repeat("1,", 3000) + `1]}`}, 413, "too_large", "limit"},
		{"missing token", call{method: "GET", path: sp, header: map[string]string{"Authorization": ""}}, 401, "unauthorized", "missing"},
		{"wrong token", call{method: "GET", path: sp, header: map[string]string{"Authorization": "Bearer nope"}}, 401, "unauthorized", "wrong"},
		{"wrong scheme", call{method: "POST", path: sp + "/tell", body: good, header: map[string]string{"Authorization": "Basic " + token}}, 401, "unauthorized", "wrong"},
		{"token prefix", call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1}`, header: map[string]string{"Authorization": "Bearer " + token[:5]}}, 401, "unauthorized", "wrong"},
		{"unknown session get", call{method: "GET", path: "/v1/sessions/nope"}, 404, "not_found", "nope"},
		{"unknown session ask", call{method: "GET", path: "/v1/sessions/nope/ask"}, 404, "not_found", "nope"},
		{"unknown session tell", call{method: "POST", path: "/v1/sessions/nope/tell", body: good}, 404, "not_found", "nope"},
		{"unknown session history", call{method: "GET", path: "/v1/sessions/nope/history"}, 404, "not_found", "nope"},
		{"unknown session delete", call{method: "DELETE", path: "/v1/sessions/nope"}, 404, "not_found", "nope"},
		{"stale generation", call{method: "POST", path: sp + "/tell", body: stale}, 409, "conflict", "pending generation is 1"},
		{"future generation", call{method: "POST", path: sp + "/tell", body: `{"generation": 7, "fitness": [1,2,3,4,5,6,7]}`}, 409, "conflict", "pending generation is 1"},
		{"negative generation", call{method: "POST", path: sp + "/tell", body: `{"generation": -1, "fitness": [1,2,3,4,5,6,7]}`}, 422, "out_of_range", "generation"},
		{"fitness too short", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1, 2]}`}, 422, "out_of_range", "fitness has 2 values, want 100"},
		{"fitness too long", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1,2,3,4,5,6,7,8]}`}, 422, "out_of_range", "fitness has 8 values"},
		{"fitness NaN string", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1,2,3,"NaN",5,6,7]}`}, 400, "invalid", "fitness"},
		{"fitness Infinity string", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1,2,3,"Infinity",5,6,7]}`}, 400, "invalid", "fitness"},
		{"fitness 1e999", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1,2,3,-1e999,5,6,7]}`}, 400, "invalid", "1e999"},
		{"fitness missing", call{method: "POST", path: sp + "/tell", body: `{"generation": 1}`}, 400, "invalid", "fitness is required"},
		{"generation missing", call{method: "POST", path: sp + "/tell", body: `{"fitness": [1,2,3,4,5,6,7]}`}, 400, "invalid", "generation is required"},
		{"generation string", call{method: "POST", path: sp + "/tell", body: `{"generation": "1", "fitness": [1,2,3,4,5,6,7]}`}, 400, "invalid", "generation"},
		{"tell unknown field", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1,2,3,4,5,6,7], "x": 1}`}, 400, "invalid", `unknown field "x"`},
		{"tell malformed", call{method: "POST", path: sp + "/tell", body: `{"generation": 1, "fitness": [1,2`}, 400, "invalid", "truncated"},
		{"indices null element", call{method: "POST", path: sp + "/tell", body: part(`[null]`, `[1]`)}, 400, "invalid", "indices[0] is null"},
		{"indices fraction", call{method: "POST", path: sp + "/tell", body: part(`[1.5]`, `[1]`)}, 400, "invalid", "indices"},
		{"indices not an array", call{method: "POST", path: sp + "/tell", body: part(`3`, `[1]`)}, 400, "invalid", "indices"},
		{"indices and fitness lengths", call{method: "POST", path: sp + "/tell", body: part(`[1, 2]`, `[1]`)}, 422, "out_of_range", "indices has 2 values and fitness 1"},
		{"indices empty", call{method: "POST", path: sp + "/tell", body: part(`[]`, `[]`)}, 422, "out_of_range", "indices is empty"},
		{"index negative", call{method: "POST", path: sp + "/tell", body: part(`[-1]`, `[1]`)}, 422, "out_of_range", "indices[0] is -1"},
		{"index beyond λ", call{method: "POST", path: sp + "/tell", body: part(`[5, 100]`, `[1, 2]`)}, 422, "out_of_range", "indices[1] is 100, want 0 to 99"},
		{"index repeated", call{method: "POST", path: sp + "/tell", body: part(`[3, 3]`, `[1, 1]`)}, 422, "out_of_range", "indices[1] repeats candidate 3"},
		{"part infinite", call{method: "POST", path: sp + "/tell", body: part(`[3]`, `[1e999]`)}, 400, "invalid", "1e999"},
		{"held value told otherwise", call{method: "POST", path: sp + "/tell", body: part(`[7, 0]`, `[1, null]`)}, 409, "conflict", "candidate 0 of generation 1 was told"},
		{"whole tell against a held value", call{method: "POST", path: sp + "/tell", body: map[string]any{"generation": 1, "fitness": against}}, 409, "conflict", "candidate 0 of generation 1 was told"},
		{"tell next not a boolean", call{method: "POST", path: sp + "/tell?next=please", body: good}, 400, "invalid", `next "please"`},
		{"history bad from", call{method: "GET", path: sp + "/history?from=x"}, 400, "invalid", "from"},
		{"history negative from", call{method: "GET", path: sp + "/history?from=-1"}, 422, "out_of_range", "from"},
		{"history bad format", call{method: "GET", path: sp + "/history?format=xml"}, 422, "out_of_range", "format"},
		{"list bad limit", call{method: "GET", path: "/v1/sessions?limit=0"}, 422, "out_of_range", "limit"},
	}
	before := ts.do(t, call{method: "GET", path: sp})
	list := ts.do(t, call{method: "GET", path: "/v1/sessions"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.invalid = true
			r := ts.do(t, tc.c)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			e := decode[errorView](t, r)
			if e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("error %+v, want code %q and a message with %q", e.Error, tc.code, tc.msg)
			}
			if r.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: %v", r.header)
			}
			if tc.code == "conflict" && (e.Error.Generation == nil || *e.Error.Generation != 1) {
				t.Errorf("conflict without the pending generation: %s", r.body)
			}
			if after := ts.do(t, call{method: "GET", path: sp}); !bytes.Equal(after.body, before.body) {
				t.Fatalf("the session changed:\n%s\n%s", before.body, after.body)
			}
		})
	}
	if after := ts.do(t, call{method: "GET", path: "/v1/sessions"}); !bytes.Equal(after.body, list.body) {
		t.Errorf("bad input changed the list of sessions:\n%s\n%s", list.body, after.body)
	}
	// The good tell still applies.
	if s := ts.tell(t, s.ID, good); s.Generation != 2 {
		t.Errorf("generation %d after the good tell, want 2", s.Generation)
	}
	// Routes outside the contract.
	if r := ts.do(t, call{method: "PUT", path: sp, invalid: true}); r.status != http.StatusMethodNotAllowed {
		t.Errorf("PUT session: %d", r.status)
	}
	if r := ts.do(t, call{method: "GET", path: "/v2/x", invalid: true}); r.status != http.StatusNotFound || decode[errorView](t, r).Error.Code != "not_found" {
		t.Errorf("unknown route: %d %s", r.status, r.body)
	}
	// Health needs no token.
	if r := ts.do(t, call{method: "GET", path: "/healthz", header: map[string]string{"Authorization": ""}}); r.status != 200 {
		t.Errorf("healthz without token: %d", r.status)
	}
}

// A stopped session answers ask and tell with 409 and its stop reasons, and
// a retry of the tell that stopped it with the stopped session.
func TestStoppedSession(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 1}, "sigma0": 1, "seed": 1, "algorithm": "cma-es",
		"termination": map[string]any{"max_evaluations": 12}})
	var last map[string]any
	for s.Status == "running" {
		last = sphereTell(ts.ask(t, s.ID))
		s = ts.tell(t, s.ID, last)
	}
	for _, c := range []call{
		{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"},
		{method: "POST", path: "/v1/sessions/" + s.ID + "/tell", body: map[string]any{"generation": s.Generation, "fitness": last["fitness"]}},
	} {
		r := ts.do(t, c)
		var e struct {
			Error struct {
				Code        string `json:"code"`
				StopReasons []struct {
					Name string `json:"name"`
				} `json:"stop_reasons"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.body, &e); err != nil || r.status != 409 || e.Error.Code != "stopped" ||
			len(e.Error.StopReasons) != 1 || e.Error.StopReasons[0].Name != "max_evaluations" {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	if again := ts.tell(t, s.ID, last); again.Status != "stopped" || again.Generation != s.Generation {
		t.Errorf("retry of the stopping tell: %+v", again)
	}
}

// tell?next=true answers with the session and, as "next", exactly the batch
// the next ask answers; a retry answers the same; once the session stops,
// next is null.
func TestTellNext(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "seed": 9, "algorithm": "self-cma-es",
		"population_size": 8, "termination": map[string]any{"max_evaluations": 80}})
	tell := sphereTell(ts.ask(t, s.ID))
	for gen := 0; ; gen++ {
		path := "/v1/sessions/" + s.ID + "/tell?next=true"
		r := ts.do(t, call{method: "POST", path: path, body: tell})
		if r.status != 200 {
			t.Fatalf("generation %d: %d %s", gen, r.status, r.body)
		}
		var got struct {
			sessionView
			Next json.RawMessage `json:"next"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Generation != gen+1 {
			t.Fatalf("told generation %d, the session is at %d", gen, got.Generation)
		}
		// The session part equals what GET answers now.
		plain := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})
		var a, b map[string]any
		json.Unmarshal(r.body, &a)
		json.Unmarshal(plain.body, &b)
		delete(a, "next")
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("generation %d: the session in the answer differs from GET:\n%s\n%s", gen, r.body, plain.body)
		}
		// A retry answers the same bytes.
		if again := ts.do(t, call{method: "POST", path: path, body: tell}); !bytes.Equal(again.body, r.body) {
			t.Fatalf("generation %d: the retry answers\n%s\nnot\n%s", gen, again.body, r.body)
		}
		if got.Status == "stopped" {
			if string(got.Next) != "null" {
				t.Fatalf("stopped session with next %s", got.Next)
			}
			if gen < 5 {
				t.Fatalf("stopped after %d generations", gen+1)
			}
			break
		}
		// next is, byte for byte, the body of the next ask.
		ask := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"})
		if !bytes.Equal(append(append([]byte(nil), got.Next...), '\n'), ask.body) {
			t.Fatalf("generation %d: next\n%s\nask\n%s", gen, got.Next, ask.body)
		}
		tell = sphereTell(decode[batchView](t, ask))
	}
	// Without next (or next=false), no next field.
	for _, q := range []string{"", "?next=false"} {
		r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell" + q, body: tell})
		if bytes.Contains(r.body, []byte(`"next"`)) {
			t.Errorf("tell%s: %s", q, r.body)
		}
	}
}

// A generation whose evaluations all failed leaves the distribution and is
// sampled anew.
func TestAllNullGeneration(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "seed": 3})
	b := ts.ask(t, s.ID)
	nulls := make([]any, len(b.Candidates))
	after := ts.tell(t, s.ID, map[string]any{"generation": 0, "fitness": nulls})
	if after.Generation != 1 || after.Best != nil {
		t.Fatalf("after an all-null tell: %+v", after)
	}
	b2 := ts.ask(t, s.ID)
	if slices.EqualFunc(b.Candidates, b2.Candidates, slices.Equal) {
		t.Error("the batch after an all-null generation is the same points")
	}
	h := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history"})
	if !bytes.Contains(h.body, []byte(`"best":null`)) {
		t.Errorf("history of an all-null generation: %s", h.body)
	}
}

// 64 clients drive 64 sessions; 8 clients race tells on one session. Every
// generation is applied exactly once.
func TestConcurrentClients(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	const gens = 8
	t.Run("64 sessions", func(t *testing.T) {
		var wg sync.WaitGroup
		ids := make([]string, 64)
		for i := range ids {
			wg.Go(func() {
				s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3, 4}, "sigma0": 1, "seed": i, "algorithm": []string{"cma-es", "self-cma-es"}[i%2]})
				ids[i] = s.ID
				for g := range gens {
					b := ts.ask(t, s.ID)
					if b.Generation != g {
						t.Errorf("session %d: asked generation %d, want %d", i, b.Generation, g)
						return
					}
					ts.tell(t, s.ID, sphereTell(b))
				}
			})
		}
		wg.Wait()
		for _, id := range ids {
			checkHistory(t, ts, id, gens)
		}
	})
	t.Run("8 clients on one session", func(t *testing.T) {
		s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3, 4}, "sigma0": 1, "seed": 99})
		var wg sync.WaitGroup
		var mu sync.Mutex
		applied := map[int]int{} // generation -> answers with generation+1 from a first application or a retry
		for c := range 8 {
			wg.Go(func() {
				for {
					b := ts.ask(t, s.ID)
					if b.Generation >= 4*gens {
						return
					}
					tell := sphereTell(b)
					if c%2 == 1 {
						// Half the clients tell other values: they conflict with
						// whoever applied first, or are applied themselves.
						tell["fitness"].([]float64)[0] += float64(c)
					}
					r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell", body: tell})
					switch r.status {
					case 200:
						mu.Lock()
						applied[b.Generation]++
						mu.Unlock()
					case 409:
					default:
						t.Errorf("racing tell: %d %s", r.status, r.body)
						return
					}
				}
			})
		}
		wg.Wait()
		checkHistory(t, ts, s.ID, 4*gens)
		for g := range 4 * gens {
			if applied[g] < 1 {
				t.Errorf("generation %d: no tell succeeded", g)
			}
		}
	})
}

// checkHistory checks that session id has exactly one history record per
// generation 0..gens-1.
func checkHistory(t *testing.T, ts *testServer, id string, gens int) {
	t.Helper()
	h := decode[struct {
		Records []struct {
			Generation  int `json:"generation"`
			Evaluations int `json:"evaluations"`
			Lambda      int `json:"lambda"`
		} `json:"records"`
	}](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + id + "/history"}))
	if len(h.Records) != gens {
		t.Fatalf("session %s: %d history records, want %d", id, len(h.Records), gens)
	}
	for i, r := range h.Records {
		if r.Generation != i || r.Evaluations != (i+1)*r.Lambda {
			t.Fatalf("session %s: record %d is %+v", id, i, r)
		}
	}
	s := decode[sessionView](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + id}))
	if s.Generation != gens || s.Evaluations != gens*s.PopulationSize {
		t.Fatalf("session %s: generation %d, evaluations %d", id, s.Generation, s.Evaluations)
	}
}

// Floats go out as encoding/json writes them (shortest round trip), with
// null for what is not finite.
func TestNumberEncoding(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-7, 1e-6, 1e20, 1e21, 123456789e-300, math.MaxFloat64,
		math.SmallestNonzeroFloat64, 0.1, 1.0 / 3, -2.5e-9}
	for _, v := range vals {
		want, _ := json.Marshal(v)
		if got := appendNum(nil, v); string(got) != string(want) {
			t.Errorf("appendNum(%v) = %s, want %s", v, got, want)
		}
		var back float64
		json.Unmarshal(appendNum(nil, v), &back)
		if math.Float64bits(back) != math.Float64bits(v) {
			t.Errorf("%v does not read back: %v", v, back)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(appendNum(nil, v)); got != "null" {
			t.Errorf("appendNum(%v) = %s, want null", v, got)
		}
	}
	b, err := json.Marshal(matrix{{1, math.NaN()}, {}})
	if err != nil || string(b) != `[[1,null],[]]` {
		t.Errorf("matrix: %s, %v", b, err)
	}
}

// The batches of ask and tell?next=true (encoded in parts on all cores for
// a large batch) are appendBatch's bytes of the Manager's pending batch,
// generation after generation.
func TestEncodedBatchAnswers(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	a := ts.create(t, map[string]any{"x0": make([]float64, 64), "sigma0": 0.5, "seed": 11, "population_size": 80})
	want := func() []byte {
		t.Helper()
		b, err := ts.m.Ask(context.Background(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		return appendBatch(nil, b)
	}
	for gen := range 4 {
		ask := ts.do(t, call{method: "GET", path: "/v1/sessions/" + a.ID + "/ask"})
		if ask.status != 200 || !bytes.Equal(ask.body, append(want(), '\n')) {
			t.Fatalf("generation %d: the ask is not the batch's encoding (%d bytes)", gen, len(ask.body))
		}
		next := ts.do(t, call{method: "POST", path: "/v1/sessions/" + a.ID + "/tell?next=true", body: sphereTell(decode[batchView](t, ask))})
		i := bytes.Index(next.body, []byte(`"next":`))
		if i < 0 || !bytes.Equal(next.body[i+len(`"next":`):], append(want(), "}\n"...)) {
			t.Fatalf("generation %d: the next batch is not the batch's encoding", gen)
		}
	}
}

// GET /openapi.yaml serves api/openapi.yaml without the token, with an
// ETag that If-None-Match answers 304 to.
func TestOpenAPIDocument(t *testing.T) {
	want, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, serverOpts{token: "s3cret"})
	r := ts.do(t, call{method: "GET", path: "/openapi.yaml", header: map[string]string{"Authorization": ""}})
	if r.status != http.StatusOK || !bytes.Equal(r.body, want) || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("GET /openapi.yaml: %d, %s, %d bytes (the file has %d)", r.status, r.header.Get("Content-Type"), len(r.body), len(want))
	}
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	r = ts.do(t, call{method: "GET", path: "/openapi.yaml", header: map[string]string{"Authorization": "", "If-None-Match": etag}})
	if r.status != http.StatusNotModified || len(r.body) != 0 {
		t.Fatalf("If-None-Match with the current ETag: %d, %d bytes", r.status, len(r.body))
	}
	r = ts.do(t, call{method: "GET", path: "/openapi.yaml", header: map[string]string{"Authorization": "", "If-None-Match": `"0000"`}})
	if r.status != http.StatusOK || !bytes.Equal(r.body, want) {
		t.Fatalf("If-None-Match with another ETag: %d, %d bytes", r.status, len(r.body))
	}
}

// POST /v1/sessions with an Idempotency-Key makes at most one session: the
// same create again answers it (200, Idempotent-Replayed), another body
// with the key is 422, a malformed key 400, and DELETE frees the key.
func TestIdempotencyKey(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	body := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": "cma-es"}
	create := func(key string, body any, invalid bool) response {
		return ts.do(t, call{method: "POST", path: "/v1/sessions", body: body, header: map[string]string{"Idempotency-Key": key}, invalid: invalid})
	}
	first := create("4f1c9a2e-run", body, false)
	if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first create: %d %s", first.status, first.body)
	}
	s := decode[sessionView](t, first)
	for _, key := range []string{"4f1c9a2e-run", `"4f1c9a2e-run"`} {
		r := create(key, body, false)
		get := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})
		if r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" || r.header.Get("Location") != "/v1/sessions/"+s.ID || !bytes.Equal(r.body, get.body) {
			t.Fatalf("create again with key %s: %d %v\n%s\nwant the session\n%s", key, r.status, r.header, r.body, get.body)
		}
	}
	other := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.7, "algorithm": "cma-es"}
	if r := create("4f1c9a2e-run", other, false); r.status != http.StatusUnprocessableEntity || decode[errorView](t, r).Error.Code != "out_of_range" {
		t.Fatalf("another body with the key: %d %s", r.status, r.body)
	}
	if r := create("with space", body, false); r.status != http.StatusBadRequest || decode[errorView](t, r).Error.Code != "invalid" {
		t.Fatalf("a key with a space: %d %s", r.status, r.body)
	}
	if r := create(strings.Repeat("k", 300), body, true); r.status != http.StatusBadRequest {
		t.Fatalf("a key of 300 bytes: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/sessions"}); !bytes.Contains(r.body, []byte(s.ID)) || bytes.Count(r.body, []byte(`"id"`)) != 1 {
		t.Fatalf("sessions after the creates with one key: %s", r.body)
	}
	if r := ts.do(t, call{method: "DELETE", path: "/v1/sessions/" + s.ID}); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := create("4f1c9a2e-run", other, false); r.status != http.StatusCreated || decode[sessionView](t, r).ID == s.ID {
		t.Fatalf("the key after its session was deleted: %d %s", r.status, r.body)
	}
}

// POST /v1/sessions/{id}/stop ends a session: 200 with it stopped
// (requested), ask then 409 stopped, and a second stop changes nothing.
func TestStopSession(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "algorithm": "cma-es", "seed": 3})
	ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
	stop := call{method: "POST", path: "/v1/sessions/" + s.ID + "/stop"}
	r := ts.do(t, stop)
	var got struct {
		Status      string `json:"status"`
		StopReasons []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
		} `json:"stop_reasons"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil || r.status != http.StatusOK || got.Status != "stopped" ||
		len(got.StopReasons) != 1 || got.StopReasons[0].Name != "requested" || got.StopReasons[0].Value != 1 {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	if a := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"}); a.status != http.StatusConflict || decode[errorView](t, a).Error.Code != "stopped" {
		t.Fatalf("ask after stop: %d %s", a.status, a.body)
	}
	if get := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID}); !bytes.Equal(get.body, r.body) {
		t.Fatalf("GET after stop differs:\n%s\n%s", get.body, r.body)
	}
	if again := ts.do(t, stop); again.status != http.StatusOK || !bytes.Equal(again.body, r.body) {
		t.Fatalf("stop again: %d\n%s\nwant\n%s", again.status, again.body, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions/nope/stop"}); r.status != http.StatusNotFound {
		t.Fatalf("stop of an unknown session: %d %s", r.status, r.body)
	}
}

// Partial tells over HTTP: each part's answer shows what the session holds
// (and, with next=true, the same batch until the generation is complete),
// a part sent again changes nothing, and the last part applies the
// generation as the whole tell does on a twin session.
func TestPartialTell(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	create := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "seed": 4, "algorithm": "cma-es", "population_size": 5}
	s, twin := ts.create(t, create), ts.create(t, create)
	b := ts.ask(t, s.ID)
	whole := sphereTell(b)
	f := whole["fitness"].([]float64)
	type answer struct {
		Generation int `json:"generation"`
		Partial    *struct {
			Indices []int      `json:"indices"`
			Fitness []*float64 `json:"fitness"`
		} `json:"partial"`
		Next *batchView `json:"next"`
	}
	tell := func(indices []int) answer {
		t.Helper()
		body := map[string]any{"generation": 0, "indices": indices, "fitness": []any{}}
		for _, i := range indices {
			body["fitness"] = append(body["fitness"].([]any), f[i])
		}
		r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell?next=true", body: body})
		if r.status != http.StatusOK {
			t.Fatalf("tell %v: %d %s", indices, r.status, r.body)
		}
		return decode[answer](t, r)
	}
	for range 2 { // the second time, a retry
		a := tell([]int{3, 1})
		if a.Generation != 0 || a.Partial == nil || !slices.Equal(a.Partial.Indices, []int{1, 3}) || *a.Partial.Fitness[0] != f[1] ||
			a.Next == nil || !reflect.DeepEqual(*a.Next, b) {
			t.Fatalf("after the first part: %+v", a)
		}
	}
	if g := decode[answer](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})); g.Partial == nil || len(g.Partial.Indices) != 2 {
		t.Fatalf("GET: holds %+v", g.Partial)
	}
	done := tell([]int{0, 4, 2})
	want := ts.tell(t, twin.ID, whole)
	if done.Generation != 1 || done.Partial != nil || want.Generation != 1 || done.Next == nil || !reflect.DeepEqual(*done.Next, ts.ask(t, twin.ID)) {
		t.Fatalf("the last part: %+v", done)
	}
	if again := tell([]int{2}); again.Generation != 1 || again.Partial != nil {
		t.Fatalf("a part of the applied generation again: %+v", again)
	}
}

// pendingIs reports whether a 409's body names generation g as pending.
func pendingIs(e errorView, g int) bool { return e.Error.Generation != nil && *e.Error.Generation == g }

// Workers claim candidates one at a time and tell each value as a part:
// every candidate is handed out once, none when all are leased, and the
// last value applies the generation.
func TestClaim(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "seed": 6, "algorithm": "cma-es", "population_size": 4})
	b := ts.ask(t, s.ID)
	path := "/v1/sessions/" + s.ID + "/claim"
	var claimed []claimView
	for range 4 {
		r := ts.do(t, call{method: "POST", path: path + "?lease=60"})
		c := decode[claimView](t, r)
		if r.status != http.StatusOK || c.Index == nil || *c.Index != len(claimed) || !slices.Equal(c.X, b.Candidates[*c.Index]) ||
			c.ExpiresAt.Before(time.Now().Add(50*time.Second)) {
			t.Fatalf("claim %d: %d %s", len(claimed), r.status, r.body)
		}
		claimed = append(claimed, c)
	}
	if r := ts.do(t, call{method: "POST", path: path}); r.status != http.StatusOK || decode[claimView](t, r).Index != nil {
		t.Fatalf("a claim with every candidate leased: %d %s", r.status, r.body)
	}
	for k, c := range claimed {
		got := ts.tell(t, s.ID, map[string]any{"generation": c.Generation, "indices": []int{*c.Index}, "fitness": []float64{sphere(c.X)}})
		if want := map[bool]int{true: 1, false: 0}[k == len(claimed)-1]; got.Generation != want {
			t.Fatalf("after value %d: generation %d", k, got.Generation)
		}
	}
	if c := decode[claimView](t, ts.do(t, call{method: "POST", path: path})); c.Generation != 1 || c.Index == nil || *c.Index != 0 ||
		!slices.Equal(c.X, ts.ask(t, s.ID).Candidates[0]) || c.ExpiresAt.Before(time.Now().Add(50*time.Second)) {
		t.Fatalf("the first claim of generation 1: %+v", c)
	}
	// A worker that names itself gets its lease again.
	w1 := decode[claimView](t, ts.do(t, call{method: "POST", path: path + "?worker=node-1"}))
	if again := decode[claimView](t, ts.do(t, call{method: "POST", path: path + "?worker=node-1&lease=5"})); *again.Index != *w1.Index || !again.ExpiresAt.Equal(w1.ExpiresAt) {
		t.Fatalf("node-1's claim again: %+v, want %+v", again, w1)
	}
	if w2 := decode[claimView](t, ts.do(t, call{method: "POST", path: path + "?worker=node-2"})); *w2.Index != *w1.Index+1 {
		t.Fatalf("node-2's claim: %+v", w2)
	}
	// A worker renews the lease of its candidate by naming it.
	renew := fmt.Sprintf("%s?worker=node-1&generation=1&index=%d", path, *w1.Index)
	if r := ts.do(t, call{method: "POST", path: renew + "&lease=7200"}); r.status != http.StatusOK || *decode[claimView](t, r).Index != *w1.Index ||
		decode[claimView](t, r).ExpiresAt.Before(time.Now().Add(119*time.Minute)) {
		t.Fatalf("node-1's renewal: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: strings.Replace(renew, "node-1", "node-3", 1)}); r.status != http.StatusConflict ||
		!strings.Contains(decode[errorView](t, r).Error.Message, "leased to another worker") || !pendingIs(decode[errorView](t, r), 1) {
		t.Fatalf("node-3 renewing node-1's candidate: %d %s", r.status, r.body)
	}
	for _, bad := range []struct {
		query, name string
		status      int
	}{{"?lease=soon", "lease", 400}, {"?lease=0", "lease", 422}, {"?lease=2592001", "lease", 422}, {"?worker=a%20b", "worker", 400},
		{"?worker=w&generation=1", "generation and index", 400}, {"?worker=w&index=0", "generation and index", 400},
		{"?worker=w&generation=1&index=x", "index", 400}, {"?worker=w&generation=1&index=-1", "index", 422},
		{"?worker=w&generation=1&index=4", "index 4", 422}, {"?generation=1&index=0", "worker's id", 400},
		{"?worker=w&generation=0&index=0", "generation 0 is not pending", 409}} {
		if r := ts.do(t, call{method: "POST", path: path + bad.query, invalid: true}); r.status != bad.status || !strings.Contains(decode[errorView](t, r).Error.Message, bad.name) {
			t.Errorf("claim%s: %d %s, want %d naming %s", bad.query, r.status, r.body, bad.status, bad.name)
		} else if r.status == http.StatusConflict && !pendingIs(decode[errorView](t, r), 1) {
			t.Errorf("claim%s: %s, want the pending generation, 1", bad.query, r.body)
		}
	}
	ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/stop"})
	if r := ts.do(t, call{method: "POST", path: path}); r.status != http.StatusConflict || decode[errorView](t, r).Error.Code != "stopped" {
		t.Fatalf("claim of a stopped session: %d %s", r.status, r.body)
	}
}
