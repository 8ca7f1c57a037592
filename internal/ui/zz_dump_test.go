package ui_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store"
	"github.com/selfcma/selfcma/internal/ui"
	"github.com/selfcma/selfcma/internal/ui/sessionsource"
)

func TestZZDump(t *testing.T) {
	st, _ := store.Open(filepath.Join(t.TempDir(), "ui.db"), &store.Options{NoSync: true})
	defer st.Close()
	m := session.NewManager(st, session.Options{})
	r := httpapi.New(httpapi.Config{Manager: m})
	r.Mount(ui.Prefix, ui.Handler(sessionsource.New(m), ui.Options{}))
	srv := httptest.NewServer(r)
	defer srv.Close()
	api := apiClient{t: t, base: srv.URL}
	var s, s2, s3 apiSession
	api.do(http.MethodPost, "/v1/sessions", map[string]any{"algorithm": "cma-es", "name": "plain rosen", "x0": []float64{0, 0, 0, 0, 0}, "sigma0": 1}, &s2)
	for range 30 { api.generation(s2.ID) }
	api.do(http.MethodPost, "/v1/sessions", map[string]any{"x0": make([]float64, 40), "sigma0": 1}, &s3)
	api.do(http.MethodPost, "/v1/sessions", map[string]any{
		"name": "sphere 10-D", "x0": []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, "sigma0": 2, "seed": 1,
		"restarts":    map[string]any{"strategy": "ipop", "max": 2},
		"termination": map[string]any{"tol_fun": 1e-6, "max_evaluations": 200_000},
	}, &s)
	for range 60 { s = api.generation(s.ID) }
	_, b := get(t, srv.URL+"/ui/sessions/"+s.ID)
	os.WriteFile("/tmp/p-running.html", []byte(b), 0o644)
	_, b = get(t, srv.URL+"/ui/sessions/"+s3.ID)
	os.WriteFile("/tmp/p-new.html", []byte(b), 0o644)
	_, b = get(t, srv.URL+"/ui/")
	os.WriteFile("/tmp/p-list.html", []byte(b), 0o644)
	s2srv := httptest.NewServer(ui.Handler(sessionsource.New(m), ui.Options{Token: "x"}))
	defer s2srv.Close()
	_, b = get(t, s2srv.URL+"/login?next=/ui/")
	os.WriteFile("/tmp/p-login.html", []byte(b), 0o644)
}
