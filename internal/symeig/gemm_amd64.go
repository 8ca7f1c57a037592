package symeig

import "golang.org/x/sys/cpu"

// haveGemm4x8 says gemm4x8 may run: the processor and the operating system
// support AVX.
var haveGemm4x8 = cpu.X86.HasAVX

//go:noescape
func gemm4x8(kc int, ap, bp, c []float64, ldc int, first bool)
