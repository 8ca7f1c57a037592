package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 of the given
// serial number and its key to certFile and keyFile, modified at mod, and
// returns the certificate.
func writeCert(t *testing.T, certFile, keyFile string, serial int64, mod time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "selfcma test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Duration(serial) * time.Hour).Truncate(time.Second),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name, typ string
		der       []byte
	}{{certFile, "CERTIFICATE", der}, {keyFile, "EC PRIVATE KEY", kder}} {
		if err := os.WriteFile(f.name, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.name, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// served returns the serial number of the certificate that a new
// connection to addr is served, trusting only the certificates of roots.
func served(t *testing.T, addr string, roots ...*x509.Certificate) int64 {
	t.Helper()
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// With -tls-cert and -tls-key the server serves HTTPS only, with the
// certificate of the files, read again when their contents change; a
// renewal that does not load leaves the certificate before it served.
func TestTLS(t *testing.T) {
	t.Parallel() // it waits for the rechecks
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	start := time.Now().Add(-time.Minute)
	first := writeCert(t, certFile, keyFile, 1, start)
	base, log, _ := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "s.db"), "-token", "tok"},
		map[string]string{"SELFCMA_TLS_CERT": certFile, "SELFCMA_TLS_KEY": keyFile})
	addr := strings.TrimPrefix(base, "http://")
	if !strings.Contains(log.String(), " tls=true ") || strings.Contains(log.String(), "unencrypted") {
		t.Errorf("log:\n%s", log)
	}

	pool := x509.NewCertPool()
	pool.AddCert(first)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest("POST", "https://"+addr+"/v1/sessions", strings.NewReader(`{"x0": [1, 2], "sigma0": 1}`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 || resp.TLS == nil || resp.ProtoMajor != 2 {
		t.Errorf("create over HTTPS: %d %s", resp.StatusCode, resp.Proto)
	}
	if code, _ := request(t, "GET", base+"/healthz", "", ""); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS server: %d", code)
	}
	expiry := func(want *x509.Certificate) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		line := fmt.Sprintf("\nselfcma_tls_certificate_expiry_timestamp_seconds %g\n", float64(want.NotAfter.Unix()))
		if !strings.Contains(string(b), line) {
			t.Errorf("/metrics lacks%s", line)
		}
	}
	expiry(first)

	// A renewal: new contents, with the modification time of the first
	// pair (as a copy that keeps times writes it).
	second := writeCert(t, certFile, keyFile, 2, start)
	time.Sleep(certRecheck + 100*time.Millisecond)
	if s := served(t, addr, first, second); s != 2 {
		t.Errorf("after the renewal the server serves certificate %d", s)
	}
	expiry(second)
	// A renewal half written: the key only, which does not match.
	if err := os.WriteFile(keyFile, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(keyFile, start.Add(2*time.Second), start.Add(2*time.Second))
	time.Sleep(certRecheck + 100*time.Millisecond)
	for range 2 {
		if s := served(t, addr, first, second); s != 2 {
			t.Errorf("after a renewal that does not load the server serves certificate %d", s)
		}
		time.Sleep(certRecheck + 100*time.Millisecond)
	}
	if n := strings.Count(log.String(), "did not load again"); n != 1 {
		t.Errorf("the failed renewal logged %d times:\n%s", n, log)
	}
	// The files gone, then a third pair.
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		time.Sleep(certRecheck + 100*time.Millisecond)
		if s := served(t, addr, first, second); s != 2 {
			t.Errorf("with the certificate file gone the server serves certificate %d", s)
		}
	}
	if n := strings.Count(log.String(), "did not load again"); n != 2 {
		t.Errorf("the failed renewals logged %d times:\n%s", n, log)
	}
	third := writeCert(t, certFile, keyFile, 3, start.Add(3*time.Second))
	time.Sleep(certRecheck + 100*time.Millisecond)
	if s := served(t, addr, third); s != 3 {
		t.Errorf("after the third pair the server serves certificate %d", s)
	}
}

// A token served without TLS on an address other machines reach is
// warned of.
func TestTokenInClear(t *testing.T) {
	_, log, _ := startRun(t, []string{"-addr", "0.0.0.0:0", "-db", filepath.Join(t.TempDir(), "s.db"), "-token", "tok"}, nil)
	if !strings.Contains(log.String(), "unencrypted") {
		t.Errorf("no warning:\n%s", log)
	}
}
