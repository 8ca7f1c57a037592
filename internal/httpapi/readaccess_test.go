package httpapi

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// ReadAccess admits a GET without the bearer token when it says so, and
// never a request that changes anything, the backup or the metrics.
func TestReadAccess(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "r.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := session.NewManager(st, session.Options{})
	mux := New(Config{Manager: m, Token: "secret", Backup: st.Snapshot, Metrics: prometheus.NewRegistry(), ReadAccess: func(r *http.Request) bool {
		c, err := r.Cookie("pass")
		return err == nil && c.Value == "yes"
	}})
	tests := []struct {
		method, cookie string
		want           int
		path           string
	}{
		{"GET", "yes", http.StatusOK, ""},
		{"GET", "no", http.StatusUnauthorized, ""},
		{"GET", "", http.StatusUnauthorized, ""},
		{"POST", "yes", http.StatusUnauthorized, ""},
		{"DELETE", "yes", http.StatusUnauthorized, ""},
		{"GET", "yes", http.StatusUnauthorized, "/v1/backup"}, // the whole database takes the token
		{"GET", "yes", http.StatusUnauthorized, "/metrics"},   // as README says: bearer only
	}
	for _, tt := range tests {
		if tt.path == "" {
			tt.path = "/v1/sessions"
		}
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.cookie != "" {
			r.AddCookie(&http.Cookie{Name: "pass", Value: tt.cookie})
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s with cookie %q: status %d, want %d (%s)", tt.method, tt.cookie, w.Code, tt.want, w.Body)
		}
	}
}
