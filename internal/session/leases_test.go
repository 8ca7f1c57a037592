package session

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

func sortedLeases(ls []Lease) []Lease {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b Lease) int { return a.Index - b.Index })
	return ls
}

// TestClaimLease: the pure claim, case by case.
func TestClaimLease(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for _, tc := range []struct {
		name   string
		cur    []Lease
		told   []bool
		worker string
		want   leased
		next   []Lease
	}{
		{"empty", nil, make([]bool, 3), "", leased{0, min(10)}, []Lease{{0, "", min(10)}}},
		{"lowest free", []Lease{{0, "a", min(5)}, {2, "", min(5)}}, make([]bool, 4), "b", leased{1, min(10)},
			[]Lease{{0, "a", min(5)}, {1, "b", min(10)}, {2, "", min(5)}}},
		{"skips told, drops their leases", []Lease{{1, "x", min(5)}}, []bool{true, true, false}, "", leased{2, min(10)},
			[]Lease{{2, "", min(10)}}},
		{"none free: the first end", []Lease{{0, "", min(7)}, {1, "", min(3)}}, []bool{false, false, true}, "", leased{-1, min(3)},
			[]Lease{{0, "", min(7)}, {1, "", min(3)}}},
		{"worker's running lease, renewed", []Lease{{0, "", min(3)}, {1, "w", min(4)}}, make([]bool, 3), "w", leased{1, min(10)},
			[]Lease{{0, "", min(3)}, {1, "w", min(10)}}},
		{"worker's longer lease kept", []Lease{{1, "w", min(40)}}, make([]bool, 3), "w", leased{1, min(40)},
			[]Lease{{1, "w", min(40)}}},
		{"worker's told candidate: a new one", []Lease{{0, "w", min(40)}}, []bool{true, false}, "w", leased{1, min(10)},
			[]Lease{{1, "w", min(10)}}},
		{"an expired lease is free", []Lease{{0, "", t0}}, make([]bool, 2), "", leased{0, min(10)},
			[]Lease{{0, "", min(10)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := slices.Clone(tc.cur)
			next, got := claimLease(t0, cur, tc.told, 10*time.Minute, tc.worker)
			if got != tc.want || !reflect.DeepEqual(sortedLeases(next), tc.next) {
				t.Errorf("got %+v and leases %v, want %+v and %v", got, sortedLeases(next), tc.want, tc.next)
			}
			if !reflect.DeepEqual(cur, tc.cur) {
				t.Errorf("claimLease changed its argument: %v", cur)
			}
		})
	}
}

// TestRenewLease: the pure renewal, case by case.
func TestRenewLease(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for _, tc := range []struct {
		name              string
		cur               []Lease
		told              []bool
		generation, index int
		want              leased
		next              []Lease
		code              Code
	}{
		{"no lease: taken", nil, make([]bool, 3), 4, 1, leased{1, min(10)}, []Lease{{1, "w", min(10)}}, ""},
		{"own lease extended", []Lease{{1, "w", min(2)}}, make([]bool, 3), 4, 1, leased{1, min(10)}, []Lease{{1, "w", min(10)}}, ""},
		{"own longer lease kept", []Lease{{1, "w", min(20)}}, make([]bool, 3), 4, 1, leased{1, min(20)}, []Lease{{1, "w", min(20)}}, ""},
		{"one lease a worker", []Lease{{0, "w", min(20)}, {2, "v", min(5)}}, make([]bool, 3), 4, 1, leased{1, min(10)},
			[]Lease{{1, "w", min(10)}, {2, "v", min(5)}}, ""},
		{"expired lease of another", []Lease{{1, "v", t0}}, make([]bool, 3), 4, 1, leased{1, min(10)}, []Lease{{1, "w", min(10)}}, ""},
		{"leased to another", []Lease{{1, "v", min(5)}}, make([]bool, 3), 4, 1, leased{}, nil, CodeConflict},
		{"leased anonymously", []Lease{{1, "", min(5)}}, make([]bool, 3), 4, 1, leased{}, nil, CodeConflict},
		{"told", nil, []bool{false, true, false}, 4, 1, leased{}, nil, CodeConflict},
		{"another generation", nil, make([]bool, 3), 3, 1, leased{}, nil, CodeConflict},
		{"no such candidate", nil, make([]bool, 3), 4, 3, leased{}, nil, CodeOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, got, err := renewLease(t0, slices.Clone(tc.cur), tc.told, 4, tc.generation, tc.index, 10*time.Minute, "w")
			if tc.code != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tc.code {
					t.Fatalf("error %v, want code %s", err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want || !reflect.DeepEqual(sortedLeases(next), tc.next) {
				t.Errorf("got %+v and leases %v (%v), want %+v and %v", got, sortedLeases(next), err, tc.want, tc.next)
			}
		})
	}
}
