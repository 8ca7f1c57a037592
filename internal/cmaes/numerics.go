package cmaes

import (
	"fmt"

	"github.com/selfcma/selfcma/internal/symeig"
)

// Numerics versions: how C is decomposed into B D² Bᵀ (Algorithm 1, line
// 4 samples with B and D, so the version decides the points). An ES keeps
// the version it was created with, through encodings and restarts, so a
// session continues bit for bit whatever version later code prefers.
const (
	// NumericsDsyev is gonum's dsyev bit for bit: every ES encoded before
	// numerics versions existed (state encoding 1) has it.
	NumericsDsyev = symeig.Dsyev
	// NumericsBlocked is the same algorithm with a faster tridiagonal
	// reduction (internal/symeig.FactorizeBlocked); other rounding.
	NumericsBlocked = symeig.Blocked
	// NumericsDC is the blocked reduction (faster kernels) followed, above
	// n = 96, by divide and conquer on the tridiagonal matrix and the
	// back-transformation as matrix products, as LAPACK's dsyevd
	// (internal/symeig.FactorizeDivideConquer); the decomposition rounds as
	// NumericsBlocked's up to n = 32, differently above. The sampling product B D z (Algorithm 1, line 4)
	// is symeig.Product's from this version on, also a summation order of
	// its own, so the points differ from NumericsBlocked's at every n.
	NumericsDC = symeig.DivideConquer
	// NumericsLazy is NumericsDC with Hansen's lazy update of B and D
	// (lazy.go): C is decomposed only when enough updates have passed since
	// the last decomposition; in between, sampling and the update use the
	// last B and D. Not a symeig version: the decomposition is NumericsDC's.
	NumericsLazy = 4
	// NumericsLazyLong is NumericsLazy with the gap of pycma's purecma.py
	// (Hansen's reference code): 0.5/(c_1 + c_μ)/n updates, five times
	// NumericsLazy's (lazy.go). Version 5 is self-CMA-ES's
	// (selfcma.NumericsWoodbury): the versions share Config.Numerics.
	NumericsLazyLong = 6
	// NumericsLatest is what Config.Numerics = 0 selects. Sessions choose
	// by dimension (DefaultNumerics).
	NumericsLatest = NumericsDC
)

// LazyMinDimension is the smallest n at which DefaultNumerics is lazy:
// NumericsLazy for sessions created before NumericsLazyLong existed,
// NumericsLazyLong since (docs/performance.md, "Lazy decomposition": the
// evaluations to the target on BBOB at n = 40, 100 and 200).
const LazyMinDimension = 100

// DefaultNumerics is the numerics version of a new CMA-ES session of
// dimension n (internal/defaults.Numerics): NumericsLazyLong from
// LazyMinDimension on, else NumericsLatest. self-CMA-ES keeps
// NumericsLatest (selfcma.New refuses the lazy versions).
func DefaultNumerics(n int) int {
	if n >= LazyMinDimension {
		return NumericsLazyLong
	}
	return NumericsLatest
}

// symeigVersion is the internal/symeig version that decomposes C for
// numerics version v.
func symeigVersion(v int) int {
	if IsLazy(v) {
		return NumericsDC
	}
	return v
}

// validNumerics checks Config.Numerics: 0 (the latest) or a known version.
func validNumerics(v int) error {
	switch v {
	case 0, NumericsDsyev, NumericsBlocked, NumericsDC, NumericsLazy, NumericsLazyLong:
		return nil
	}
	return fmt.Errorf("cmaes: numerics version %d, want 0 (latest), %d, %d, %d, %d or %d", v, NumericsDsyev, NumericsBlocked, NumericsDC, NumericsLazy, NumericsLazyLong)
}

// IsLazy reports whether numerics version v decomposes C lazily
// (NumericsLazy, NumericsLazyLong): CMA-ES's only, as self-CMA-ES replays
// every update on the current C.
func IsLazy(v int) bool { return v == NumericsLazy || v == NumericsLazyLong }
