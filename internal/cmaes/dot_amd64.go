//go:build amd64 && !noasm

package cmaes

import "golang.org/x/sys/cpu"

// haveDot4 says dot4 may run (AVX), where gonum's Ddot is its amd64
// assembly, whose order dot4 keeps.
var haveDot4 = cpu.X86.HasAVX

//go:noescape
func dot4(x, y []float64, ldy int, out *[4]float64)
