package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certRecheck is how often, at most, certFiles reads its files again.
const certRecheck = time.Second

// certFiles is the server's certificate and key, read from two PEM files
// and read again when either file's contents change, so that a renewed
// certificate is served from the next handshake on, without a restart
// (whether the files are rewritten, replaced by a rename or, as in a
// mounted secret, by a symbolic link). A renewal that does not load (the
// key written but not yet the certificate, say) is logged once and the
// pair loaded last is served until the files load.
type certFiles struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.Mutex
	pair    *tls.Certificate
	cert    []byte // the PEM files' contents, as pair was loaded from
	key     []byte
	checked time.Time
	failed  string // the error of the last check, logged once
}

// loadCertFiles reads the pair, or fails with why.
func loadCertFiles(certFile, keyFile string, log *slog.Logger) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile, log: log}
	if _, err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads the files and loads the pair if their contents changed; it
// reports whether it did. c.mu is held (or c is not shared yet).
func (c *certFiles) load() (bool, error) {
	cert, err := os.ReadFile(c.certFile)
	if err != nil {
		return false, fmt.Errorf("tls: %w", err)
	}
	key, err := os.ReadFile(c.keyFile)
	if err != nil {
		return false, fmt.Errorf("tls: %w", err)
	}
	if c.pair != nil && bytes.Equal(cert, c.cert) && bytes.Equal(key, c.key) {
		return false, nil
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err == nil && pair.Leaf == nil { // parsed unless GODEBUG=x509keypairleaf=0
		pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0])
	}
	if err != nil {
		return false, fmt.Errorf("tls: %s and %s: %w", c.certFile, c.keyFile, err)
	}
	c.pair, c.cert, c.key = &pair, cert, key
	return true, nil
}

// get is tls.Config.GetCertificate.
func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= certRecheck {
		c.checked = now
		loaded, err := c.load()
		switch {
		case err != nil && err.Error() != c.failed:
			c.log.Error("the certificate did not load again; serving the one loaded before", "err", err)
		case loaded:
			c.log.Info("certificate loaded again", "cert", c.certFile)
		}
		c.failed = ""
		if err != nil {
			c.failed = err.Error()
		}
	}
	return c.pair, nil
}

// notAfter is the end of the served certificate's validity, in Unix
// seconds: the metric to alert on before it runs out.
func (c *certFiles) notAfter() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.pair.Leaf.NotAfter.Unix())
}

// tlsConfig is the server's TLS: TLS 1.2 at least, the certificate of c.
func (c *certFiles) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.get}
}
