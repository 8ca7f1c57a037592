package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestLifecycle: a session's life is logged at info level (created,
// stopped and why, deleted) and counted; a request that went well is
// not logged at info level, a refused one is, with its error code; the
// scan counts the sessions by status and the idle ones.
func TestLifecycle(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "l.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	w := &syncWriter{w: &buf}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	reg := prometheus.NewRegistry()
	life := NewLifecycle(log, reg)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := session.NewManager(st, session.Options{OnEvent: life.OnEvent, Now: func() time.Time { return now }})
	mux := New(Config{Manager: m, Logger: log, Metrics: reg})
	ts := &testServer{Server: httptest.NewServer(mux), mux: mux, m: m}
	defer ts.Close()

	a := ts.create(t, map[string]any{"x0": []float64{1, 2}, "sigma0": 0.5, "algorithm": "cma-es", "termination": map[string]any{"max_evaluations": 12}})
	b := ts.create(t, map[string]any{"x0": []float64{1}, "sigma0": 1})
	for range 2 {
		ts.tell(t, a.ID, sphereTell(ts.ask(t, a.ID)))
	}
	ts.do(t, call{method: "POST", path: "/v1/sessions", body: `{"x0": [1], "sigma0": 1, "sigma": 1}`, invalid: true})
	ts.do(t, call{method: "DELETE", path: "/v1/sessions/" + b.ID})

	if err := life.Scan(context.Background(), m, time.Hour, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"selfcma_sessions_created_total": 2, "selfcma_sessions_deleted_total": 1, "selfcma_generations_told_total": 2,
		"selfcma_evaluations_told_total": 12, `selfcma_sessions{status="stopped"}`: 1, `selfcma_sessions{status="running"}`: 0,
		`selfcma_sessions_stopped_total{reason="max_evaluations"}`: 1,
	} {
		if got := metricValue(t, reg, name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	c := ts.create(t, map[string]any{"x0": []float64{1}, "sigma0": 1})
	life.Scan(context.Background(), m, time.Hour, now.Add(2*time.Hour))
	if got := metricValue(t, reg, "selfcma_sessions_idle"); got != 1 {
		t.Errorf("idle sessions: %v, want 1 (%s)", got, c.ID)
	}
	life.Scan(context.Background(), m, time.Hour, now.Add(time.Minute))
	if got := metricValue(t, reg, "selfcma_sessions_idle"); got != 0 {
		t.Errorf("idle sessions a minute after: %v, want 0", got)
	}

	// An IPOP session runs to its end: one restart, then a stop.
	r := ts.create(t, map[string]any{"x0": []float64{1, 1}, "sigma0": 0.5, "population_size": 4, "algorithm": "cma-es", "seed": 2,
		"restarts": map[string]any{"strategy": "ipop", "max": 1}})
	for g := 0; g < 5000; g++ {
		a := ts.do(t, call{method: "GET", path: "/v1/sessions/" + r.ID + "/ask"})
		if a.status != 200 {
			break
		}
		ts.tell(t, r.ID, sphereTell(decode[batchView](t, a)))
	}
	if got := metricValue(t, reg, "selfcma_restarts_total"); got != 1 {
		t.Errorf("restarts: %v, want 1", got)
	}

	out := string(w.bytes(&buf))
	for _, want := range []string{
		`msg="session restarted" session_id=` + r.ID + ` generation=`,
		`restarts=1 population_size=8 run_stopped_by=`,
		`msg="session created" session_id=` + a.ID + ` algorithm=cma-es dimension=2 population_size=6`,
		`msg="session stopped" session_id=` + a.ID + ` generation=2 evaluations=12 reasons=max_evaluations`,
		`msg="session deleted" session_id=` + b.ID,
		`status=400 `, `error_code=invalid`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "status=200") || strings.Contains(out, "status=201") {
		t.Errorf("requests that went well logged at info level:\n%s", out)
	}
}

// metricValue is the value of the series name{label="value"} in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, series string) float64 {
	t.Helper()
	name, label, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
			}
			if strings.Join(ls, ",") != label {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s", series)
	return 0
}

func TestWriteErrorKind(t *testing.T) {
	for err, want := range map[error]string{
		&os.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}:    "no_space",
		fmt.Errorf("store: put: %w", syscall.EDQUOT):                  "no_space",
		fmt.Errorf("store: %w", &os.PathError{Err: syscall.EIO}):      "io",
		&os.PathError{Op: "open", Path: "f", Err: syscall.EROFS}:      "read_only",
		fmt.Errorf("commit: %w", context.DeadlineExceeded):            "timeout",
		errors.New("write /data/selfcma.db: no space left on device"): "other",
	} {
		if got := writeErrorKind(err); got != want {
			t.Errorf("%v: %s, want %s", err, got, want)
		}
	}
}

// A write that fails on the server's side counts in
// selfcma_write_errors_total; a read that fails does not.
func TestWriteErrorsCounted(t *testing.T) {
	fs := &failingStore{}
	ts := newTestServer(t, serverOpts{wrapStore: func(st session.Store) session.Store { fs.Store = st; return fs }})
	total := func() float64 {
		var n float64
		for _, line := range strings.Split(string(ts.do(t, call{method: "GET", path: "/metrics"}).body), "\n") {
			if rest, ok := strings.CutPrefix(line, "selfcma_write_errors_total{"); ok {
				_, v, _ := strings.Cut(rest, "} ")
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("line %q", line)
				}
				n += f
			}
		}
		return n
	}
	if n := total(); n != 0 {
		t.Fatalf("%v write errors at the start", n)
	}
	fs.fail.Store(1)
	if r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: map[string]any{"x0": []float64{1}, "sigma0": 1}}); r.status < 500 {
		t.Fatalf("create with a failing store: %d", r.status)
	}
	if n := total(); n != 1 {
		t.Errorf("%v write errors after one, want 1", n)
	}
}
