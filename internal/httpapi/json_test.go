package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// randomSession is a session with every field exercised: strings that
// need escaping, non-finite and extreme numbers, absent and present
// optional parts.
func randomSession(r *rand.Rand) session.Session {
	strs := []string{"", "plain", `quo"te`, `back\slash`, "tab\tnew\nline", "ctl\x01\x1f", "<html>&amp;", "naïve é", "\u2028\u2029",
		"bad\xffutf8", "emoji 🎯", "del\x7f"}
	str := func() string { return strs[r.IntN(len(strs))] }
	nums := []float64{0, math.Copysign(0, -1), 1, -2.5, 1e-7, 1e-6, 1e20, 1e21, 1e-300, 5e-324, math.MaxFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), 0.1 + 0.2, 123456789.125}
	num := func() float64 {
		if r.IntN(3) == 0 {
			return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		}
		return nums[r.IntN(len(nums))]
	}
	vec := func() []float64 {
		v := make([]float64, r.IntN(6))
		for i := range v {
			v[i] = num()
		}
		return v
	}
	stops := func() []session.StopReason {
		var s []session.StopReason
		for range r.IntN(3) {
			s = append(s, session.StopReason{Name: str(), Value: num()})
		}
		return s
	}
	t0 := time.Date(2000+r.IntN(100), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e9), time.UTC)
	s := session.Session{
		ID: str(), Name: str(), Algorithm: str(), Dimension: r.IntN(1000), PopulationSize: r.IntN(1000), Seed: r.Uint64(),
		Status: str(), StopReasons: stops(), Generation: r.IntN(1 << 30), Evaluations: r.IntN(1 << 40),
		Mean: vec(), Sigma: num(),
		Hyper:     session.Hyper{C1: num(), CMu: num(), Cc: num(), CSigma: num(), DSigma: num(), MuW: num()},
		Active:    r.IntN(2) == 0,
		Restarts:  session.RestartsView{Strategy: str(), Max: r.IntN(10), Point: str(), Count: r.IntN(10), Regime: str()},
		Injected:  session.Injected{Waiting: r.IntN(3) * r.IntN(1000), InBatch: r.IntN(3) * r.IntN(1000)},
		CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(r.IntN(1e15))),
	}
	if r.IntN(2) == 0 {
		s.Hyper.Init = str()
	}
	if r.IntN(2) == 0 {
		s.Best = &session.Best{X: vec(), F: num(), Generation: r.IntN(100)}
	}
	if r.IntN(2) == 0 {
		s.Restarts.IncPopSize = num()
	}
	if r.IntN(3) == 0 {
		s.Restarts.Region = &session.Bounds{Lower: vec(), Upper: vec()}
	}
	for range r.IntN(3) {
		s.Restarts.Runs = append(s.Restarts.Runs, session.RunEnd{Generation: r.IntN(100), PopulationSize: r.IntN(100), Regime: str(), StopReasons: stops()})
	}
	if r.IntN(2) == 0 {
		for i := range r.IntN(4) {
			s.Partial.Indices = append(s.Partial.Indices, 2*i+r.IntN(2))
			s.Partial.Fitness = append(s.Partial.Fitness, num())
		}
		if s.Partial.Indices == nil {
			s.Partial.Indices, s.Partial.Fitness = []int{r.IntN(9)}, []float64{math.NaN()}
		}
	}
	switch r.IntN(3) {
	case 1:
		s.Metadata = []byte(`{"k":[1,"x"],"<":"&"}`)
	case 2:
		s.Metadata = []byte(`{}`)
	}
	if r.IntN(4) == 0 {
		s.Mean = nil
	}
	if r.IntN(3) == 0 {
		s.Constraints = &session.ConstraintsView{Count: r.IntN(5)}
		if r.IntN(2) == 0 {
			s.Constraints.Multipliers, s.Constraints.Penalties = vec(), vec()
		}
		if r.IntN(2) == 0 {
			s.BestFeasible = &session.FeasibleBest{X: vec(), F: num(), G: vec(), Generation: r.IntN(100)}
		}
		if s.Partial.Indices != nil {
			for range s.Partial.Indices {
				s.Partial.Constraints = append(s.Partial.Constraints, vec())
			}
		}
	}
	if r.IntN(3) == 0 { // a mixed session (mixed.go)
		ints := func() []int {
			v := make([]int, r.IntN(4))
			for i := range v {
				v[i] = r.IntN(9)
			}
			return v
		}
		s.Mixed = &session.MixedView{Continuous: r.IntN(4), Categories: ints()}
		for range r.IntN(3) {
			s.Mixed.Integers, s.Mixed.Q = append(s.Mixed.Integers, vec()), append(s.Mixed.Q, vec())
		}
		if s.Best != nil {
			s.Best.Z, s.Best.C = vec(), ints()
		}
		if s.BestFeasible != nil {
			s.BestFeasible.Z, s.BestFeasible.C = vec(), ints()
		}
	}
	return s
}

// TestSessionJSON encodes sessions with every field exercised: always
// valid JSON, and a non-finite mean coordinate always null.
func TestSessionJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		s := randomSession(r)
		got, err := sessionObject(s)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if !json.Valid(got) {
			t.Fatalf("session %d: invalid JSON %s", i, got)
		}
		var back struct{ Mean []*float64 }
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		for k, v := range s.Mean {
			if finite := !math.IsNaN(v) && !math.IsInf(v, 0); (back.Mean[k] != nil) != finite || finite && *back.Mean[k] != v {
				t.Fatalf("session %d: mean[%d] = %v encoded as %s", i, k, v, got)
			}
		}
	}
}

// The tells clients send take the fast scanner: compact (Go, curl) and
// json.dumps's spacing (Python).
func TestTellFastTakesClientBodies(t *testing.T) {
	for _, body := range []string{
		`{"generation":3,"fitness":[1.5,null,-2e-300,0]}`,
		`{"generation": 3, "fitness": [1.5, null, -2e-300, 0.0]}`,
		"{\"fitness\": [1.5, null, -2e-300, 0],\n \"generation\": 3}\n",
	} {
		p, ok := tellFast([]byte(body))
		if !ok || p.Generation != 3 || len(p.Fitness) != 4 || p.Fitness[0] != 1.5 || !math.IsNaN(p.Fitness[1]) || p.Fitness[2] != -2e-300 {
			t.Errorf("%q: %+v, %v", body, p, ok)
		}
	}
}

// TestEncodeBatch holds the parallel encoding of large batches to
// appendBatch's bytes, with numbers of every length appendNum writes
// (the longest rows fill their regions to the bound) and on 1 to 5
// processors.
func TestEncodeBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	longest := []float64{-0.0000012345678901234567, -1.2345678901234567e-308, -123456789012345678901, -1.2345678901234567e-100, -5e-324}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 5} {
		runtime.GOMAXPROCS(procs)
		for _, shape := range [][2]int{{1, 1}, {3, 2}, {64, 64}, {100, 100}, {7, 700}, {4100, 1}, {5, 1000}} {
			lam, n := shape[0], shape[1]
			for trial := range 4 {
				b := session.Batch{Generation: r.IntN(1 << 20)}
				for range lam {
					x := make([]float64, n)
					for i := range x {
						switch trial {
						case 0:
							x[i] = r.NormFloat64()
						case 1:
							x[i] = longest[r.IntN(len(longest))]
						default:
							x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30))
							if r.IntN(50) == 0 {
								x[i] = math.NaN()
							}
						}
					}
					b.Candidates = append(b.Candidates, x)
				}
				got, want := EncodeBatch(b), appendBatch(nil, b)
				if !bytes.Equal(got, want) {
					t.Fatalf("procs %d, %d×%d, trial %d: EncodeBatch differs from appendBatch:\n%.200s\n%.200s", procs, lam, n, trial, got, want)
				}
			}
		}
	}
	most := 0
	for _, x := range longest {
		most = max(most, len(appendNum(nil, x))+1)
	}
	if most != maxNumLen {
		t.Errorf("the longest numbers take %d bytes with their comma, maxNumLen is %d", most, maxNumLen)
	}
}
