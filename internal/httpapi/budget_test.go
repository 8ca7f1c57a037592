package httpapi

import (
	"context"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
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
		r, ok := b.take(ctx, 1000, time.Minute) // alone: the whole budget
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

// A create is charged for the state it builds: x0's dimension, or a warm
// start's source's when it has no x0 (the largest dimension allowed if
// the source cannot be read); nothing when it will be refused for its
// dimension.
func TestCreateCharge(t *testing.T) {
	lim := session.DefaultLimits()
	lim.MaxDimension = 50
	ts := newTestServer(t, serverOpts{limits: lim})
	src := ts.create(t, map[string]any{"x0": make([]float64, 7), "sigma0": 1})
	s := &server{m: ts.m}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    session.CreateParams
		want int64
	}{
		{"x0", session.CreateParams{X0: make([]float64, 3)}, createCost(session.CreateParams{}, 3)},
		{"x0 over the limit", session.CreateParams{X0: make([]float64, 51)}, 0},
		{"warm start", session.CreateParams{WarmStart: src.ID}, createCost(session.CreateParams{}, 7)},
		{"warm start with x0", session.CreateParams{WarmStart: src.ID, X0: make([]float64, 7)}, createCost(session.CreateParams{}, 7)},
		{"warm start from nothing", session.CreateParams{WarmStart: "nope"}, createCost(session.CreateParams{}, 50)},
		{"neither", session.CreateParams{}, 0},
		{"sep-cma-es above the others' n", session.CreateParams{X0: make([]float64, 51), Algorithm: session.AlgorithmSepCMAES},
			session.CreateBytesFor(session.AlgorithmSepCMAES, 51, 0)},
		{"sep-cma-es with its λ", session.CreateParams{X0: make([]float64, 51), PopulationSize: 500, Algorithm: session.AlgorithmSepCMAES},
			session.CreateBytesFor(session.AlgorithmSepCMAES, 51, 500)},
	} {
		if got := s.createCharge(ctx, tc.p); got != tc.want {
			t.Errorf("%s: charged %d, want %d", tc.name, got, tc.want)
		}
	}
}
