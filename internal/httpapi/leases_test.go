package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// claimView is the answer of a claim.
type claimView struct {
	Generation int       `json:"generation"`
	Index      *int      `json:"index"`
	X          []float64 `json:"x"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// TestClaimIdempotencyKey: a claim without a worker sent again with its
// Idempotency-Key (its answer lost) answers the same candidate, not a
// second one; a release by the key frees it at once, and a release sent
// again answers released false; the session shows the leases while one
// runs, and the wait for a free candidate is logged once.
func TestClaimIdempotencyKey(t *testing.T) {
	var log bytes.Buffer
	ts := newTestServer(t, serverOpts{log: &log})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "population_size": 3, "algorithm": "cma-es", "seed": 4})
	path := "/v1/sessions/" + s.ID
	claim := func(key string) claimView {
		t.Helper()
		r := ts.do(t, call{method: "POST", path: path + "/claim", header: map[string]string{"Idempotency-Key": key}})
		if r.status != http.StatusOK {
			t.Fatalf("claim with key %s: %d %s", key, r.status, r.body)
		}
		return decode[claimView](t, r)
	}
	a := claim("claim-a")
	if again := claim("claim-a"); a.Index == nil || again.Index == nil || *again.Index != *a.Index {
		t.Fatalf("the claim sent again: %+v, want candidate %+v", again, a)
	}
	if b := claim("claim-b"); b.Index == nil || *b.Index != *a.Index+1 {
		t.Fatalf("another key's claim: %+v", b)
	}
	if c := claim("claim-c"); c.Index == nil || *c.Index != 2 {
		t.Fatalf("the third claim: %+v", c)
	}
	v := decode[struct {
		Leases *struct {
			Generation, Held, Free int
			NextExpiry             *string `json:"next_expiry"`
		} `json:"leases"`
	}](t, ts.do(t, call{method: "GET", path: path}))
	if v.Leases == nil || v.Leases.Held != 3 || v.Leases.Free != 0 || v.Leases.NextExpiry == nil {
		t.Fatalf("the session while every candidate is leased: %+v", v.Leases)
	}
	for range 2 {
		if d := claim("claim-d"); d.Index != nil {
			t.Fatalf("a claim with every candidate leased: %+v", d)
		}
	}
	if n := strings.Count(log.String(), "claims wait"); n != 1 {
		t.Errorf("the wait is logged %d times, want once:\n%s", n, log.String())
	}

	release := func(q string, header map[string]string) (int, map[string]any) {
		r := ts.do(t, call{method: "POST", path: path + "/release" + q, header: header})
		if r.status != http.StatusOK {
			return r.status, nil
		}
		return r.status, decode[map[string]any](t, r)
	}
	q := fmt.Sprintf("?generation=0&index=%d", *a.Index)
	if st, got := release(q, map[string]string{"Idempotency-Key": "claim-a"}); st != 200 || got["released"] != true {
		t.Fatalf("release by the claim's key: %d %v", st, got)
	}
	if st, got := release(q, map[string]string{"Idempotency-Key": "claim-a"}); st != 200 || got["released"] != false {
		t.Fatalf("the release sent again: %d %v", st, got)
	}
	if e := claim("claim-e"); e.Index == nil || *e.Index != *a.Index {
		t.Fatalf("a claim after the release: %+v, want candidate %d", e, *a.Index)
	}
	for _, bad := range []struct {
		query string
		code  int
	}{{"", 400}, {"?generation=0", 400}, {"?generation=0&index=0", 400}, {"?generation=0&index=x&worker=w", 400}, {"?generation=0&index=-1&worker=w", 422}} {
		r := ts.do(t, call{method: "POST", path: path + "/release" + bad.query, invalid: true})
		if r.status != bad.code || decode[errorView](t, r).Error.Code == "" {
			t.Errorf("release%s: %d %s, want %d", bad.query, r.status, r.body, bad.code)
		}
	}
	long := strings.Repeat("k", 129)
	if r := ts.do(t, call{method: "POST", path: path + "/claim", header: map[string]string{"Idempotency-Key": long}, invalid: true}); r.status != 400 || !strings.Contains(decode[errorView](t, r).Error.Message, "Idempotency-Key") {
		t.Errorf("a claim with a key of 129 bytes: %d %s", r.status, r.body)
	}
}

// TestInjectIdempotencyKey: an injection sent again with its
// Idempotency-Key answers as the first, with Idempotent-Replayed, and
// queues nothing more; other points with the key are 422.
func TestInjectIdempotencyKey(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "population_size": 6, "algorithm": "cma-es", "seed": 4})
	path := "/v1/sessions/" + s.ID + "/inject"
	body := map[string]any{"points": [][]float64{{0.5, 0.25}}}
	key := map[string]string{"Idempotency-Key": "inj-1"}
	first := ts.do(t, call{method: "POST", path: path, body: body, header: key})
	if first.status != 200 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first injection: %d %s", first.status, first.body)
	}
	again := ts.do(t, call{method: "POST", path: path, body: body, header: key})
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
		t.Fatalf("the injection sent again: %d %v %s, want %s", again.status, again.header, again.body, first.body)
	}
	if v := decode[injectedSessionView](t, response{body: ts.getBody(t, s.ID)}); v.Injected.Waiting != 1 {
		t.Fatalf("after the retry %d points wait, want 1", v.Injected.Waiting)
	}
	other := ts.do(t, call{method: "POST", path: path, body: map[string]any{"points": [][]float64{{0.5, 0.5}}}, header: key})
	if other.status != http.StatusUnprocessableEntity || !strings.Contains(decode[errorView](t, other).Error.Message, "Idempotency-Key") {
		t.Fatalf("other points with the key: %d %s", other.status, other.body)
	}
	if r := ts.do(t, call{method: "POST", path: path, body: body, header: map[string]string{"Idempotency-Key": "a\tb"}, invalid: true}); r.status != 400 || decode[errorView](t, r).Error.Code != "invalid" {
		t.Fatalf("a key with a tab: %d %s", r.status, r.body)
	}
}

// TestNoParameterBodies: POST ask and stop take an empty body or any JSON
// value; anything else is 400 naming the problem.
func TestNoParameterBodies(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5})
	for _, op := range []string{"ask", "stop"} {
		path := "/v1/sessions/" + s.ID + "/" + op
		for _, bad := range []string{"garbage", "{", `{"a": 1} x`} {
			r := ts.do(t, call{method: "POST", path: path, body: bad, invalid: true})
			if r.status != http.StatusBadRequest || !strings.Contains(decode[errorView](t, r).Error.Message, "empty or JSON") {
				t.Errorf("POST %s with %q: %d %s", op, bad, r.status, r.body)
			}
		}
	}
	for _, op := range []string{"ask", "stop"} {
		for _, good := range []string{"", "{}", " null\n"} {
			path := "/v1/sessions/" + s.ID + "/" + op
			if r := ts.do(t, call{method: "POST", path: path, body: good, invalid: true}); r.status != http.StatusOK {
				t.Errorf("POST %s with %q: %d %s", op, good, r.status, r.body)
			}
		}
	}
}

// TestTellClaim: a partial tell with claim=true answers the worker's next
// candidate with the session; sent again (its answer lost) it stores
// nothing more and claims the same candidate; the tell that completes the
// generation claims one of the next; bad parameters are a 4xx that names
// them, and store no value.
func TestTellClaim(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "population_size": 3, "algorithm": "cma-es", "seed": 4})
	path := "/v1/sessions/" + s.ID
	type answer struct {
		Generation int `json:"generation"`
		Partial    *struct {
			Indices []int `json:"indices"`
		} `json:"partial"`
		Claim *claimView `json:"claim"`
	}
	tell := func(q string, g, i int) response {
		t.Helper()
		return ts.do(t, call{method: "POST", path: path + "/tell" + q, body: map[string]any{"generation": g, "indices": []int{i}, "fitness": []float64{float64(i)}}})
	}
	first := decode[claimView](t, ts.do(t, call{method: "POST", path: path + "/claim?worker=w"}))
	if first.Index == nil || *first.Index != 0 {
		t.Fatalf("the first claim: %+v", first)
	}
	for range 2 { // the second: sent again
		r := tell("?claim=true&worker=w&lease=30", 0, 0)
		a := decode[answer](t, r)
		if r.status != http.StatusOK || a.Claim == nil || a.Claim.Index == nil || *a.Claim.Index != 1 || a.Claim.Generation != 0 || len(a.Claim.X) != 2 {
			t.Fatalf("tell of candidate 0 with claim: %d %s", r.status, r.body)
		}
		if a.Partial == nil || len(a.Partial.Indices) != 1 {
			t.Fatalf("tell of candidate 0: partial %+v, want candidate 0's value", a.Partial)
		}
		if until := time.Until(a.Claim.ExpiresAt); until > 31*time.Second || until < 0 {
			t.Fatalf("the claim's lease ends in %v, want 30 s", until)
		}
	}
	for _, bad := range []struct{ q, names string }{
		{"?claim=maybe&worker=w", "claim"},
		{"?claim=true", "worker"},
		{"?claim=true&worker=a%20b", "worker"},
		{"?claim=true&worker=w&lease=0", "lease"},
		{"?claim=true&worker=w&next=true", "next"},
	} {
		r := ts.do(t, call{method: "POST", path: path + "/tell" + bad.q, body: map[string]any{"generation": 0, "indices": []int{1}, "fitness": []float64{1}}, invalid: true})
		if r.status/100 != 4 || !strings.Contains(string(r.body), bad.names) {
			t.Errorf("tell%s: %d %s, want a 4xx naming %s", bad.q, r.status, r.body, bad.names)
		}
	}
	r := tell("?claim=true&worker=w", 0, 1)
	if a := decode[answer](t, r); a.Claim == nil || a.Claim.Index == nil || *a.Claim.Index != 2 || a.Partial == nil || len(a.Partial.Indices) != 2 {
		t.Fatalf("tell of candidate 1 with claim (after the bad ones stored nothing): %s", r.body)
	}
	r = tell("?claim=true&worker=w", 0, 2)
	if a := decode[answer](t, r); a.Generation != 1 || a.Claim == nil || a.Claim.Index == nil || *a.Claim.Index != 0 || a.Claim.Generation != 1 {
		t.Fatalf("the tell that completes generation 0, with claim: %s", r.body)
	}
}
