package httpapi

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/session"
)

// Lifecycle logs the life of the sessions (created, restarted, stopped
// and why, deleted) and counts it for /metrics, from the Manager's events
// (session.Options.OnEvent); its Scan keeps the gauges of the sessions by
// status, reading the Manager's list a page at a time on a period, not on
// every scrape, so that a scrape costs the same with a million sessions.
type Lifecycle struct {
	log *slog.Logger

	told, evaluations prometheus.Counter
	created, deleted  prometheus.Counter
	restarts          prometheus.Counter
	stopped           *prometheus.CounterVec
	sessions          *prometheus.GaugeVec
	idle              prometheus.Gauge
	scanned           prometheus.Gauge
}

// NewLifecycle returns a Lifecycle that logs to log (nil: nowhere) and
// registers its metrics with reg (nil: none kept).
func NewLifecycle(log *slog.Logger, reg prometheus.Registerer) *Lifecycle {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Lifecycle{
		log: log,
		told: prometheus.NewCounter(prometheus.CounterOpts{Name: "selfcma_generations_told_total",
			Help: "Generations told whole and applied, over all sessions."}),
		evaluations: prometheus.NewCounter(prometheus.CounterOpts{Name: "selfcma_evaluations_told_total",
			Help: "Fitness values of the generations applied, over all sessions."}),
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "selfcma_sessions_created_total",
			Help: "Sessions created."}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "selfcma_sessions_deleted_total",
			Help: "Sessions deleted."}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{Name: "selfcma_restarts_total",
			Help: "Restarts (IPOP, or BIPOP's large and small runs), over all sessions."}),
		stopped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "selfcma_sessions_stopped_total",
			Help: "Sessions stopped, by the first stop reason (a criterion, or requested)."}, []string{"reason"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "selfcma_sessions",
			Help: "Sessions by status, as of the last scan (selfcma_sessions_scan_timestamp_seconds)."}, []string{"status"}),
		idle: prometheus.NewGauge(prometheus.GaugeOpts{Name: "selfcma_sessions_idle",
			Help: "Running sessions not told anything for longer than the server's -idle-after, as of the last scan."}),
		scanned: prometheus.NewGauge(prometheus.GaugeOpts{Name: "selfcma_sessions_scan_timestamp_seconds",
			Help: "When the last scan of the sessions for the gauges ended, in Unix seconds."}),
	}
	if reg != nil {
		reg.MustRegister(c.told, c.evaluations, c.created, c.deleted, c.restarts, c.stopped, c.sessions, c.idle, c.scanned)
	}
	return c
}

// OnEvent is for session.Options.OnEvent.
func (c *Lifecycle) OnEvent(e session.Event) {
	s := &e.Session
	switch e.Kind {
	case session.EventTold:
		c.told.Inc()
		c.evaluations.Add(float64(e.Evaluations))
	case session.EventCreated:
		c.created.Inc()
		c.log.Info("session created", "session_id", s.ID, "algorithm", s.Algorithm, "dimension", s.Dimension,
			"population_size", s.PopulationSize, "seed", s.Seed, "active", s.Active, "restarts", s.Restarts.Strategy)
	case session.EventRestarted:
		c.restarts.Inc()
		var why []session.StopReason
		if n := len(s.Restarts.Runs); n > 0 {
			why = s.Restarts.Runs[n-1].StopReasons
		}
		c.log.Info("session restarted", "session_id", s.ID, "generation", s.Generation, "restarts", s.Restarts.Count,
			"population_size", s.PopulationSize, "run_stopped_by", reasonNames(why))
	case session.EventStopped:
		reason := "other"
		if len(s.StopReasons) > 0 {
			reason = s.StopReasons[0].Name // the engine's names: a fixed set
		}
		c.stopped.WithLabelValues(reason).Inc()
		attrs := []any{"session_id", s.ID, "generation", s.Generation, "evaluations", s.Evaluations, "reasons", reasonNames(s.StopReasons)}
		if s.Best != nil {
			attrs = append(attrs, "best_f", s.Best.F)
		}
		c.log.Info("session stopped", attrs...)
	case session.EventDeleted:
		c.deleted.Inc()
		c.log.Info("session deleted", "session_id", s.ID)
	}
}

func reasonNames(rs []session.StopReason) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return strings.Join(names, ",")
}

// scanPage is how many sessions one read of the list takes.
const scanPage = 1000

// Scan counts the sessions by status, and the running ones whose last
// change is older than idleAfter, a page at a time, and sets the gauges.
func (c *Lifecycle) Scan(ctx context.Context, m *session.Manager, idleAfter time.Duration, now time.Time) error {
	counts := map[string]int{session.StatusRunning: 0, session.StatusStopped: 0}
	idle := 0
	for after := ""; ; {
		page, err := m.List(ctx, after, scanPage)
		if err != nil {
			return err
		}
		for _, s := range page {
			counts[s.Status]++
			if s.Status == session.StatusRunning && now.Sub(s.UpdatedAt) > idleAfter {
				idle++
			}
		}
		if len(page) < scanPage {
			break
		}
		after = page[len(page)-1].ID
	}
	for status, n := range counts {
		c.sessions.WithLabelValues(status).Set(float64(n))
	}
	c.idle.Set(float64(idle))
	c.scanned.Set(float64(time.Now().Unix()))
	return nil
}

// Watch scans at once, then every period until ctx is done; the caller
// waits for the WaitGroup's Done before closing the store.
func (c *Lifecycle) Watch(ctx context.Context, wg *sync.WaitGroup, m *session.Manager, period, idleAfter time.Duration) {
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			if err := c.Scan(ctx, m, idleAfter, time.Now()); err != nil && ctx.Err() == nil {
				c.log.Warn("scan of the sessions for /metrics failed", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}
