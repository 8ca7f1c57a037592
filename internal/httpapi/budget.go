package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// budget is a weighted semaphore of bytes: what the creates under way take
// in state while they run, so that the creates of large sessions run a few
// at a time, not all at once.
type budget struct {
	max int64

	mu      sync.Mutex
	used    int64
	changed chan struct{} // closed and replaced at every release
}

func newBudget(max int64) *budget {
	return &budget{max: max, changed: make(chan struct{})}
}

// take waits up to wait for n bytes (at most the whole budget) and returns
// the function that gives them back, or false if they did not come free.
func (b *budget) take(ctx context.Context, n int64, wait time.Duration) (func(), bool) {
	n = min(n, b.max)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		b.mu.Lock()
		if b.used+n <= b.max {
			b.used += n
			b.mu.Unlock()
			return func() { b.give(n) }, true
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// createCost is the memory the create of p, of dimension n, takes while it
// runs, as the engines report it (session.CreateBytesFor).
func createCost(p session.CreateParams, n int) int64 {
	return session.CreateBytesOf(p, n)
}

// createWait is how long a create waits for its share of the budget.
const createWait = 10 * time.Second
