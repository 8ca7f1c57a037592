// Package httpapi is the HTTP interface of the selfcma service (the v1
// contract of api/openapi.yaml): chi routes, JSON in and out, one mapping
// from error codes to statuses, bearer-token authentication and request
// limits. It translates; session does the work.
package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/session"
)

// DefaultMaxBodyBytes limits request bodies when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 8 << 20

// Config configures the handler.
type Config struct {
	Manager      *session.Manager
	Token        string // when not empty, every /v1 request needs "Authorization: Bearer <Token>"
	MaxBodyBytes int64  // 0 = DefaultMaxBodyBytes
	Logger       *slog.Logger
	// ReadAccess, when not nil, admits a GET without the bearer token if it
	// returns true: cmd/server passes the web pages' login check, so that
	// a logged-in browser can open the pages' links to the JSON and CSV.
	ReadAccess func(*http.Request) bool
	// Backup, when not nil, returns a consistent copy of the database and
	// its size for GET /v1/backup (cmd/server passes store.Snapshot);
	// without it that route answers not_found.
	Backup func() (io.ReadCloser, int64, error)
	// Metrics, when not nil, gets the request metrics of the service and
	// is served at GET /metrics, with the /v1 routes' authentication
	// (cmd/server adds the store's, Go's and the process's metrics).
	Metrics *prometheus.Registry
}

type server struct {
	m           *session.Manager
	tokenHash   [32]byte
	auth        bool
	maxBody     int64
	log         *slog.Logger
	read        func(*http.Request) bool
	backup      func() (io.ReadCloser, int64, error)
	metrics     *httpMetrics // nil: none
	metricsPage http.Handler // GET /metrics; nil: none
}

// New returns the router of the service. Other packages may mount more
// routes on it (the web pages under /ui).
func New(cfg Config) *chi.Mux {
	s := &server{m: cfg.Manager, maxBody: cfg.MaxBodyBytes, log: cfg.Logger, read: cfg.ReadAccess, backup: cfg.Backup}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Token != "" {
		s.auth, s.tokenHash = true, sha256.Sum256([]byte(cfg.Token))
	}

	r := chi.NewRouter()
	r.Use(s.logRequests, s.recoverPanics, s.limitBody)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &session.Error{Code: session.CodeNotFound, Message: "no such route: " + r.URL.Path})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &apiError{code: codeMethodNotAllowed, msg: r.Method + " is not allowed on " + r.URL.Path})
	})
	r.Get("/healthz", s.healthz)
	r.Get("/openapi.yaml", s.openAPI)
	if cfg.Metrics != nil {
		s.metrics = newHTTPMetrics(cfg.Metrics)
		s.metricsPage = metricsHandler(cfg.Metrics)
	}
	r.With(s.authenticate).Get("/metrics", s.serveMetrics)
	r.Route("/v1", func(r chi.Router) {
		r.Use(s.authenticate)
		r.Post("/sessions", s.create)
		r.Get("/sessions", s.list)
		r.Get("/sessions/{id}", s.get)
		r.Delete("/sessions/{id}", s.delete)
		r.Get("/sessions/{id}/ask", s.ask)
		r.Post("/sessions/{id}/ask", s.ask)
		r.Post("/sessions/{id}/tell", s.tell)
		r.Post("/sessions/{id}/stop", s.stop)
		r.Post("/sessions/{id}/claim", s.claim)
		r.Post("/sessions/{id}/inject", s.inject)
		r.Get("/sessions/{id}/history", s.history)
		r.Get("/backup", s.backupDB)
	})
	return r
}

// Error codes of the transport, beside session's.
const (
	codeUnauthorized     = "unauthorized"
	codeTooLarge         = "too_large"
	codeMethodNotAllowed = "method_not_allowed"
	codeNoBackup         = "backup_unsupported"
)

// BackupUnsupported is the error that a Config.Backup of a store that
// makes no copies of itself returns (PostgreSQL: pg_dump's job): 501 with
// code backup_unsupported and msg, which says what to use instead.
func BackupUnsupported(msg string) error { return &apiError{code: codeNoBackup, msg: msg} }

// statuses maps every error code to its status.
var statuses = map[string]int{
	string(session.CodeInvalid):    http.StatusBadRequest,
	string(session.CodeOutOfRange): http.StatusUnprocessableEntity,
	codeUnauthorized:               http.StatusUnauthorized,
	string(session.CodeNotFound):   http.StatusNotFound,
	codeMethodNotAllowed:           http.StatusMethodNotAllowed,
	string(session.CodeConflict):   http.StatusConflict,
	string(session.CodeStopped):    http.StatusConflict,
	codeTooLarge:                   http.StatusRequestEntityTooLarge,
	codeNoBackup:                   http.StatusNotImplemented,
	string(session.CodeInternal):   http.StatusInternalServerError,

	// Nothing was written: the same request, sent after Retry-After, applies once.
	string(session.CodeStorageFull): http.StatusInsufficientStorage,
}

// retryAfterFull is the Retry-After, in seconds, of a 507 storage_full.
const retryAfterFull = "10"

// apiError is an error of the transport.
type apiError struct {
	code, msg string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

// writeError writes err as {"error": {"code", "message", ...}}. Internal
// errors are logged and shown as "internal error" only.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	body := errorBody{Code: string(session.CodeInternal), Message: "internal error"}
	var (
		se *session.Error
		ae *apiError
	)
	switch {
	case errors.Is(err, errTooLarge):
		body = errorBody{Code: codeTooLarge, Message: fmt.Sprintf("the request body is over the limit of %d bytes", s.maxBody)}
	case errors.As(err, &ae):
		body = errorBody{Code: ae.code, Message: ae.msg}
	case errors.As(err, &se) && se.Code != session.CodeInternal:
		body = errorBody{Code: string(se.Code), Message: se.Message}
		if se.Code == session.CodeConflict || se.Code == session.CodeStopped {
			g := se.Generation
			body.Generation = &g
		}
		if len(se.StopReasons) > 0 {
			body.StopReasons = stopsJSON(se.StopReasons)
		}
	default:
		s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r.Context()), "error", err)
	}
	status, ok := statuses[body.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="selfcma"`)
	}
	if status == http.StatusInsufficientStorage {
		// Nothing was written: the same request, sent again once there is
		// space, applies once.
		w.Header().Set("Retry-After", retryAfterFull)
		s.log.WarnContext(r.Context(), "storage full", "request_id", requestID(r.Context()), "error", err)
	}
	s.writeJSON(w, r, status, errorJSON{Error: body})
}

// Middleware.

type ctxKey int

const keyRequestID ctxKey = iota

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests gives every request an id (the client's X-Request-Id if it is
// short and plain) and logs it when done.
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !plainID(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), keyRequestID, id))
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		attrs := []any{"request_id", id, "method", r.Method, "path", r.URL.Path,
			"status", sw.status, "bytes", sw.bytes, "duration", time.Since(start)}
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if sid := rc.URLParam("id"); sid != "" {
				attrs = append(attrs, "session_id", sid)
			}
		}
		s.log.InfoContext(r.Context(), "request", attrs...)
		if s.metrics != nil {
			s.metrics.observe(r, sw.status, time.Since(start))
		}
	})
}

func plainID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// recoverPanics turns a panic into a logged 500.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", "request_id", requestID(r.Context()), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				s.writeError(w, r, errors.New("panic"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.maxBody {
			s.writeError(w, r, errTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		next.ServeHTTP(w, r)
	})
}

// authenticate compares the bearer token in constant time (of hashes, so
// that not even the length leaks).
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.auth || (r.Method == http.MethodGet && s.read != nil && s.read(r)) {
			next.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(h, " ")
		got := sha256.Sum256([]byte(token))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) != 1 {
			msg := "missing bearer token"
			if h != "" {
				msg = "wrong bearer token"
			}
			s.writeError(w, r, &apiError{code: codeUnauthorized, msg: msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}
