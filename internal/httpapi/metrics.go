package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/selfcma/selfcma/internal/session"
)

// httpMetrics are the request counts and durations of the service, by
// route pattern (not by path: one series per route, whatever the session).
type httpMetrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	writeErrors *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "selfcma_http_requests_total",
			Help: "Requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "selfcma_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by method and route pattern.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
	}
	m.writeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "selfcma_write_errors_total",
		Help: "Requests that would change a session and failed on the server's side (5xx), by kind: no_space (the disk is full), io, read_only, timeout, unavailable (the store could not be reached), other.",
	}, []string{"kind"})
	for _, k := range []string{"no_space", "io", "read_only", "timeout", "unavailable", "other"} {
		m.writeErrors.WithLabelValues(k)
	}
	reg.MustRegister(m.requests, m.duration, m.writeErrors)
	return m
}

// writeErrorKind names the kind of a failed write by its cause.
func writeErrorKind(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "no_space"
	case errors.Is(err, session.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, syscall.EIO):
		return "io"
	case errors.Is(err, syscall.EROFS):
		return "read_only"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	}
	return "other"
}

// observe counts a finished request. Paths that match no route count as
// route "other", so that scans of random paths make no new series.
func (m *httpMetrics) observe(r *http.Request, status int, took time.Duration) {
	route := "other"
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			route = p
		}
	}
	method := r.Method
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch:
	default:
		method = "other"
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(took.Seconds())
}

// serveMetrics answers GET /metrics.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.metricsPage == nil {
		s.writeError(w, r, &session.Error{Code: session.CodeNotFound, Message: "this server keeps no metrics"})
		return
	}
	s.metricsPage.ServeHTTP(w, r)
}

// metricsHandler serves what reg gathers in Prometheus's text format.
func metricsHandler(reg prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
