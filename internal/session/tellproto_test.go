package session

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/selfcma/selfcma/internal/exactbits"
)

// TestPlanTell: the tell protocol without a store, case by case.
func TestPlanTell(t *testing.T) {
	nan := math.NaN()
	held := &partialTell{Generation: 3, Indices: []int{0, 2}, Fitness: []float64{5, nan}}
	stale := &partialTell{Generation: 2, Indices: []int{1}, Fitness: []float64{9}}
	last := &lastTell{Generation: 2, Fitness: []nullNum{1, 2, nullNum(nan), 4}}
	base := tellState{Lambda: 4, Generation: 3, Last: last}
	withHeld := base
	withHeld.Held = held
	stopped := base
	stopped.Stopped = errorf(CodeStopped, "stopped")

	for _, tc := range []struct {
		name string
		s    tellState
		t    TellParams
		want tellPlan
		code Code
	}{
		{"whole", base, TellParams{Generation: 3, Fitness: []float64{1, 2, 3, 4}},
			tellPlan{Apply: []float64{1, 2, 3, 4}, Write: true}, ""},
		{"the last tell again", base, TellParams{Generation: 2, Fitness: []float64{1, 2, nan, 4}}, tellPlan{Repeat: true}, ""},
		{"a part of the last tell again", base, TellParams{Generation: 2, Indices: []int{2}, Fitness: []float64{nan}}, tellPlan{Repeat: true}, ""},
		{"the last generation otherwise", base, TellParams{Generation: 2, Fitness: []float64{1, 2, 3, 4}}, tellPlan{}, CodeConflict},
		{"not asked yet", base, TellParams{Generation: 4, Fitness: []float64{1, 2, 3, 4}}, tellPlan{}, CodeConflict},
		{"stopped", stopped, TellParams{Generation: 3, Fitness: []float64{1, 2, 3, 4}}, tellPlan{}, CodeStopped},
		{"stopped, a retry", stopped, TellParams{Generation: 2, Fitness: []float64{1, 2, nan, 4}}, tellPlan{Repeat: true}, ""},
		{"too few", base, TellParams{Generation: 3, Fitness: []float64{1, 2, 3}}, tellPlan{}, CodeOutOfRange},
		{"infinite", base, TellParams{Generation: 3, Fitness: []float64{1, math.Inf(1), 3, 4}}, tellPlan{}, CodeOutOfRange},
		{"a first part", base, TellParams{Generation: 3, Indices: []int{3, 1}, Fitness: []float64{7, 8}},
			tellPlan{Hold: &partialTell{Generation: 3, Indices: []int{1, 3}, Fitness: []float64{8, 7}}, Write: true}, ""},
		{"a part added", withHeld, TellParams{Generation: 3, Indices: []int{1}, Fitness: []float64{8}},
			tellPlan{Hold: &partialTell{Generation: 3, Indices: []int{0, 1, 2}, Fitness: []float64{5, 8, nan}}, Write: true}, ""},
		{"the held values again", withHeld, TellParams{Generation: 3, Indices: []int{2, 0}, Fitness: []float64{nan, 5}}, tellPlan{}, ""},
		{"a held value otherwise", withHeld, TellParams{Generation: 3, Indices: []int{0}, Fitness: []float64{6}}, tellPlan{}, CodeConflict},
		{"the last part completes", withHeld, TellParams{Generation: 3, Indices: []int{3, 1}, Fitness: []float64{7, 8}},
			tellPlan{Apply: []float64{5, 8, nan, 7}, Write: true}, ""},
		{"a whole tell over held values", withHeld, TellParams{Generation: 3, Fitness: []float64{5, 8, nan, 7}},
			tellPlan{Apply: []float64{5, 8, nan, 7}, Write: true}, ""},
		{"a whole tell against held values", withHeld, TellParams{Generation: 3, Fitness: []float64{1, 8, nan, 7}}, tellPlan{}, CodeConflict},
		{"held values of another generation are ignored", tellState{Lambda: 4, Generation: 3, Held: stale},
			TellParams{Generation: 3, Indices: []int{1}, Fitness: []float64{1}},
			tellPlan{Hold: &partialTell{Generation: 3, Indices: []int{1}, Fitness: []float64{1}}, Write: true}, ""},
		{"an index out of range", base, TellParams{Generation: 3, Indices: []int{4}, Fitness: []float64{1}}, tellPlan{}, CodeOutOfRange},
		{"an index twice", base, TellParams{Generation: 3, Indices: []int{1, 1}, Fitness: []float64{1, 1}}, tellPlan{}, CodeOutOfRange},
		{"no index", base, TellParams{Generation: 3, Indices: []int{}, Fitness: []float64{}}, tellPlan{}, CodeOutOfRange},
		{"indices and values differ in number", base, TellParams{Generation: 3, Indices: []int{1}, Fitness: []float64{1, 2}}, tellPlan{}, CodeOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := planTell(tc.s, tc.t)
			if tc.code != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tc.code {
					t.Fatalf("error %v, want code %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Repeat != tc.want.Repeat || got.Write != tc.want.Write || !exactbits.Same(got.Apply, tc.want.Apply) || !samePartial(got.Hold, tc.want.Hold) {
				t.Fatalf("plan %+v (hold %+v), want %+v (hold %+v)", got, got.Hold, tc.want, tc.want.Hold)
			}
		})
	}
	// The held values unchanged are the session's own, so that no write
	// is made.
	if got, _ := planTell(withHeld, TellParams{Generation: 3, Indices: []int{0}, Fitness: []float64{5}}); got.Write || got.Hold != nil {
		t.Errorf("values held already: %+v", got)
	}
}

func samePartial(a, b *partialTell) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Generation == b.Generation && reflect.DeepEqual(a.Indices, b.Indices) && exactbits.Same(a.Fitness, b.Fitness)
}

// TestToldIndices: the candidates a partial tell holds, of its generation
// only.
func TestToldIndices(t *testing.T) {
	p := &partialTell{Generation: 2, Indices: []int{0, 3}, Fitness: []float64{1, 2}}
	if got := toldIndices(p, 2, 4); !reflect.DeepEqual(got, []bool{true, false, false, true}) {
		t.Errorf("generation 2: %v", got)
	}
	if got := toldIndices(p, 3, 4); !reflect.DeepEqual(got, make([]bool, 4)) {
		t.Errorf("generation 3: %v", got)
	}
}
