package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func query[T any](t *testing.T, url, sql string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v T
	if err := conn.QueryRow(ctx, sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// A primary and its synchronous standby: a row committed on the primary
// is on the standby; stopped and started, the primary serves again; the
// standby promoted takes writes.
func TestStandby(t *testing.T) {
	p := NewCluster(t, "synchronous_standby_names=s1")
	s := p.Standby(t, "s1")
	p.Exec(t, "postgres", "CREATE TABLE t (v int)")
	p.Exec(t, "postgres", "INSERT INTO t VALUES (7)")
	if got := query[string](t, p.URL("postgres"), "SELECT sync_state FROM pg_stat_replication WHERE application_name = 's1'"); got != "sync" {
		t.Fatalf("the standby's sync_state %q, want sync", got)
	}
	if got := query[int32](t, s.URL("postgres"), "SELECT v FROM t"); got != 7 {
		t.Fatalf("on the standby: %d", got)
	}
	if !query[bool](t, s.URL("postgres"), "SELECT pg_is_in_recovery()") {
		t.Fatal("the standby is not in recovery")
	}
	s.Stop(t, "fast")
	s.Start(t)
	p.Kill(t)
	s.Promote(t)
	s.Exec(t, "postgres", "INSERT INTO t VALUES (8)")
	if got := query[int64](t, s.URL("postgres"), "SELECT count(*) FROM t"); got != 2 {
		t.Fatalf("after the promotion: %d rows", got)
	}
}
