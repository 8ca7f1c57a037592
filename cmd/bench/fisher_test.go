package main

import (
	"math"
	"testing"
)

// TestFisherExact checks the two-sided p-value against tables whose values
// are known: Fisher's tea-tasting table, the 2×2 example of Wikipedia's
// article (both as R's fisher.test gives them), and sums of the
// hypergeometric terms computed with exact binomial coefficients
// (Python's math.comb) for the counts of the quality tables.
func TestFisherExact(t *testing.T) {
	for _, c := range []struct {
		a, n1, b, n2 int
		want         float64
	}{
		{3, 4, 1, 4, 0.4857142857142857},
		{1, 10, 11, 14, 0.002759456185220083},
		{6, 60, 9, 60, 0.5822208059124422},
		{12, 60, 13, 60, 1},
		{44, 60, 6, 60, 8.484085737310125e-13},
		{1, 2, 0, 2, 1},
		{0, 30, 0, 30, 1},
		{30, 30, 0, 30, 1.6911233892144735e-17}, // 2 / C(60, 30): the two extreme tables
	} {
		got := fisherExact(c.a, c.n1, c.b, c.n2)
		if math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("fisherExact(%d/%d, %d/%d) = %v, want %v", c.a, c.n1, c.b, c.n2, got, c.want)
		}
		if sym := fisherExact(c.b, c.n2, c.a, c.n1); math.Abs(sym-got) > 1e-12*got {
			t.Errorf("fisherExact(%d/%d, %d/%d) = %v, not the %v of the rows swapped", c.b, c.n2, c.a, c.n1, sym, got)
		}
	}
	if p := fisherExact(3, 2, 0, 2); !math.IsNaN(p) {
		t.Errorf("3 successes of 2 runs: p %v, want NaN", p)
	}
}

func TestFormatP(t *testing.T) {
	for p, want := range map[float64]string{0.5822: "0.58", 0.002759: "0.0028", 8.484e-13: "8.5e-13", 1: "1"} {
		if got := formatP(p); got != want {
			t.Errorf("formatP(%v) = %q, want %q", p, got, want)
		}
	}
}
