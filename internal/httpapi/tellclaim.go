package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// A worker's evaluation is a claim and a tell. A partial tell with
// ?claim=true&worker=W (and ?lease=, as a claim's) also claims the next
// candidate for W once the value is stored, and answers it in the session
// object as "claim" (a claim's object; null if nothing was claimed: the
// session stopped, or the claim failed, and the worker claims on its own):
// one request an evaluation instead of two. The value is durable before
// the claim is tried, as without it; the claim is a named worker's, so a
// retried request leases nothing more.

// tellClaim is what ?claim=true asks for.
type tellClaim struct {
	worker string
	lease  time.Duration
}

// tellClaimParams reads ?claim=, ?worker= and ?lease= of a tell; nil
// without ?claim=true.
func tellClaimParams(r *http.Request) (*tellClaim, error) {
	q := r.URL.Query()
	v := q.Get("claim")
	if v == "" {
		return nil, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return nil, invalid("claim %q, want true or false", v)
	}
	if !on {
		return nil, nil
	}
	if q.Get("next") != "" {
		return nil, invalid("claim and next go to different clients: next answers the whole batch, claim one candidate")
	}
	worker := q.Get("worker")
	if worker == "" {
		return nil, invalid("worker is required with claim=true (the id the next lease is held under)")
	}
	if err := session.CheckWorker(worker); err != nil {
		return nil, err
	}
	lease, err := intParam(q.Get("lease"), "lease", int(session.DefaultLease/time.Second), 1, int(session.MaxLease/time.Second))
	if err != nil {
		return nil, err
	}
	return &tellClaim{worker: worker, lease: time.Duration(lease) * time.Second}, nil
}

// writeTellClaim answers a tell with the session told and the claim of
// tc.worker's next candidate.
func (s *server) writeTellClaim(w http.ResponseWriter, r *http.Request, id string, sess session.Session, tc *tellClaim) {
	body, err := sessionObject(sess)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body = append(body[:len(body)-1], `,"claim":`...)
	if sess.Status != session.StatusRunning {
		s.writeBody(w, http.StatusOK, append(body, "null}\n"...))
		return
	}
	c, err := s.m.Claim(r.Context(), id, tc.lease, tc.worker)
	if err != nil {
		// The value is stored: the answer says so, and the worker claims
		// on its own (and sees the error there).
		s.log.WarnContext(r.Context(), "claim after a tell failed", "request_id", requestID(r.Context()), "session_id", id, "error", err)
		s.writeBody(w, http.StatusOK, append(body, "null}\n"...))
		return
	}
	cb, err := marshalJSON(s.claimObject(r, id, c))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cb[len(cb)-1] = '}' // its newline
	s.writeBody(w, http.StatusOK, body, cb, newline)
}
