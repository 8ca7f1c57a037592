package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// Defaults of Config.MinBodyRate and Config.BodyGrace: a body gets 5 s,
// then must keep up 16 KiB/s on average (an 8 MiB body then has 9 minutes;
// the server's ReadTimeout cuts it sooner).
const (
	DefaultMinBodyRate = 16 << 10
	DefaultBodyGrace   = 5 * time.Second
)

// inflight counts the body bytes read of the requests under way.
type inflight struct {
	max int64
	n   atomic.Int64
	// over is the one body that may be read on past max (nil: none), so
	// that a burst of bodies that pass the limit together, each partly
	// read, is not cut whole: the first to pass it is read to its end,
	// the others are 503. The bytes under way stay below max plus one
	// body (MaxBodyBytes).
	over atomic.Pointer[countedBody]
}

// take counts n more bytes of body b, if they fit or b is (or now becomes)
// the one body read on past the limit.
func (f *inflight) take(b *countedBody, n int64) bool {
	if f.n.Add(n) > f.max && f.over.Load() != b && !f.over.CompareAndSwap(nil, b) {
		f.n.Add(-n)
		return false
	}
	return true
}

// release gives back the bytes charged for body b, and its place past
// the limit if it held it.
func (f *inflight) release(b *countedBody) {
	f.n.Add(-b.read)
	f.over.CompareAndSwap(b, nil)
}

// limitInflight charges the in-flight budget with the bytes of each body
// as they are read (given back when the request ends), and holds the body
// to the minimum rate. A request that declares a body larger than what is
// left is answered 503 at once, unread; one whose body passes the limit as
// it is read gets 503 too, the rest of its body drained unkept, unless it
// is the first to pass it while no other body is past it (inflight.over),
// which is read on. So the memory the bodies take is bounded by the
// configuration (the limit and one body), and a client
// that sends slowly, or without a Content-Length, holds only what it sent,
// and not for long.
func (s *server) limitInflight(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if r.ContentLength > 0 && r.ContentLength > s.inflight.max-s.inflight.n.Load() {
			// Answer at once, then drain the body into nothing, so that
			// the client, still sending, reads the 503 rather than a reset
			// connection; none of it is kept.
			rc.EnableFullDuplex()
			s.writeError(w, r, s.overloaded())
			rc.Flush()
			b := &countedBody{in: r.Body, s: s, rc: rc, h: w.Header(), start: time.Now(), free: true}
			io.Copy(io.Discard, b)
			b.done()
			return
		}
		b := &countedBody{in: r.Body, s: s, rc: rc, h: w.Header(), start: time.Now()}
		r.Body = b
		defer func() {
			s.inflight.release(b)
			if errors.Is(b.err, errOverloadedBody) {
				rc.Flush()
				b.free = true
				io.Copy(io.Discard, b)
			}
			b.done()
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *server) overloaded() *apiError {
	return &apiError{code: codeOverloaded, msg: fmt.Sprintf("the server is reading %d bytes of requests already (its limit is %d): try again shortly", s.inflight.n.Load(), s.inflight.max)}
}

// errOverloadedBody marks a body that passed the in-flight limit.
var errOverloadedBody = errors.New("in-flight limit")

// countedBody is a request body charged to the in-flight budget as it is
// read (free: drained, not charged), with a read deadline that moves with
// the bytes read: start + grace + read/minRate.
type countedBody struct {
	in    io.ReadCloser
	s     *server
	rc    *http.ResponseController
	h     http.Header // the response's
	start time.Time
	free  bool
	read  int64 // bytes charged
	err   error // the first failure, returned again
	eof   bool  // read to its end
}

// done ends the body's deadline once the body was read to its end (the
// server sets the next request's). Else the deadline stays: what the
// server then reads of the body to discard it is bounded by the rate too.
func (b *countedBody) done() {
	if b.eof {
		b.rc.SetReadDeadline(time.Time{})
	}
}

func (b *countedBody) Read(p []byte) (int, error) {
	if b.err != nil && !b.free {
		return 0, b.err
	}
	d := b.start.Add(b.s.grace + time.Duration(float64(b.read)/float64(b.s.minRate)*float64(time.Second)))
	b.rc.SetReadDeadline(d)
	n, err := b.in.Read(p)
	b.eof = b.eof || err == io.EOF
	if b.free {
		return n, err
	}
	if n > 0 {
		if !b.s.inflight.take(b, int64(n)) {
			b.rc.EnableFullDuplex() // the 503 goes out while the rest is drained
			b.err = &bodyError{errOverloadedBody, b.s.overloaded()}
			return 0, b.err
		}
		b.read += int64(n)
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// The connection closes after the answer: what is left of the
		// body is not read (the deadline, left in the past, ends any
		// read the server would make of it).
		b.h.Set("Connection", "close")
		b.err = &bodyError{err, &apiError{code: codeSlowBody, msg: fmt.Sprintf(
			"the request body came too slowly (%d bytes in %.0f s; the server takes at least %d bytes a second after the first %.0f s)",
			b.read, time.Since(b.start).Seconds(), b.s.minRate, b.s.grace.Seconds())}}
		return n, b.err
	}
	return n, err
}

func (b *countedBody) Close() error { return b.in.Close() }

// bodyError is a failure of a body read that answers as api: decoders
// return api (see readBody).
type bodyError struct {
	cause error
	api   *apiError
}

func (e *bodyError) Error() string { return e.api.Error() }
func (e *bodyError) Unwrap() error { return e.cause }

// readBody reads a request body whole: a body over MaxBodyBytes is
// errTooLarge, one cut by limitInflight its apiError.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		var (
			mb *http.MaxBytesError
			be *bodyError
		)
		switch {
		case errors.As(err, &mb):
			return nil, errTooLarge
		case errors.As(err, &be):
			return nil, be.api
		}
		return nil, invalid("reading the body: %v", err)
	}
	return body, nil
}
