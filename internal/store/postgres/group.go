package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit of the Puts of stored sessions (a tell, a partial tell, a
// stop). Measured with 64 sessions on one server (cmd/load), a commit was a
// quarter of the database's CPU per generation (XLogFlush: the WAL write,
// the fdatasync, the wait for the flush lock), and each statement its own
// round trip and two context switches. So Puts that arrive while others
// are being written wait, and go together: one pipeline of their
// statements (pgx.Batch), which PostgreSQL runs as one implicit
// transaction, one commit. A Put that finds nothing under way is written
// at once, alone, as before: a lone session waits for nobody. (A Put of a
// large state never joins a group: Store.Put writes it at once.)
//
// Each statement keeps its compare-and-swap (zero rows: a conflict of that
// Put only). A statement that fails aborts the whole transaction and
// commits nothing, so then every Put of the group is written again alone
// and gets its own answer. The statements run in the order of the
// sessions' ids, so that two groups (of two servers) lock rows in one
// order and never deadlock each other.

// maxGroup is the most Puts in one transaction.
const maxGroup = 64

// groupTimeout bounds the writing of one group: it runs detached from the
// requests that wait for it (one of them cancelled must not abort the
// others).
const groupTimeout = 30 * time.Second

// groupPut is one Put waiting for its group.
type groupPut struct {
	id   string
	sql  string
	args []any
	n    int // rows the CTE's update touched: 0 is a conflict
	err  error
	done chan struct{}
}

// grouper gathers the Puts. At most writers groups are written at once;
// a Put that finds them all busy queues, and the writer that finishes
// next takes the whole queue.
type grouper struct {
	pool     dbPool
	writers  int
	onCommit func(writes int, took time.Duration)
	timeout  time.Duration // of a group's write, when positive and under groupTimeout

	mu      sync.Mutex
	active  int
	pending []*groupPut
}

// dbPool is what the grouper needs of pgxpool.Pool.
type dbPool interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// put writes p alone or in a group and returns the rows it touched. A
// request is never held to write the others' Puts: the queue is written
// by a goroutine of its own (lead), started when one is needed.
func (g *grouper) put(ctx context.Context, p *groupPut) (int, error) {
	g.mu.Lock()
	if g.active < g.writers && len(g.pending) == 0 {
		g.active++
		g.mu.Unlock()
		start := time.Now()
		err := g.pool.QueryRow(ctx, p.sql, p.args...).Scan(&p.n)
		g.committed(1, p, err, start)
		g.release()
		return p.n, err
	}
	p.done = make(chan struct{})
	g.pending = append(g.pending, p)
	if g.active < g.writers {
		g.active++
		go g.lead()
	}
	g.mu.Unlock()
	select {
	case <-p.done:
		return p.n, p.err
	case <-ctx.Done():
		// The call's deadline: the Put stays queued, and may still be
		// written (as a Put whose connection breaks may have been).
		return 0, ctx.Err()
	}
}

// release gives up a writer's slot, or hands it to a new lead if Puts
// queued meanwhile.
func (g *grouper) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) > 0 {
		go g.lead()
		return
	}
	g.active--
}

// lead writes the queue, a group at a time, until it is empty, then gives
// up its writer's slot.
func (g *grouper) lead() {
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.active--
			g.mu.Unlock()
			return
		}
		k := min(len(g.pending), maxGroup)
		group := slices.Clone(g.pending[:k])
		g.pending = slices.Delete(g.pending, 0, k)
		g.mu.Unlock()
		g.write(group)
		for _, p := range group {
			close(p.done)
		}
	}
}

// write writes a group in one transaction, or, if one of its statements
// failed, each Put alone.
func (g *grouper) write(group []*groupPut) {
	d := groupTimeout
	if g.timeout > 0 {
		d = min(d, g.timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	if len(group) == 1 {
		p := group[0]
		p.err = g.pool.QueryRow(ctx, p.sql, p.args...).Scan(&p.n)
		g.committed(1, p, p.err, start)
		return
	}
	slices.SortFunc(group, func(a, b *groupPut) int { return cmp.Compare(a.id, b.id) })
	b := &pgx.Batch{}
	for _, p := range group {
		b.Queue(p.sql, p.args...)
	}
	br := g.pool.SendBatch(ctx, b)
	var err error
	for _, p := range group {
		if err = br.QueryRow().Scan(&p.n); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		g.committed(len(group), nil, nil, start)
		return
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		// The connection failed: whether the transaction committed is
		// unknown, as for a lone Put whose connection fails.
		for _, p := range group {
			p.n, p.err = 0, err
		}
		return
	}
	// A statement failed and the transaction with it: nothing of the group
	// is written. Each alone, for its own answer.
	for _, p := range group {
		p.n = 0
		p.err = g.pool.QueryRow(ctx, p.sql, p.args...).Scan(&p.n)
		g.committed(1, p, p.err, start)
	}
}

// committed tells OnCommit of a transaction that committed: a group, or
// one Put (p) that changed its row.
func (g *grouper) committed(writes int, p *groupPut, err error, start time.Time) {
	if g.onCommit == nil || err != nil || (p != nil && p.n == 0) {
		return
	}
	g.onCommit(writes, time.Since(start))
}
