package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHistoryPaged: the history read a page at a time is the history read
// at once, in JSON and CSV, for every from and limit, pages falling on
// and between the bounds.
func TestHistoryPaged(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "seed": 5, "algorithm": "cma-es"})
	const gens = 10
	for range gens {
		ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
	}
	// A server of the same Manager whose history reads page records at a
	// time.
	paged := func(page int) *testServer {
		p := &testServer{Server: httptest.NewServer(New(Config{Manager: ts.m, historyPage: page})), m: ts.m}
		t.Cleanup(p.Close)
		return p
	}
	srv := paged(1000)
	get := func(q string) []byte {
		r := srv.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history" + q})
		if r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return r.body
	}
	var queries []string
	for _, from := range []int{0, 3, 9, 10, 11} {
		for _, limit := range []int{0, 1, 3, 5, 10, 20} {
			q := fmt.Sprintf("?from=%d", from)
			if limit > 0 {
				q += fmt.Sprintf("&limit=%d", limit)
			}
			queries = append(queries, q, q+"&format=csv")
		}
	}
	want := map[string][]byte{}
	for _, q := range queries {
		want[q] = get(q)
	}
	var all struct{ Records []struct{ Generation int } }
	if err := json.Unmarshal(want["?from=0"], &all); err != nil || len(all.Records) != gens {
		t.Fatalf("the whole history: %d records, %v\n%s", len(all.Records), err, want["?from=0"])
	}
	if n := strings.Count(string(want["?from=3&limit=5&format=csv"]), "\n"); n != 6 {
		t.Errorf("csv of 5 records has %d lines, want 6", n)
	}
	for _, page := range []int{1, 2, 3, 5} {
		srv = paged(page)
		for _, q := range queries {
			if got := get(q); !bytes.Equal(got, want[q]) {
				t.Errorf("pages of %d, %s:\n%s\nwant\n%s", page, q, got, want[q])
			}
		}
	}
}
