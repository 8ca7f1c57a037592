//go:build !amd64

package selfcma

// trsmFast is false: the solve is gonum's blas64.Trsm, whose pure-Go
// kernels the compiler may fuse into multiply–adds on this architecture, so
// only gonum itself gives its bits here.
const trsmFast = false

var haveAVX = false

func solve4x8(p, w []float64, ldw, i0 int, rinv []float64) { panic("selfcma: no solve4x8") }
func solve4x4(p, w []float64, ldw, i0 int, rinv []float64) { panic("selfcma: no solve4x4") }
func update4x8(p, w []float64, ldw, i0, kmax int)          { panic("selfcma: no update4x8") }
func update4x4(p, w []float64, ldw, i0, kmax int)          { panic("selfcma: no update4x4") }
