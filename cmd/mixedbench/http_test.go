package main

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/mixedfn"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestConstrainedOverHTTP: each constrained problem (n = 6), run through a
// constrained session of the real handlers, gives the in-process run's
// evaluations and best feasible value exactly.
func TestConstrainedOverHTTP(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "t.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Manager: session.NewManager(st, session.Options{})}))
	defer srv.Close()
	for _, p := range mixedfn.ConstrainedProblems(6) {
		for seed := range uint64(2) {
			want, err := solveConstrained(p, seed, 60000, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := solveConstrainedHTTP(srv.URL, p, seed, 60000, true)
			if err != nil {
				t.Fatal(err)
			}
			got.Impl = want.Impl
			if got != want {
				t.Errorf("%s seed %d: over HTTP %+v, in process %+v", p.Name, seed, got, want)
			}
			if !want.Reached || !want.Feasible {
				t.Errorf("%s seed %d: %+v", p.Name, seed, want)
			}
		}
	}
}
