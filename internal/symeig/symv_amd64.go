package symeig

// haveSymvRow says symvRow may run (AVX).
var haveSymvRow = hasAVX()

//go:noescape
func symvRow(a, x []float64, xr float64, y []float64) float64
