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
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/httpapi/throttle"
	"github.com/selfcma/selfcma/internal/session"
)

// DefaultMaxBodyBytes limits request bodies when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 8 << 20

// DefaultMaxInflightBytes limits the bodies of the requests under way
// together when Config.MaxInflightBytes is 0: eight bodies of the largest
// size, tens of thousands of ordinary tells.
const DefaultMaxInflightBytes = 64 << 20

// Config configures the handler.
type Config struct {
	Manager      *session.Manager
	Token        string // when not empty, every /v1 request needs "Authorization: Bearer <Token>"
	MaxBodyBytes int64  // 0 = DefaultMaxBodyBytes
	// MaxInflightBytes bounds the bodies of all requests under way
	// together, each counted by the bytes read of it so far: a request
	// whose declared Content-Length does not fit, or whose body passes the
	// limit as it is read, is 503 with Retry-After, but for the first body
	// to pass it while no other is past it, which is read on (so the bytes
	// under way stay below the limit and one body).
	// 0 = DefaultMaxInflightBytes. Four times as much bounds the state the
	// creates under way build (session.CreateBytes each, a create of a
	// larger state alone): a create waits up to 10 s for its share, then
	// is 503 too.
	MaxInflightBytes int64
	// MinBodyRate is the slowest a request body may come, in bytes a
	// second, after BodyGrace: a slower one is cut with 408
	// body_too_slow, so that a few clients sending a byte at a time hold
	// neither connections nor the in-flight budget for long.
	// 0 = DefaultMinBodyRate; BodyGrace 0 = DefaultBodyGrace.
	MinBodyRate int64
	BodyGrace   time.Duration
	Logger      *slog.Logger
	// ReadAccess, when not nil, admits a GET without the bearer token if it
	// returns true: cmd/server passes the web pages' login check, so that
	// a logged-in browser can open the pages' links to the JSON and CSV.
	ReadAccess func(*http.Request) bool
	// Backup, when not nil, returns a consistent copy of the database and
	// its size for GET /v1/backup (cmd/server passes store.Snapshot), to be
	// read and closed; without it that route answers not_found.
	Backup func() (io.ReadCloser, int64, error)
	// Metrics, when not nil, gets the request metrics of the service and
	// is served at GET /metrics, with the bearer token only (not the
	// pages' login; cmd/server adds the store's, Go's and the process's
	// metrics).
	Metrics *prometheus.Registry
	// Ready, when not nil, pings the store for GET /readyz: nil while it
	// answers (cmd/server passes the store's Ping). Without it /readyz
	// answers 200 as /healthz does.
	Ready func(context.Context) error
	// Throttle counts wrong bearer tokens by address and refuses an
	// address that sent too many (429); cmd/server shares it with the
	// web pages' login. nil = one of the handler's own.
	Throttle *throttle.Throttle

	historyPage int // records a history reads at a time; 0 = defaultHistoryPage (the tests set it)
}

type server struct {
	m           *session.Manager
	tokenHash   [32]byte
	auth        bool
	maxBody     int64
	log         *slog.Logger
	read        func(*http.Request) bool
	backup      func() (io.ReadCloser, int64, error)
	metrics     *httpMetrics  // nil: none
	metricsPage http.Handler  // GET /metrics; nil: none
	backups     chan struct{} // a token per backup under way
	inflight    inflight
	minRate     int64
	grace       time.Duration
	waits       waitLog
	creates     *budget
	throttle    *throttle.Throttle
	historyPage int
	ready       func(context.Context) error
}

// New returns the router of the service. Other packages may mount more
// routes on it (the web pages under /ui).
func New(cfg Config) *chi.Mux {
	_, r := newServer(cfg)
	return r
}

// newServer is New, with the server behind the router (for the tests).
func newServer(cfg Config) (*server, *chi.Mux) {
	s := &server{m: cfg.Manager, maxBody: cfg.MaxBodyBytes, log: cfg.Logger, read: cfg.ReadAccess, backup: cfg.Backup, ready: cfg.Ready,
		backups: make(chan struct{}, maxBackups), historyPage: cfg.historyPage}
	if s.historyPage <= 0 {
		s.historyPage = defaultHistoryPage
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.throttle = cfg.Throttle; s.throttle == nil {
		s.throttle = throttle.New()
	}
	s.inflight.max = cfg.MaxInflightBytes
	if s.inflight.max <= 0 {
		s.inflight.max = DefaultMaxInflightBytes
	}
	s.creates = newBudget(4 * s.inflight.max)
	if s.minRate = cfg.MinBodyRate; s.minRate <= 0 {
		s.minRate = DefaultMinBodyRate
	}
	if s.grace = cfg.BodyGrace; s.grace <= 0 {
		s.grace = DefaultBodyGrace
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Token != "" {
		s.auth, s.tokenHash = true, sha256.Sum256([]byte(cfg.Token))
	}

	r := chi.NewRouter()
	r.Use(s.logRequests, s.recoverPanics, s.limitBody, s.limitInflight)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &session.Error{Code: session.CodeNotFound, Message: "no such route: " + r.URL.Path})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &apiError{code: codeMethodNotAllowed, msg: r.Method + " is not allowed on " + r.URL.Path})
	})
	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
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
		r.Post("/sessions/{id}/release", s.releaseLease)
		r.Post("/sessions/{id}/inject", s.inject)
		r.Get("/sessions/{id}/history", s.history)
		r.Get("/sessions/{id}/covariance", s.covariance)
		r.Get("/backup", s.backupDB)
	})
	return s, r
}

// Error codes of the transport, beside session's.
const (
	codeUnauthorized     = "unauthorized"
	codeTooLarge         = "too_large"
	codeMethodNotAllowed = "method_not_allowed"
	codeMediaType        = "unsupported_media_type"
	codeTooManyRequests  = "too_many_requests"
	codeOverloaded       = "overloaded"
	codeSlowBody         = "body_too_slow"
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
	codeMediaType:                  http.StatusUnsupportedMediaType,
	codeTooManyRequests:            http.StatusTooManyRequests,
	codeOverloaded:                 http.StatusServiceUnavailable,
	codeSlowBody:                   http.StatusRequestTimeout,
	codeNoBackup:                   http.StatusNotImplemented,
	string(session.CodeInternal):   http.StatusInternalServerError,

	// Nothing was written: the same request, sent after Retry-After, applies once.
	string(session.CodeStorageFull): http.StatusInsufficientStorage,
	// The store is unreachable: the same request, sent after Retry-After, applies at most once.
	string(session.CodeStoreUnavailable): http.StatusServiceUnavailable,
	// The server's fault, not the client's, and not passing: named, not hidden.
	string(session.CodeDamaged): http.StatusInternalServerError,
}

// retryAfterFull is the Retry-After, in seconds, of a 507 storage_full.
const retryAfterFull = "10"

// retryAfterUnavailable is the Retry-After, in seconds, of a 503
// store_unavailable: a restart of the database or a failover to its
// standby takes seconds.
const retryAfterUnavailable = "2"

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
	if info, _ := r.Context().Value(keyInfo).(*reqInfo); info != nil {
		info.code = body.Code
	}
	if status >= 500 && r.Method != http.MethodGet && r.Method != http.MethodHead && s.metrics != nil {
		s.metrics.writeErrors.WithLabelValues(writeErrorKind(err)).Inc()
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="selfcma"`)
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	if status == http.StatusInsufficientStorage {
		// Nothing was written: the same request, sent again once there is
		// space, applies once.
		w.Header().Set("Retry-After", retryAfterFull)
		s.log.WarnContext(r.Context(), "storage full", "request_id", requestID(r.Context()), "error", err)
	}
	if body.Code == string(session.CodeDamaged) {
		s.log.ErrorContext(r.Context(), "session damaged", "request_id", requestID(r.Context()), "error", err)
	}
	if body.Code == string(session.CodeStoreUnavailable) {
		w.Header().Set("Retry-After", retryAfterUnavailable)
		s.log.WarnContext(r.Context(), "store unavailable", "request_id", requestID(r.Context()), "error", err)
	}
	s.writeJSON(w, r, status, errorJSON{Error: body})
}

// Middleware.

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyInfo
)

// reqInfo is what the handlers tell the request's log line.
type reqInfo struct {
	code string // the error code answered, if any
}

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
// short and plain) and logs it when done: at debug level if it went well,
// at info level with its error code if it was refused (4xx), at warn level
// if the server failed (5xx, whose cause writeError logs).
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
		info := &reqInfo{}
		ctx := context.WithValue(context.WithValue(r.Context(), keyRequestID, id), keyInfo, info)
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		attrs := []any{"request_id", id, "method", r.Method, "path", r.URL.Path,
			"status", sw.status, "bytes", sw.bytes, "duration", time.Since(start)}
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if sid := rc.URLParam("id"); sid != "" {
				attrs = append(attrs, "session_id", sid)
			}
		}
		// A request that went well is a debug line; one answered with an
		// error says its code.
		level := slog.LevelDebug
		switch {
		case sw.status >= 500:
			level = slog.LevelWarn
		case sw.status >= 400:
			level = slog.LevelInfo
		}
		if info.code != "" {
			attrs = append(attrs, "error_code", info.code)
		}
		s.log.Log(r.Context(), level, "request", attrs...)
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
// that not even the length leaks). A GET with the pages' login (read) is
// admitted too, except for the backup (the whole database) and /metrics
// (for scrapers, which have the token): these take the token.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearerOnly := r.URL.Path == "/v1/backup" || r.URL.Path == "/metrics"
		if !s.auth || (r.Method == http.MethodGet && !bearerOnly && s.read != nil && s.read(r)) {
			next.ServeHTTP(w, r)
			return
		}
		key := throttle.Key(r)
		if blocked, wait := s.throttle.Blocked(key); blocked {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			s.writeError(w, r, &apiError{code: codeTooManyRequests, msg: "too many wrong bearer tokens or logins from this address: try again later"})
			return
		}
		h := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(h, " ")
		got := sha256.Sum256([]byte(token))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) != 1 {
			msg := "missing bearer token"
			if h != "" {
				msg = "wrong bearer token"
				// Only a token sent counts as a guess.
				_, first := s.throttle.Fail(key)
				s.log.WarnContext(r.Context(), "wrong bearer token", "request_id", requestID(r.Context()), "client", r.RemoteAddr, "path", r.URL.Path)
				if first {
					s.log.WarnContext(r.Context(), "client throttled", "client", key.String(), "failures", s.throttle.Max, "window", s.throttle.Window)
				}
			}
			s.writeError(w, r, &apiError{code: codeUnauthorized, msg: msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}
