package httpapi

import (
	"io"
	"math"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/internal/session"
)

// Injected points (POST /v1/sessions/{id}/inject) and the create's warm
// start.

// injectRequest is the body of POST /v1/sessions/{id}/inject.
type injectRequest struct {
	Points [][]*float64 `json:"points"`
	Clip   *bool        `json:"clip"` // nil = true
}

// injectJSON answers an injection.
type injectJSON struct {
	Queued     int `json:"queued"`
	Generation int `json:"generation"`
	Waiting    int `json:"waiting"`
}

// warmStartJSON is the create's "warm_start".
type warmStartJSON struct {
	Session *string `json:"session"`
}

// injectedJSON is the session's "injected".
type injectedJSON struct {
	Waiting int `json:"waiting"`
	InBatch int `json:"in_batch"`
}

// decodeInject reads the body of POST /v1/sessions/{id}/inject. A null
// coordinate is not finite (as null stands for every non-finite number the
// service writes): the session refuses it as out of range, naming it.
func decodeInject(r io.Reader) (points [][]float64, clip bool, err error) {
	var req injectRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, false, err
	}
	if req.Points == nil {
		return nil, false, invalid("points is required")
	}
	points = make([][]float64, len(req.Points))
	for k, x := range req.Points {
		if x == nil {
			return nil, false, invalid("points[%d] is null, want an array of numbers", k)
		}
		points[k] = make([]float64, len(x))
		for i, v := range x {
			if v == nil {
				points[k][i] = math.NaN()
			} else {
				points[k][i] = *v
			}
		}
	}
	clip = req.Clip == nil || *req.Clip
	return points, clip, nil
}

// warmStartOf is the session id of a create's warm_start ("" for none).
func warmStartOf(w *warmStartJSON) (string, error) {
	switch {
	case w == nil:
		return "", nil
	case w.Session == nil:
		return "", invalid("warm_start.session is required")
	case *w.Session == "":
		return "", invalid("warm_start.session is empty, want a session's id")
	}
	return *w.Session, nil
}

func (s *server) inject(w http.ResponseWriter, r *http.Request) {
	if !jsonBody(r) {
		s.writeError(w, r, errMediaType)
		return
	}
	points, clip, err := decodeInject(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in, queued, err := s.m.InjectIdempotent(r.Context(), chi.URLParam(r, "id"), points, clip, idempotencyKey(r.Header.Get("Idempotency-Key")))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !queued {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	s.writeJSON(w, r, http.StatusOK, injectJSON{Queued: in.Queued, Generation: in.Generation, Waiting: in.Waiting})
}

func toInjectedJSON(in session.Injected) injectedJSON {
	return injectedJSON{Waiting: in.Waiting, InBatch: in.InBatch}
}
