package httpapi

import (
	"context"
	"testing"
	"time"
)

// A budget admits what fits, makes the rest wait until it fits or the wait
// ends, and admits a take larger than the whole budget alone.
func TestBudget(t *testing.T) {
	b := newBudget(100)
	ctx := context.Background()
	r1, ok := b.take(ctx, 60, 0)
	if !ok {
		t.Fatal("60 of 100 refused")
	}
	if _, ok := b.take(ctx, 50, 10*time.Millisecond); ok {
		t.Fatal("50 more admitted over 100")
	}
	got := make(chan bool, 1)
	go func() {
		r, ok := b.take(ctx, 1000, 5*time.Second) // alone: the whole budget
		if ok {
			r()
		}
		got <- ok
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("the whole budget taken while 60 are out")
	default:
	}
	r1()
	if !<-got {
		t.Fatal("the whole budget not taken once free")
	}
	cctx, cancel := context.WithCancel(ctx)
	r2, _ := b.take(ctx, 100, 0)
	cancel()
	if _, ok := b.take(cctx, 1, time.Minute); ok {
		t.Error("admitted with the budget spent and the request gone")
	}
	r2()
	if b.used != 0 {
		t.Errorf("%d left in use", b.used)
	}
}
