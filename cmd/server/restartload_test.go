package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
)

// The database under load stopped at once (pg_ctl stop -m immediate, as a
// crash) and started again, and then the servers' connections cut
// (pg_terminate_backend) again and again: two servers, four sessions told
// through them at random. No acknowledged value is lost (every session bit
// for bit a bbolt run), no answer is a 5xx but 503 store_unavailable, and
// writes come back once the database is up: the log lines give the
// figures.
func TestDatabaseRestartUnderLoad(t *testing.T) {
	bin := serverBinary(t)
	algs := []string{"cma-es", "self-cma-es", "cma-es", "self-cma-es"}
	refs := map[string]trace{}
	for _, alg := range algs[:2] {
		refs[alg] = reference(t, bin, alg)
	}
	for _, mode := range []string{"restart", "cut"} {
		t.Run(mode, func(t *testing.T) {
			c := pgtest.NewCluster(t)
			db := c.CreateDB(t, "selfcma")
			l := startFailoverLoad(t, bin, db, 8)
			faults := make(chan struct{})
			var stopped time.Time
			go func() {
				defer close(faults)
				l.waitAcked(len(algs), 5)
				stopped = l.startOutage()
				if mode == "restart" {
					c.Stop(t, "immediate")
					l.waitOutage(8)
					c.Start(t)
				} else {
					for i := range 10 {
						cutConnections(t, c)
						l.waitAcked(len(algs), 6+2*i)
					}
				}
				l.mu.Lock()
				l.promoted = time.Now()
				l.mu.Unlock()
			}()
			var wg sync.WaitGroup
			for w, alg := range algs {
				wg.Go(func() { l.run(t, w, alg, refs[alg]) })
			}
			wg.Wait()
			<-faults
			if mode == "cut" {
				l.reportCuts(t)
				return
			}
			l.report(t, mode, stopped)
		})
	}
}

// cutConnections ends every connection of the servers to c (their
// application_name is selfcma): each gets 57P01, as from a proxy that
// drops them or an administrator's pg_terminate_backend.
func cutConnections(t *testing.T, c *pgtest.Cluster) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'selfcma'"); err != nil {
		t.Error(err)
	}
}

// reportCuts checks and logs what the requests answered while their
// connections were being cut.
func (l *failoverLoad) reportCuts(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fivehundr) > 0 {
		t.Errorf("%d answers 5xx other than 503 store_unavailable, the first: %s", len(l.fivehundr), l.fivehundr[0])
	}
	t.Logf("cut: answers while the connections were cut 10 times: %v", l.answers)
}
