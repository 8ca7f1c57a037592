package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// covarianceJSON is the answer of GET /v1/sessions/{id}/covariance.
type covarianceJSON struct {
	Generation int    `json:"generation"`
	Sigma      num    `json:"sigma"`
	C          matrix `json:"c,omitempty"`
	Diagonal   nums   `json:"c_diagonal,omitempty"`
}

func (s *server) covariance(w http.ResponseWriter, r *http.Request) {
	c, err := s.m.Covariance(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, covarianceJSON{Generation: c.Generation, Sigma: num(c.Sigma), C: matrix(c.C), Diagonal: c.Diagonal})
}
