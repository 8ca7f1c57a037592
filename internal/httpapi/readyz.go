package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// readyTimeout bounds the store's ping of a GET /readyz.
const readyTimeout = 3 * time.Second

// readyz answers 200 while the store answers Config.Ready's ping, and 503
// store_unavailable (with Retry-After) while it does not; /healthz, the
// liveness, stays 200 all along.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := s.ready(ctx)
		cancel()
		if err != nil {
			s.writeError(w, r, &session.Error{Code: session.CodeStoreUnavailable,
				Message: "the sessions' store does not answer: " + pingFailure(err), Err: err})
			return
		}
	}
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// pingFailure is what a client may learn of a failed ping: whether it ran
// out of time, not the database's address or error text (the log has it).
func pingFailure(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %v", readyTimeout)
	}
	return "unreachable"
}
