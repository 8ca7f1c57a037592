package main

import (
	"math"
	"strconv"
)

// fisherExact returns the two-sided p-value of Fisher's exact test on the
// 2×2 table of a successes in n1 runs against b in n2: the probability,
// under the hypergeometric law of the first row's successes given the
// margins (the same success rate for both), of a table at most as likely
// as the one observed (R's fisher.test and SciPy's fisher_exact sum the
// same tables, with the same relative tolerance of 10^-7 for ties). It
// tells a difference of successes that chance makes from one it hardly
// does: 6 of 60 against 9 of 60 is p = 0.58, 44 against 6 is 8.5·10^-13.
func fisherExact(a, n1, b, n2 int) float64 {
	k, n := a+b, n1+n2
	if n1 <= 0 || n2 <= 0 || a < 0 || b < 0 || a > n1 || b > n2 {
		return math.NaN()
	}
	// ln P(X = x) = ln C(n1, x) + ln C(n2, k − x) − ln C(n, k)
	lnP := func(x int) float64 { return lnChoose(n1, x) + lnChoose(n2, k-x) - lnChoose(n, k) }
	observed := lnP(a)
	var p float64
	for x := max(0, k-n2); x <= min(n1, k); x++ {
		if l := lnP(x); l <= observed+1e-7 {
			p += math.Exp(l)
		}
	}
	return min(1, p)
}

// lnChoose is ln C(n, k), 0 ≤ k ≤ n.
func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// formatP prints a p-value with two significant digits (0.58, 0.0028,
// 8.5e-13, 1).
func formatP(p float64) string { return strconv.FormatFloat(p, 'g', 2, 64) }
