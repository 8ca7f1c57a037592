package catcma

import (
	"fmt"
	"math"
	"os"
	"testing"
)

// Where SelfCmaSampler's session starts, on scripts/optuna_mixed_bench.py's
// com and shifted problems in process (docs/mixed.md, "The shifted
// variant"): the C the server starts from the box, σ0 · half-width/6 per
// continuous coordinate and σ0 · half-width/5 per integer one, against
// CmaEsSampler's start, 1/6 on every coordinate. START_TABLE=1 prints the
// table (40 seeds) and the parts of the best value of shifted at 300:
//
//	START_TABLE=1 go test -count=1 -run TestStartExperiment -v ./internal/catcma/

// shiftedProblem is optunaProblem with -problem shifted: the Rosenbrock
// function of (x, n) − 1 (minimum at 2: x on the box's upper edge), lr at
// 10^−4.5, k at 10^2.8, s at 0.9. parts splits a value into the
// Rosenbrock function, lr's, k's and s's terms and COM.
func shiftedProblem() (Space, func(x, z []float64, c []int) float64, func(x, z []float64, c []int) [5]float64) {
	sp, _ := optunaProblem()
	parts := func(x, z []float64, c []int) [5]float64 {
		v := []float64{x[1] - 1, x[2] - 1, x[3] - 1, z[1] - 1, z[2] - 1}
		var p [5]float64
		for i := range 4 {
			p[0] += 100*(v[i+1]-v[i]*v[i])*(v[i+1]-v[i]*v[i]) + (1-v[i])*(1-v[i])
		}
		lr, k := math.Log10(math.Exp(x[0])), math.Log10(math.Round(math.Exp(z[0])))
		p[1], p[2], p[3] = (lr+4.5)*(lr+4.5), (k-2.8)*(k-2.8), 10*(z[3]-0.9)*(z[3]-0.9)
		for _, ci := range c {
			if ci != 0 {
				p[4]++
			}
		}
		return p
	}
	f := func(x, z []float64, c []int) float64 {
		p := parts(x, z, c)
		return p[0] + p[1] + p[2] + p[3] + p[4]
	}
	return sp, f, parts
}

// startCov is the initial C of a start: the box's (σ0 applied by the
// caller) with the integer stds times intMul, or, with perCoord > 0, the
// std perCoord/σ0 on every coordinate.
func startCov(sp Space, sigma, intMul, perCoord float64) []float64 {
	var hw []float64
	for _, b := range sp.X {
		hw = append(hw, (b[1]-b[0])/2)
	}
	for _, r := range sp.Z {
		hw = append(hw, (r[len(r)-1]-r[0])/2)
	}
	n := len(hw)
	cov := make([]float64, n*n)
	for i := range n {
		d := hw[i] / 6
		if i >= len(sp.X) {
			d = intMul * hw[i] / 5
		}
		if perCoord > 0 {
			d = perCoord / sigma
		}
		cov[i*n+i] = d * d
	}
	return cov
}

// bestAfter runs seeds 0 … seeds−1 for 500 evaluations; the best values
// after 300 and 500 and the candidates best after 300.
func bestAfter(t *testing.T, sp Space, f func(x, z []float64, c []int) float64, sigma float64, cov []float64, seeds int) (b3, b5 []float64, at3 []Candidate) {
	for seed := range seeds {
		o, err := New(Config{Space: sp, Sigma: sigma, Cov: cov, Seed: uint64(seed), Termination: Termination{NoShouldStop: true}})
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, o.Params.Lambda)
		best, evals := math.Inf(1), 0
		var arg Candidate
		for evals < 500 {
			for i, cand := range o.Ask() {
				vals[i] = f(cand.X, cand.Z, cand.C)
				if evals < 500 && vals[i] < best {
					best, arg = vals[i], cand
				}
				evals++
				if evals == 300 {
					b3, at3 = append(b3, best), append(at3, arg)
				}
			}
			if err := o.Tell(vals); err != nil {
				t.Fatal(err)
			}
		}
		b5 = append(b5, best)
	}
	return b3, b5, at3
}

// TestStartExperiment: the per-coordinate start gives the stds it says;
// START_TABLE=1 prints docs' table.
func TestStartExperiment(t *testing.T) {
	sp, f, parts := shiftedProblem()
	o, err := New(Config{Space: sp, Sigma: 0.35, Cov: startCov(sp, 0.35, 1, 1.0/6), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := o.Params.NMi
	for i := range n {
		if sd := o.State.Sigma * math.Sqrt(o.State.C[i*n+i]) * o.State.A[i]; math.Abs(sd-1.0/6) > 1e-12 {
			t.Fatalf("coordinate %d starts with std %v, want 1/6", i, sd)
		}
	}
	if b3, _, _ := bestAfter(t, sp, f, 0.35, nil, 1); !(b3[0] < math.Inf(1)) {
		t.Fatalf("shifted: best after 300 %v", b3[0])
	}
	if os.Getenv("START_TABLE") == "" {
		return
	}
	const seeds = 40
	_, fc := optunaProblem()
	starts := []struct {
		name          string
		sigma, intMul float64
		perCoord      float64
		box           bool
	}{
		{"box, σ0 0.35 (SelfCmaSampler)", 0.35, 1, 0, true},
		{"box, σ0 1", 1, 1, 0, true},
		{"box, σ0 0.35, integer stds ×2", 0.35, 2, 0, false},
		{"box, σ0 0.35, integer stds ×0.5", 0.35, 0.5, 0, false},
		{"box, σ0 1, integer stds ×0.5", 1, 0.5, 0, false},
		{"1/6 on every coordinate (CmaEsSampler's)", 1, 1, 1.0 / 6, false},
	}
	fmt.Printf("| start (%d seeds, median best) | com 300 | com 500 | shifted 300 | shifted 500 |\n|---|---|---|---|---|\n", seeds)
	for _, s := range starts {
		var cov []float64
		if !s.box {
			cov = startCov(sp, s.sigma, s.intMul, s.perCoord)
		}
		c3, c5, _ := bestAfter(t, sp, fc, s.sigma, cov, seeds)
		s3, s5, at := bestAfter(t, sp, f, s.sigma, cov, seeds)
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", s.name, median(c3), median(c5), median(s3), median(s5))
		var sum [5]float64
		for _, c := range at {
			p := parts(c.X, c.Z, c.C)
			for j := range p {
				sum[j] += p[j] / seeds
			}
		}
		fmt.Printf("|   shifted, mean parts of the best at 300: Rosenbrock %.2f, lr %.2f, k %.2f, s %.2f, COM %.2f | | | | |\n", sum[0], sum[1], sum[2], sum[3], sum[4])
	}
}
