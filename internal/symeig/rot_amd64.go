package symeig

import "golang.org/x/sys/cpu"

// haveRot8 says rotForward8 and rotBackward8 exist (SSE2, every amd64).
const haveRot8 = true

// haveRot16 says the processor and the operating system support AVX, which
// rotForward16 and rotBackward16 use.
var haveRot16 = cpu.X86.HasAVX

//go:noescape
func rotForward8(c, s, a []float64)

//go:noescape
func rotBackward8(c, s, a []float64)

//go:noescape
func rotForward16(c, s, a []float64)

//go:noescape
func rotBackward16(c, s, a []float64)
