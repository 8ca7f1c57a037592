package httpapi

import (
	"bytes"
	csvpkg "encoding/csv"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// injectView is the answer of an injection; injectedSessionView the
// session's fields about injected points.
type injectView struct {
	Queued     int `json:"queued"`
	Generation int `json:"generation"`
	Waiting    int `json:"waiting"`
}

type injectedSessionView struct {
	Generation int       `json:"generation"`
	Status     string    `json:"status"`
	Mean       []float64 `json:"mean"`
	Injected   struct {
		Waiting int `json:"waiting"`
		InBatch int `json:"in_batch"`
	} `json:"injected"`
	StopReasons []struct {
		Name  string   `json:"name"`
		Value *float64 `json:"value"`
	} `json:"stop_reasons"`
}

func (ts *testServer) inject(tb testing.TB, id string, body any) injectView {
	tb.Helper()
	r := ts.do(tb, call{method: "POST", path: "/v1/sessions/" + id + "/inject", body: body})
	if r.status != http.StatusOK {
		tb.Fatalf("inject: %d %s", r.status, r.body)
	}
	return decode[injectView](tb, r)
}

func (ts *testServer) getBody(tb testing.TB, id string) []byte {
	tb.Helper()
	r := ts.do(tb, call{method: "GET", path: "/v1/sessions/" + id})
	if r.status != http.StatusOK {
		tb.Fatalf("get: %d %s", r.status, r.body)
	}
	return r.body
}

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// Injected points become candidates 0, 1, ... of the batch after the
// pending one, bit for bit; the pending batch does not change and the
// other candidates are those of the same run without injection; the
// history counts them.
func TestInject(t *testing.T) {
	// Numbers whose shortest decimal is long, and a subnormal.
	p0 := []float64{0.1 + 0.2, -1.0 / 3, math.Nextafter(2, 3)}
	p1 := []float64{5e-324, -0.7, 1e21}
	for _, alg := range []string{"cma-es", "self-cma-es"} {
		t.Run(alg, func(t *testing.T) {
			ts := newTestServer(t, serverOpts{})
			body := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "seed": 17, "algorithm": alg, "population_size": 8}
			s := ts.create(t, body)
			ref := ts.create(t, body) // the same run, without injection

			b0 := ts.ask(t, s.ID)
			got := ts.inject(t, s.ID, map[string]any{"points": [][]float64{p0, p1}})
			if got != (injectView{Queued: 2, Generation: 1, Waiting: 2}) {
				t.Fatalf("inject answered %+v", got)
			}
			v := decode[injectedSessionView](t, response{body: ts.getBody(t, s.ID)})
			if v.Injected.Waiting != 2 || v.Injected.InBatch != 0 {
				t.Fatalf("after the injection the session shows %+v", v.Injected)
			}
			if again := ts.ask(t, s.ID); !slices.EqualFunc(again.Candidates, b0.Candidates, sameFloats) {
				t.Fatal("the injection changed the pending batch")
			}
			ts.tell(t, s.ID, sphereTell(b0))
			ts.tell(t, ref.ID, sphereTell(ts.ask(t, ref.ID)))

			b1, r1 := ts.ask(t, s.ID), ts.ask(t, ref.ID)
			if b1.Generation != 1 || !sameFloats(b1.Candidates[0], p0) || !sameFloats(b1.Candidates[1], p1) {
				t.Fatalf("generation %d starts with %v, %v; injected %v, %v", b1.Generation, b1.Candidates[0], b1.Candidates[1], p0, p1)
			}
			if !slices.EqualFunc(b1.Candidates[2:], r1.Candidates[2:], sameFloats) {
				t.Error("the candidates after the injected ones differ from the run without injection")
			}
			v = decode[injectedSessionView](t, response{body: ts.getBody(t, s.ID)})
			if v.Injected.Waiting != 0 || v.Injected.InBatch != 2 {
				t.Fatalf("with the injected points in the batch the session shows %+v", v.Injected)
			}
			ts.tell(t, s.ID, sphereTell(b1))
			h := decode[struct {
				Records []struct {
					Generation int  `json:"generation"`
					Injected   *int `json:"injected"`
				} `json:"records"`
			}](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history"}))
			if len(h.Records) != 2 || h.Records[0].Injected != nil || h.Records[1].Injected == nil || *h.Records[1].Injected != 2 {
				t.Fatalf("history: %+v", h.Records)
			}
			csv := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history?format=csv"})
			rows, err := csvpkg.NewReader(bytes.NewReader(csv.body)).ReadAll()
			if err != nil || len(rows) != 3 {
				t.Fatalf("history as CSV: %v\n%s", err, csv.body)
			}
			k := slices.Index(rows[0], "injected")
			if k < 0 || rows[1][k] != "0" || rows[2][k] != "2" {
				t.Errorf("history as CSV:\n%s", csv.body)
			}

			// clip false is accepted; the points wait for generation 3.
			if got := ts.inject(t, s.ID, map[string]any{"points": [][]float64{p0}, "clip": false}); got != (injectView{Queued: 1, Generation: 3, Waiting: 1}) {
				t.Fatalf("inject without clip answered %+v", got)
			}
		})
	}
}

// Every bad injection is a 4xx naming the problem, and changes nothing:
// the session reads the same bytes afterwards.
func TestInjectBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{maxBody: 4096})
	s := ts.create(t, map[string]any{"x0": []float64{0.5, 0.5}, "sigma0": 0.2, "seed": 3, "algorithm": "cma-es",
		"population_size": 4, "bounds": map[string]any{"lower": []float64{0, 0}, "upper": []float64{1, 1}}})
	sp := "/v1/sessions/" + s.ID + "/inject"
	// Three of λ = 4 wait: two more are too many.
	ts.inject(t, s.ID, map[string]any{"points": [][]float64{{0.1, 0.1}, {0.2, 0.2}, {0.3, 0.3}}})

	tests := []struct {
		name   string
		body   string
		status int
		code   string
		msg    string
	}{
		{"wrong dimension", `{"points": [[0.5, 0.5, 0.5]]}`, 422, "out_of_range", "points[0] has 3 values, want 2"},
		{"too many", `{"points": [[0.5, 0.5], [0.4, 0.4]]}`, 422, "out_of_range", "at most λ = 4"},
		{"out of bounds", `{"points": [[0.5, 1.5]]}`, 422, "out_of_range", "points[0][1] = 1.5 is outside the bounds [0, 1]"},
		{"not finite", `{"points": [[0.5, null]]}`, 422, "out_of_range", "points[0][1] is not a finite number"},
		{"empty", `{"points": []}`, 422, "out_of_range", "points is empty"},
		{"second point bad", `{"points": [[0.5, 0.5]], "clip": true}`, 200, "", ""}, // fills the queue: λ wait
		{"queue full", `{"points": [[0.5, 0.5]]}`, 422, "out_of_range", "4 wait already"},
		{"no points", `{"clip": true}`, 400, "invalid", "points is required"},
		{"null point", `{"points": [null]}`, 400, "invalid", "points[0] is null"},
		{"point not an array", `{"points": [0.5]}`, 400, "invalid", "points"},
		{"clip not a boolean", `{"points": [[0.5, 0.5]], "clip": "yes"}`, 400, "invalid", "clip"},
		{"unknown field", `{"points": [[0.5, 0.5]], "force": true}`, 400, "invalid", `unknown field "force"`},
		{"overflow", `{"points": [[0.5, 1e999]]}`, 400, "invalid", ""},
		{"malformed", `{"points": [[0.5, 0.5]`, 400, "invalid", "truncated"},
		{"too large", `{"points": [[` + strings.Repeat("0.5,", 2000) + `0.5]]}`, 413, "too_large", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := ts.getBody(t, s.ID)
			r := ts.do(t, call{method: "POST", path: sp, body: tc.body, invalid: tc.status >= 400})
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.status == 200 {
				return
			}
			e := decode[errorView](t, r)
			if e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("error %+v, want %s with %q", e.Error, tc.code, tc.msg)
			}
			if after := ts.getBody(t, s.ID); !bytes.Equal(after, before) {
				t.Errorf("the session changed:\n%s\n%s", before, after)
			}
		})
	}

	if r := ts.do(t, call{method: "POST", path: "/v1/sessions/nope/inject", body: `{"points": [[0.5, 0.5]]}`}); r.status != 404 || decode[errorView](t, r).Error.Code != "not_found" {
		t.Errorf("unknown session: %d %s", r.status, r.body)
	}
	// A stopped session: 409 stopped with its reasons, nothing queued.
	st := ts.create(t, map[string]any{"x0": []float64{1}, "sigma0": 1, "seed": 1, "algorithm": "cma-es"})
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + st.ID + "/stop"}); r.status != 200 {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	before := ts.getBody(t, st.ID)
	r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + st.ID + "/inject", body: `{"points": [[0.5]]}`})
	if r.status != 409 {
		t.Fatalf("inject into a stopped session: %d %s", r.status, r.body)
	}
	e := decode[struct {
		Error struct {
			Code        string `json:"code"`
			StopReasons []struct {
				Name string `json:"name"`
			} `json:"stop_reasons"`
		} `json:"error"`
	}](t, r)
	if e.Error.Code != "stopped" || len(e.Error.StopReasons) != 1 || e.Error.StopReasons[0].Name != "requested" {
		t.Errorf("inject into a stopped session: %s", r.body)
	}
	if after := ts.getBody(t, st.ID); !bytes.Equal(after, before) {
		t.Errorf("the stopped session changed:\n%s\n%s", before, after)
	}
}

// A warm start takes x0 from another session's mean and injects its best
// point into the first batch.
func TestWarmStart(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	src := ts.create(t, map[string]any{"x0": []float64{2, -1, 0.5}, "sigma0": 0.5, "seed": 5, "algorithm": "cma-es"})
	for range 5 {
		src = ts.tell(t, src.ID, sphereTell(ts.ask(t, src.ID)))
	}
	srcView := decode[injectedSessionView](t, response{body: ts.getBody(t, src.ID)})

	for _, body := range []map[string]any{
		{"sigma0": 0.1, "warm_start": map[string]any{"session": src.ID}, "algorithm": "self-cma-es", "population_size": 12},
		{"x0": []float64{0, 0, 0}, "sigma0": 0.1, "warm_start": map[string]any{"session": src.ID}},
	} {
		ws := ts.create(t, body)
		v := decode[injectedSessionView](t, response{body: ts.getBody(t, ws.ID)})
		if !sameFloats(v.Mean, srcView.Mean) {
			t.Errorf("warm start mean %v, the session's %v", v.Mean, srcView.Mean)
		}
		if v.Injected.InBatch != 1 || v.Injected.Waiting != 0 {
			t.Errorf("warm start: injected %+v, want its best in the first batch", v.Injected)
		}
		if b := ts.ask(t, ws.ID); !sameFloats(b.Candidates[0], src.Best.X) {
			t.Errorf("the first candidate %v, the best point %v", b.Candidates[0], src.Best.X)
		}
	}

	// A session with no value told yet gives its mean only.
	fresh := ts.create(t, map[string]any{"x0": []float64{4, 4}, "sigma0": 1, "seed": 1})
	ws := ts.create(t, map[string]any{"sigma0": 1, "warm_start": map[string]any{"session": fresh.ID}})
	if v := decode[injectedSessionView](t, response{body: ts.getBody(t, ws.ID)}); v.Injected.InBatch != 0 || !sameFloats(v.Mean, []float64{4, 4}) {
		t.Errorf("warm start from a fresh session: %+v", v)
	}

	// With bounds, x0 is the mean's image in the box: inside it.
	bounded := ts.create(t, map[string]any{"x0": []float64{0.9, 0.9}, "sigma0": 2, "seed": 8, "algorithm": "cma-es",
		"bounds": map[string]any{"lower": []float64{0, 0}, "upper": []float64{1, 1}}})
	for range 3 {
		b := ts.ask(t, bounded.ID)
		f := make([]float64, len(b.Candidates))
		for i, x := range b.Candidates {
			f[i] = -x[0] - x[1] // pushes the mean out of the box
		}
		ts.tell(t, bounded.ID, map[string]any{"generation": b.Generation, "fitness": f})
	}
	ws = ts.create(t, map[string]any{"sigma0": 0.1, "warm_start": map[string]any{"session": bounded.ID},
		"bounds": map[string]any{"lower": []float64{0, 0}, "upper": []float64{1, 1}}})
	if v := decode[injectedSessionView](t, response{body: ts.getBody(t, ws.ID)}); v.Mean[0] < 0 || v.Mean[0] > 1 || v.Mean[1] < 0 || v.Mean[1] > 1 {
		t.Errorf("warm start from a bounded session: mean %v outside the box", v.Mean)
	}

	// Idempotent: the retry answers the session made, though the warm
	// start's session has moved on since.
	key := map[string]string{"Idempotency-Key": "warm-1"}
	wb := map[string]any{"sigma0": 0.3, "warm_start": map[string]any{"session": src.ID}}
	first := ts.do(t, call{method: "POST", path: "/v1/sessions", body: wb, header: key})
	ts.tell(t, src.ID, sphereTell(ts.ask(t, src.ID)))
	again := ts.do(t, call{method: "POST", path: "/v1/sessions", body: wb, header: key})
	if first.status != 201 || again.status != 200 || decode[sessionView](t, first).ID != decode[sessionView](t, again).ID {
		t.Errorf("idempotent warm start: %d %s, then %d %s", first.status, first.body, again.status, again.body)
	}

	for _, tc := range []struct {
		name   string
		body   string
		status int
		msg    string
	}{
		{"unknown session", `{"sigma0": 1, "warm_start": {"session": "nope"}}`, 422, `warm_start.session: no session "nope"`},
		{"wrong dimension", `{"x0": [1, 2], "sigma0": 1, "warm_start": {"session": "` + src.ID + `"}}`, 422, "x0 has 2 values"},
		{"mean outside the bounds", `{"sigma0": 1, "warm_start": {"session": "` + src.ID + `"}, "bounds": {"lower": [10, 10, 10], "upper": [11, 11, 11]}}`, 422, "warm_start: the mean of session"},
		{"no session field", `{"sigma0": 1, "warm_start": {}}`, 400, "warm_start.session is required"},
		{"empty session", `{"sigma0": 1, "warm_start": {"session": ""}}`, 400, "warm_start.session is empty"},
		{"unknown field", `{"sigma0": 1, "warm_start": {"session": "x", "best": true}}`, 400, `unknown field "best"`},
		{"neither x0 nor warm start", `{"sigma0": 1}`, 400, "x0 is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: tc.body, invalid: true})
			if e := decode[errorView](t, r); r.status != tc.status || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("%d %s, want %d with %q", r.status, r.body, tc.status, tc.msg)
			}
		})
	}
}

// A session told only failed evaluations stops on failed_evaluations after
// max_failed_generations generations (10 by default); 0 or a negative
// number disables the criterion.
func TestMaxFailedGenerations(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	for _, tc := range []struct {
		name string
		term map[string]any
		want int // generations until the stop; 0 = none in 25
	}{
		{"default", nil, 10},
		{"set", map[string]any{"max_failed_generations": 3}, 3},
		{"negative disables", map[string]any{"max_failed_generations": -1}, 0},
		{"zero disables", map[string]any{"max_failed_generations": 0}, 0},
		{"with ipop", map[string]any{"max_failed_generations": 4}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "seed": 2, "algorithm": "cma-es"}
			if tc.term != nil {
				body["termination"] = tc.term
			}
			if tc.name == "with ipop" {
				body["restarts"] = map[string]any{"strategy": "ipop"}
			}
			s := ts.create(t, body)
			var v injectedSessionView
			for g := 0; g < 25; g++ {
				b := ts.ask(t, s.ID)
				nulls := make([]any, len(b.Candidates))
				v = decode[injectedSessionView](t, ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell",
					body: map[string]any{"generation": b.Generation, "fitness": nulls}}))
				if v.Status == "stopped" {
					break
				}
			}
			switch {
			case tc.want == 0 && v.Status != "running":
				t.Fatalf("stopped after %d generations: %+v", v.Generation, v.StopReasons)
			case tc.want > 0 && (v.Status != "stopped" || v.Generation != tc.want || len(v.StopReasons) != 1 ||
				v.StopReasons[0].Name != "failed_evaluations" || v.StopReasons[0].Value == nil || *v.StopReasons[0].Value != float64(tc.want)):
				t.Fatalf("after %d all-failed generations: %s %+v, want failed_evaluations at %d", v.Generation, v.Status, v.StopReasons, tc.want)
			}
		})
	}
}

func FuzzDecodeInject(f *testing.F) {
	for _, s := range []string{
		`{"points": [[1, 2.5], [null, -3e-300]]}`, `{"points": [[1]], "clip": false}`, `{"points": []}`,
		`{"points": [null]}`, `{"points": [1]}`, `{"points": [[1e999]]}`, `{"clip": true}`, `{"points": [[1]], "x": 0}`,
		`{"points": [[1]]} x`, `null`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		points, _, err := decodeInject(bytes.NewReader(body))
		if err != nil {
			if !decodeErrorOK(err) {
				t.Fatalf("error %v is not a client error", err)
			}
			return
		}
		if points == nil {
			t.Fatalf("accepted %q without points", body)
		}
		for _, x := range points {
			for _, v := range x {
				if math.IsInf(v, 0) {
					t.Fatalf("accepted %q: %v", body, points)
				}
			}
		}
	})
}
