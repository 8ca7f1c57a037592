package selfcma

import "golang.org/x/sys/cpu"

// trsmFast says h may use the kernels of trsm.go and cholesky.go: on amd64
// where the processor has AVX (haveAVX), those of trsm_amd64.s, with the Go
// ones at the edges (without AVX, gonum's SSE2 kernels are faster than the
// Go ones, and h uses gonum).
const trsmFast = true

// haveAVX says the processor and the operating system support AVX, which
// solve4x8, solve4x4, update4x8 and update4x4 use.
var haveAVX = cpu.X86.HasAVX

// solve4x8 solves rows i0 … i0+3 of the 8 columns starting at w[0] (stride
// ldw; rows 0 … i0−1 already solved, rows i0 … i0+3 hold V), with the
// block's panel p and rinv = 1/u_ii of its rows: the operations of
// solveRows4, in AVX without fused multiply–add.
//
//go:noescape
func solve4x8(p, w []float64, ldw, i0 int, rinv []float64)

// solve4x4 is solve4x8 for 4 columns.
//
//go:noescape
func solve4x4(p, w []float64, ldw, i0 int, rinv []float64)

// update4x8 adds to rows i0 … i0+3 of the 8 columns starting at w[0] the
// terms of rows k = 0 … kmax−1 of W: the loop of solve4x8 alone.
//
//go:noescape
func update4x8(p, w []float64, ldw, i0, kmax int)

// update4x4 is update4x8 for 4 columns.
//
//go:noescape
func update4x4(p, w []float64, ldw, i0, kmax int)
