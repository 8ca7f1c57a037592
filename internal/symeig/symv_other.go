//go:build !amd64

package symeig

var haveSymvRow = false

func symvRow(a, x []float64, xr float64, y []float64) float64 { panic("symeig: no symvRow") }
