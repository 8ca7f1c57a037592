package session

import (
	"fmt"
	"testing"
	"time"
)

// TestLeaseTableSweep: the sessions whose leases have all run out leave the
// table as it grows; those with a running lease stay.
func TestLeaseTableSweep(t *testing.T) {
	var tab leaseTable
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 300 {
		end := t0.Add(time.Minute)
		if i%100 == 0 {
			end = t0.Add(time.Hour) // still running at t0 + 2 minutes
		}
		tab.of(fmt.Sprint(i), 0, t0).until[0] = end
	}
	if len(tab.by) != 300 {
		t.Fatalf("%d sessions before the leases ran out", len(tab.by))
	}
	for i := range 300 {
		tab.of(fmt.Sprint("later", i), 0, t0.Add(2*time.Minute))
	}
	for _, id := range []string{"0", "100", "200"} {
		if ls := tab.by[id]; ls == nil || ls.until[0] != t0.Add(time.Hour) {
			t.Errorf("session %s lost its running lease", id)
		}
	}
	if len(tab.by) > 100 {
		t.Errorf("%d sessions in the table: the run-out leases were not swept", len(tab.by))
	}
	// A new generation starts afresh.
	if ls := tab.of("0", 1, t0); len(ls.until) != 0 || ls.generation != 1 {
		t.Errorf("generation 1 starts with %v", ls.until)
	}
}
