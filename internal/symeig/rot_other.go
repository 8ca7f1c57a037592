//go:build !amd64

package symeig

const haveRot8 = false

var haveRot16 = false

func rotForward8(c, s, a []float64)   { panic("symeig: no rotForward8") }
func rotBackward8(c, s, a []float64)  { panic("symeig: no rotBackward8") }
func rotForward16(c, s, a []float64)  { panic("symeig: no rotForward16") }
func rotBackward16(c, s, a []float64) { panic("symeig: no rotBackward16") }
