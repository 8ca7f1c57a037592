//go:build !amd64

package symeig

const haveRot8 = false

func rotForward8(c, s, a []float64)  { panic("symeig: no rotForward8") }
func rotBackward8(c, s, a []float64) { panic("symeig: no rotBackward8") }
