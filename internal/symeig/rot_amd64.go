package symeig

// haveRot8 says rotForward8 and rotBackward8 exist (SSE2, every amd64).
const haveRot8 = true

// haveRot16 says the processor and the operating system support AVX, which
// rotForward16 and rotBackward16 use.
var haveRot16 = hasAVX()

//go:noescape
func rotForward8(c, s, a []float64)

//go:noescape
func rotBackward8(c, s, a []float64)

//go:noescape
func rotForward16(c, s, a []float64)

//go:noescape
func rotBackward16(c, s, a []float64)

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

// hasAVX: CPUID.1:ECX has OSXSAVE (bit 27) and AVX (bit 28), and XCR0 has
// the XMM and YMM states enabled (bits 1 and 2).
func hasAVX() bool {
	_, _, ecx, _ := cpuid(1, 0)
	if ecx&(1<<27) == 0 || ecx&(1<<28) == 0 {
		return false
	}
	xcr0, _ := xgetbv()
	return xcr0&6 == 6
}
