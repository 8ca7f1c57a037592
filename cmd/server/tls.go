package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certRecheck is how often, at most, certFiles looks whether its files
// have changed.
const certRecheck = time.Second

// certFiles is the server's certificate and key, read from two PEM files
// and read again when either file changes, so that a renewed certificate
// is served from the next handshake on, without a restart. A renewal that
// does not load (the key written but not yet the certificate, say) is
// logged once and the pair loaded last is served until the files load.
type certFiles struct {
	certFile, keyFile string
	log               *slog.Logger

	mu       sync.Mutex
	pair     *tls.Certificate
	modified [2]time.Time // of certFile and keyFile when pair was read
	checked  time.Time
	failed   string // the error of the last check, logged once
}

// loadCertFiles reads the pair, or fails with why.
func loadCertFiles(certFile, keyFile string, log *slog.Logger) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile, log: log}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads the pair and the files' modification times. c.mu is held (or
// c is not shared yet).
func (c *certFiles) load() error {
	mod, err := c.modTimes()
	if err != nil {
		return err
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	c.pair, c.modified = &pair, mod
	return nil
}

func (c *certFiles) modTimes() ([2]time.Time, error) {
	var mod [2]time.Time
	for i, name := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return mod, fmt.Errorf("tls: %w", err)
		}
		mod[i] = fi.ModTime()
	}
	return mod, nil
}

// get is tls.Config.GetCertificate.
func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= certRecheck {
		c.checked = now
		mod, err := c.modTimes()
		if err == nil && mod != c.modified {
			if err = c.load(); err == nil {
				c.log.Info("certificate loaded again", "cert", c.certFile)
			}
		}
		if err != nil && err.Error() != c.failed {
			c.log.Error("the certificate did not load again; serving the one loaded before", "err", err)
		}
		c.failed = ""
		if err != nil {
			c.failed = err.Error()
		}
	}
	return c.pair, nil
}

// tlsConfig is the server's TLS: TLS 1.2 at least, the certificate of c.
func (c *certFiles) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.get}
}
