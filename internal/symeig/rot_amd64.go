package symeig

// haveRot8 says rotForward8 and rotBackward8 exist (SSE2, every amd64).
const haveRot8 = true

//go:noescape
func rotForward8(c, s, a []float64)

//go:noescape
func rotBackward8(c, s, a []float64)
