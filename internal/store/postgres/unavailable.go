package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/selfcma/selfcma/internal/session"
)

// SQLSTATEs of a database that cannot serve the call now, though it may
// in a moment: it is shutting down (57P01 admin_shutdown, 57P02
// crash_shutdown), starting or in recovery (57P03 cannot_connect_now), the
// connection failed (class 08), it has no connection slot left (53300
// too_many_connections), or it is a standby since a switchover and refuses
// writes (25006 read_only_sql_transaction).
var unavailableCodes = map[string]bool{
	"57P01": true, "57P02": true, "57P03": true, "53300": true, "25006": true,
}

// unavailableCode reports whether code is one of unavailableCodes or of
// class 08.
func unavailableCode(code string) bool {
	return unavailableCodes[code] || strings.HasPrefix(code, "08")
}

// call is the context of one call of the store, with the store's deadline
// (Options.CallTimeout), and the function that ends it: it cancels the
// context and returns the call's error, wrapping session.ErrUnavailable
// too if the error says the database cannot be reached (unreachable).
func (s *Store) call(ctx context.Context) (context.Context, func(error) error) {
	parent := ctx
	cancel := func() {}
	if s.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func(err error) error {
		cancel()
		if serverChanged(err) {
			s.pool.Reset()
		}
		return markUnavailable(parent, err)
	}
}

// serverChanged reports whether err says that the pool's connections are
// likely all bad: the server shut down or crashed (57P01, 57P02), a
// connection broke (class 08, a closed socket), or the server is a standby
// now (25006: a switchover demoted it; target_session_attrs is checked at
// connect only, so a connection to it would stay in the pool and fail
// every write). Then the pool closes its idle connections, and the others
// when they are released, and connects anew (to the new primary, on a URL
// of several hosts).
func serverChanged(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "25006" || pe.Code == "57P01" || pe.Code == "57P02" || strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return false // no pooled connection involved
	}
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// markUnavailable is err, wrapping session.ErrUnavailable too if err of a
// call whose caller's context is parent is unreachable.
func markUnavailable(parent context.Context, err error) error {
	if err == nil || errors.Is(err, session.ErrUnavailable) || !unreachable(parent, err) {
		return err
	}
	return fmt.Errorf("%w: %w", session.ErrUnavailable, err)
}

// errStandby is Ping's error for a database in recovery (a standby, or a
// primary demoted by a switchover): it refuses writes.
var errStandby = errors.New("the database is in recovery (a standby): it refuses writes")

// Ping reports whether the database answers, and is a primary, within
// the store's deadline: nil, or an error wrapping session.ErrUnavailable
// (the server's /readyz). A connection to a standby is closed, not put
// back in the pool.
func (s *Store) Ping(ctx context.Context) (err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	defer c.Release()
	var standby bool
	if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	if standby {
		c.Conn().Close(ctx)
		return fmt.Errorf("postgres: ping: %w: %w", errStandby, session.ErrUnavailable)
	}
	return nil
}

// unreachable reports whether err, of a call whose caller's context is
// parent, means that the database could not be reached or did not answer:
// a failed connect (other than refused credentials or an unknown
// database), a connection that broke, a SQLSTATE of unavailableCodes, or
// the store's own deadline, passed while the caller still waited. An error
// of a caller that gave up (parent done) is the caller's, not the
// database's.
func unreachable(parent context.Context, err error) bool {
	if parent.Err() != nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return unavailableCode(pe.Code)
	}
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce):
		return true // no PgError: the network, or no host of the URL a primary
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return true
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}
