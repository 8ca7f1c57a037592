package cmaes

// What internal/sepcma shares with this package rather than copies: its
// configuration, termination criteria and restart schedule are cmaes's
// (docs/sepcma.md).

// Validate checks c as New does.
func (c *Config) Validate() error { return c.validate() }

// Resolved returns t with its tolerances' defaults filled in for σ0 (a
// disabled one is 0, never firing), as the ES runs them.
func (t Termination) Resolved(sigma0 float64) Termination { return t.resolved(sigma0) }

// MaxRestartValues bounds λn of a restart's batch: a restart that would
// need more ends the ES instead.
const MaxRestartValues = maxRestartValues

// LargeLambda is λ of the k-th large run, ⌊λ0·inc^k⌋; false if λn would
// exceed MaxRestartValues.
func LargeLambda(lambda0, inc float64, k, n int) (int, bool) { return largeLambda(lambda0, inc, k, n) }

// MaxIter0 is the generation limit of BIPOP's first and large runs,
// pycma's 100 + 150(n + 3)² // √λ0.
func MaxIter0(n int, popsize0 float64) int { return maxIter0(n, popsize0) }

// StagnationMinLength is the shortest window of the Stagnation criterion,
// 120 + ⌈30n/λ⌉ generations.
func StagnationMinLength(n, lambda int) int { return stagMinLen(n, lambda) }

// Median returns the median of v in O(len(v)), using buf as scratch (v is
// not changed).
func Median(v []float64, buf *[]float64) float64 { return medianOf(v, buf) }
