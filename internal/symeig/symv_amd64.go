package symeig

import "golang.org/x/sys/cpu"

// haveSymvRow says symvRow may run (AVX).
var haveSymvRow = cpu.X86.HasAVX

//go:noescape
func symvRow(a, x []float64, xr float64, y []float64) float64
