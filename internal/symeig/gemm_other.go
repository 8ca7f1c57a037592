//go:build !amd64

package symeig

var haveGemm4x8 = false

func gemm4x8(kc int, ap, bp, c []float64, ldc int, first bool) { panic("symeig: no gemm4x8") }
