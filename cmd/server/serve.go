package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/httpapi/throttle"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/ui"
	"github.com/selfcma/selfcma/internal/ui/sessionsource"
)

// serve serves until ctx is done, then shuts down gracefully. It logs to
// stdout; its first line is `msg=listening addr=HOST:PORT`.
func serve(ctx context.Context, cfg Config, stdout io.Writer) error {
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))

	// The certificate first, then listen, so that a bad certificate or a
	// bad or taken address fails before anything else; then open the file.
	var certs *certFiles
	if cfg.TLSCert != "" {
		var err error
		if certs, err = loadCertFiles(cfg.TLSCert, cfg.TLSKey, log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	reg, onCommit := newMetrics()
	if certs != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "selfcma_tls_certificate_expiry_timestamp_seconds",
			Help: "When the certificate served runs out (its NotAfter), in Unix seconds.",
		}, certs.notAfter))
	}
	opened := time.Now()
	st, closeStore, kind, n, err := openChecked(ctx, cfg, log, onCommit)
	if err != nil {
		ln.Close()
		return err
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "selfcma_store_info",
		Help:        "The store this server keeps its sessions in (kind: bbolt or postgres); always 1.",
		ConstLabels: prometheus.Labels{"kind": kind},
	}, func() float64 { return 1 }))
	if kind == kindBolt {
		reg.MustRegister(fileSize(cfg.DB))
	}
	life := httpapi.NewLifecycle(log, reg)
	m := session.NewManager(st, session.Options{Limits: cfg.Limits, CacheBytes: cfg.CacheBytes, OnEvent: life.OnEvent})
	var scans sync.WaitGroup
	scanCtx, stopScans := context.WithCancel(ctx)
	life.Watch(scanCtx, &scans, m, scanPeriod, cfg.IdleAfter)
	srv := newHTTPServer(cfg, m, st, reg, log)
	log.Info("listening", "addr", ln.Addr().String(), "db", redact(cfg.DB), "store", kind, "auth", cfg.Token != "", "tls", certs != nil, "version", version(),
		"sessions", n.Sessions, "history_entries", n.HistoryEntries, "check_took", time.Since(opened).Round(time.Millisecond).String())
	if cfg.Token != "" && certs == nil && !loopback(ln.Addr()) {
		log.Warn("the bearer token crosses the network unencrypted: serve with -tls-cert and -tls-key, or behind a TLS proxy")
	}

	err = serveUntilDone(ctx, srv, ln, certs, cfg.ShutdownTimeout, log)
	// The store last, after every request and scan has finished.
	stopScans()
	scans.Wait()
	if cerr := closeStore(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// openChecked opens the store of -db, waiting for an unreachable database
// (wait.go), and reads it whole as -check does (startcheck.go), refusing a
// damaged one. It returns the store, its closer, its kind and what it read.
func openChecked(ctx context.Context, cfg Config, log *slog.Logger, onCommit func(int, time.Duration)) (session.Store, func() error, string, session.CheckCounts, error) {
	db := cfg.DB
	st, closeStore, kind, err := waitStore(ctx, cfg, log, onCommit)
	if err != nil {
		return nil, nil, "", session.CheckCounts{}, openError(db, err)
	}
	n, err := startCheck(ctx, st, db)
	if err != nil {
		closeStore()
		return nil, nil, "", session.CheckCounts{}, err
	}
	return st, closeStore, kind, n, nil
}

// newHTTPServer wires the API and the pages over m, with timeouts.
func newHTTPServer(cfg Config, m *session.Manager, st session.Store, reg *prometheus.Registry, log *slog.Logger) *http.Server {
	// The pages' logins and the throttle of wrong tokens are shared by
	// the API and the pages.
	logins, guesses := ui.NewLogins(cfg.Token), throttle.New()
	h := httpapi.New(httpapi.Config{
		Manager: m, Token: cfg.Token, MaxBodyBytes: cfg.MaxBodyBytes, MaxInflightBytes: cfg.MaxInflight, Logger: log,
		ReadAccess: logins.LoggedIn, // the pages' links open in a logged-in browser
		Throttle:   guesses,
		Backup:     backupOf(st, cfg.DB),
		Ready:      readyOf(st),
		Metrics:    reg,
	})
	_, canBackup := st.(session.Snapshotter)
	h.Mount(ui.Prefix, ui.Handler(sessionsource.New(m), ui.Options{Token: cfg.Token, Logins: logins, Throttle: guesses, Logger: log,
		BackupAvailable: canBackup}))
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// serveUntilDone serves ln (HTTPS with certs) until Serve fails or ctx is
// done; then it shuts srv down, waiting up to timeout for the requests
// under way, and cuts those still running after it.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener, certs *certFiles, timeout time.Duration, log *slog.Logger) error {
	served := make(chan error, 1)
	if certs != nil {
		srv.TLSConfig = certs.tlsConfig()
		go func() { served <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { served <- srv.Serve(httpapi.JSONErrors(ln)) }() // net/http's own 400s in JSON too
	}
	select {
	case err := <-served:
		return err // Serve failed by itself.
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := srv.Shutdown(sctx)
	cancel()
	if err != nil {
		// Past the deadline, cut what is still under way (a slow
		// backup holds a read transaction that closing the file
		// would wait for).
		srv.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// loopback reports whether a is an address of this machine only.
func loopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
