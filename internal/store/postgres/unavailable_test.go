package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
)

func TestUnreachableCodes(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want bool
	}{
		{live, &pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{live, &pgconn.PgError{Code: "57P02"}, true}, // crash_shutdown
		{live, &pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now
		{live, &pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{live, &pgconn.PgError{Code: "53300"}, true}, // too_many_connections
		{live, &pgconn.PgError{Code: "25006"}, true}, // read_only_sql_transaction
		{live, &pgconn.PgError{Code: "23505"}, false},
		{live, &pgconn.PgError{Code: "28P01"}, false}, // a wrong password waits for nobody
		{live, &pgconn.PgError{Code: "53100"}, false}, // a full disk: storage_full
		{live, fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{gone, fmt.Errorf("x: %w", context.Canceled), false},
		{gone, &pgconn.PgError{Code: "57P01"}, false}, // the caller left
		{live, errors.New("some bug"), false},
		{live, &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
	} {
		if got := unreachable(tc.ctx, tc.err); got != tc.want {
			t.Errorf("unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if got := errors.Is(markUnavailable(tc.ctx, tc.err), session.ErrUnavailable); got != tc.want {
			t.Errorf("markUnavailable(%v) wraps ErrUnavailable: %v, want %v", tc.err, got, tc.want)
		}
	}
}

// withDB is u with the database (path) db and the user user (if not "").
func withDB(t *testing.T, u, db, user string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.Path = "/" + db
	if user != "" {
		p.User = url.User(user)
	}
	return p.String()
}

func exec(t *testing.T, u, sql string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Open of a database that nobody serves, or that has no connection slot
// left, fails with ErrUnavailable; of a database that does not exist,
// with another error (a start waits for the one, not the other).
func TestOpenUnavailable(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p, _ := url.Parse(u)
	p.Host = fmt.Sprintf("127.0.0.1:%d", port)
	if _, err := Open(ctx, p.String(), nil); !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Open of a port nobody serves: %v, want ErrUnavailable", err)
	}
	if _, err := Open(ctx, withDB(t, u, "no_such_db", ""), nil); err == nil || errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Open of a database that does not exist: %v, want an error other than ErrUnavailable", err)
	}

	// 53300: the role's connection limit (as max_connections reached).
	role := fmt.Sprintf("limited_%d", time.Now().UnixNano())
	exec(t, u, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 1")
	db := strings.TrimPrefix(p.Path, "/")
	exec(t, u, "GRANT ALL ON DATABASE "+db+" TO "+role)
	held, err := pgx.Connect(ctx, withDB(t, u, db, role))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close(ctx)
	_, err = Open(ctx, withDB(t, u, db, role), nil)
	var pe *pgconn.PgError
	if !errors.Is(err, session.ErrUnavailable) || !errors.As(err, &pe) || pe.Code != "53300" {
		t.Errorf("Open with the role's connections taken: %v, want 53300 and ErrUnavailable", err)
	}
}

// A call that the database does not answer within CallTimeout (a table
// locked stands for a frozen database) fails with ErrUnavailable, reads
// and writes alike, grouped Puts too; then it works again.
func TestCallTimeout(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	// The setup, with nothing locked, may also take longer than the short
	// CallTimeout on a busy machine: it is tried again until it works (what
	// the test asserts is the answer while the table is locked).
	var (
		st  *Store
		v   uint64
		err error
	)
	retryUnavailable(t, "Open", func() error {
		st, err = Open(ctx, u, &Options{CallTimeout: 300 * time.Millisecond})
		return err
	})
	defer st.Close()
	// The record is written through a store of the default timeout (a Put
	// tried again after a timeout might find its first try written).
	setup := open(t, u)
	if v, err = setup.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	retryUnavailable(t, "Ping", func() error { return st.Ping(ctx) })
	lock, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(ctx)
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "a"); !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Get of a locked table: %v, want ErrUnavailable", err)
	}
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() {
			_, err := st.Put(ctx, session.Record{ID: "a", Version: v, Meta: []byte("m2"), State: []byte("s2")}, nil)
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; !errors.Is(err, session.ErrUnavailable) {
			t.Errorf("Put to a locked table: %v, want ErrUnavailable", err)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// A Put that timed out may have been written after all, as one whose
	// connection broke: the version says.
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := st.Get(ctx, "a")
		if err == nil {
			if r.Version != v && r.Version != v+1 {
				t.Fatalf("after the lock: version %d, want %d or %d", r.Version, v, v+1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Get after the lock: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A database that turned read-only (as a primary demoted to a standby by
// a switchover) fails writes with ErrUnavailable, and the pool lets go of
// its connections: once it takes writes again, the next Put succeeds (a
// connection kept would stay read-only).
func TestReadOnlyResetsPool(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	db := strings.TrimPrefix(must(url.Parse(u)).Path, "/")
	st := open(t, u)
	v, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, u, "ALTER DATABASE "+db+" SET default_transaction_read_only = on")
	st.pool.Reset() // connect anew: read-only
	for range 3 {
		_, err = st.Put(ctx, session.Record{ID: "a", Version: v, Meta: []byte("m2"), State: []byte("s2")}, nil)
		var pe *pgconn.PgError
		if !errors.Is(err, session.ErrUnavailable) || !errors.As(err, &pe) || pe.Code != "25006" {
			t.Fatalf("Put to a read-only database: %v, want 25006 and ErrUnavailable", err)
		}
	}
	exec(t, withDB(t, u, "postgres", ""), "ALTER DATABASE "+db+" SET default_transaction_read_only = off")
	if _, err := st.Put(ctx, session.Record{ID: "a", Version: v, Meta: []byte("m2"), State: []byte("s2")}, nil); err != nil {
		t.Fatalf("Put once the database takes writes again: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// retryUnavailable calls fn until it returns nil, for a minute while it
// returns session.ErrUnavailable (a call timed out on a busy machine);
// another error, or a minute of them, fails the test.
func retryUnavailable(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := fn()
		if err == nil {
			return
		}
		if !errors.Is(err, session.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
