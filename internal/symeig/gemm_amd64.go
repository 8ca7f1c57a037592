package symeig

// haveGemm4x8 says gemm4x8 may run: the processor and the operating system
// support AVX.
var haveGemm4x8 = hasAVX()

//go:noescape
func gemm4x8(kc int, ap, bp, c []float64, ldc int, first bool)
