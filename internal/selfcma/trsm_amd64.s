#include "textflag.h"

// The kernels of trsm.solve: rows i0 … i0+3 of a tile of W, their sums in
// registers while k runs 0 … i0−1, then the triangle within the block. Each
// entry gets the operations of gonum's Dtrsm in its order (trsm.go): the
// product w_kc · (−u_ki), then the sum product + w_ic, k ascending, then
// the multiplication by 1/u_ii; AVX without fused multiply–add, operands in
// the order of gonum's f64.AxpyUnitary and f64.ScalUnitary.
//
// Registers: SI panel (4 multipliers per k), DI row k of W, BX the stride
// in bytes, CX the count of k, DX row i0 and R9 row i0+2 of the tile, R8
// rinv.

#define ARGS \
	MOVQ p_base+0(FP), SI; \
	MOVQ w_base+24(FP), DI; \
	MOVQ ldw+48(FP), BX; \
	SHLQ $3, BX; \
	MOVQ i0+56(FP), CX; \
	MOVQ rinv_base+64(FP), R8; \
	MOVQ CX, AX; \
	IMULQ BX, AX; \
	LEAQ (DI)(AX*1), DX; \
	LEAQ (DX)(BX*2), R9

// The update of rows i0 … i0+3 of a tile by rows k = 0 … kmax−1 of W:
// the loop of solve4x8 without the triangle and the scaling (the Dsyrk
// step of the blocked Cholesky factorization, cholesky.go).

#define UARGS \
	MOVQ p_base+0(FP), SI; \
	MOVQ w_base+24(FP), DI; \
	MOVQ ldw+48(FP), BX; \
	SHLQ $3, BX; \
	MOVQ i0+56(FP), AX; \
	MOVQ kmax+64(FP), CX; \
	IMULQ BX, AX; \
	LEAQ (DI)(AX*1), DX; \
	LEAQ (DX)(BX*2), R9

// ACC(m, w, t, acc): acc = (w · m) + acc.
#define ACC(m, w, t, acc) \
	VMULPD m, w, t; \
	VADDPD acc, t, acc

// func solve4x8(p, w []float64, ldw, i0 int, rinv []float64)
TEXT ·solve4x8(SB), NOSPLIT, $0-88
	ARGS
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 0(DX)(BX*1), Y2
	VMOVUPD 32(DX)(BX*1), Y3
	VMOVUPD 0(R9), Y4
	VMOVUPD 32(R9), Y5
	VMOVUPD 0(R9)(BX*1), Y6
	VMOVUPD 32(R9)(BX*1), Y7
	TESTQ CX, CX
	JZ tri8

loop8:
	VMOVUPD 0(DI), Y8
	VMOVUPD 32(DI), Y9
	VBROADCASTSD 0(SI), Y10
	ACC(Y10, Y8, Y11, Y0)
	ACC(Y10, Y9, Y12, Y1)
	VBROADCASTSD 8(SI), Y13
	ACC(Y13, Y8, Y14, Y2)
	ACC(Y13, Y9, Y15, Y3)
	VBROADCASTSD 16(SI), Y10
	ACC(Y10, Y8, Y11, Y4)
	ACC(Y10, Y9, Y12, Y5)
	VBROADCASTSD 24(SI), Y13
	ACC(Y13, Y8, Y14, Y6)
	ACC(Y13, Y9, Y15, Y7)
	ADDQ $32, SI
	ADDQ BX, DI
	DECQ CX
	JNZ loop8

tri8:
	// Row i0.
	VBROADCASTSD 0(R8), Y10
	VMULPD Y10, Y0, Y0
	VMULPD Y10, Y1, Y1
	// Row i0+1: k = i0.
	VBROADCASTSD 8(SI), Y10
	ACC(Y10, Y0, Y11, Y2)
	ACC(Y10, Y1, Y12, Y3)
	VBROADCASTSD 8(R8), Y10
	VMULPD Y10, Y2, Y2
	VMULPD Y10, Y3, Y3
	// Row i0+2: k = i0, i0+1.
	VBROADCASTSD 16(SI), Y10
	ACC(Y10, Y0, Y11, Y4)
	ACC(Y10, Y1, Y12, Y5)
	VBROADCASTSD 48(SI), Y10
	ACC(Y10, Y2, Y11, Y4)
	ACC(Y10, Y3, Y12, Y5)
	VBROADCASTSD 16(R8), Y10
	VMULPD Y10, Y4, Y4
	VMULPD Y10, Y5, Y5
	// Row i0+3: k = i0, i0+1, i0+2.
	VBROADCASTSD 24(SI), Y10
	ACC(Y10, Y0, Y11, Y6)
	ACC(Y10, Y1, Y12, Y7)
	VBROADCASTSD 56(SI), Y10
	ACC(Y10, Y2, Y11, Y6)
	ACC(Y10, Y3, Y12, Y7)
	VBROADCASTSD 88(SI), Y10
	ACC(Y10, Y4, Y11, Y6)
	ACC(Y10, Y5, Y12, Y7)
	VBROADCASTSD 24(R8), Y10
	VMULPD Y10, Y6, Y6
	VMULPD Y10, Y7, Y7

	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 0(DX)(BX*1)
	VMOVUPD Y3, 32(DX)(BX*1)
	VMOVUPD Y4, 0(R9)
	VMOVUPD Y5, 32(R9)
	VMOVUPD Y6, 0(R9)(BX*1)
	VMOVUPD Y7, 32(R9)(BX*1)
	VZEROUPPER
	RET

// func solve4x4(p, w []float64, ldw, i0 int, rinv []float64)
TEXT ·solve4x4(SB), NOSPLIT, $0-88
	ARGS
	VMOVUPD 0(DX), Y0
	VMOVUPD 0(DX)(BX*1), Y2
	VMOVUPD 0(R9), Y4
	VMOVUPD 0(R9)(BX*1), Y6
	TESTQ CX, CX
	JZ tri4

loop4:
	VMOVUPD 0(DI), Y8
	VBROADCASTSD 0(SI), Y10
	ACC(Y10, Y8, Y11, Y0)
	VBROADCASTSD 8(SI), Y13
	ACC(Y13, Y8, Y14, Y2)
	VBROADCASTSD 16(SI), Y10
	ACC(Y10, Y8, Y12, Y4)
	VBROADCASTSD 24(SI), Y13
	ACC(Y13, Y8, Y15, Y6)
	ADDQ $32, SI
	ADDQ BX, DI
	DECQ CX
	JNZ loop4

tri4:
	VBROADCASTSD 0(R8), Y10
	VMULPD Y10, Y0, Y0
	VBROADCASTSD 8(SI), Y10
	ACC(Y10, Y0, Y11, Y2)
	VBROADCASTSD 8(R8), Y10
	VMULPD Y10, Y2, Y2
	VBROADCASTSD 16(SI), Y10
	ACC(Y10, Y0, Y11, Y4)
	VBROADCASTSD 48(SI), Y10
	ACC(Y10, Y2, Y11, Y4)
	VBROADCASTSD 16(R8), Y10
	VMULPD Y10, Y4, Y4
	VBROADCASTSD 24(SI), Y10
	ACC(Y10, Y0, Y11, Y6)
	VBROADCASTSD 56(SI), Y10
	ACC(Y10, Y2, Y11, Y6)
	VBROADCASTSD 88(SI), Y10
	ACC(Y10, Y4, Y11, Y6)
	VBROADCASTSD 24(R8), Y10
	VMULPD Y10, Y6, Y6

	VMOVUPD Y0, 0(DX)
	VMOVUPD Y2, 0(DX)(BX*1)
	VMOVUPD Y4, 0(R9)
	VMOVUPD Y6, 0(R9)(BX*1)
	VZEROUPPER
	RET

// func update4x8(p, w []float64, ldw, i0, kmax int)
TEXT ·update4x8(SB), NOSPLIT, $0-72
	UARGS
	TESTQ CX, CX
	JZ udone8
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 0(DX)(BX*1), Y2
	VMOVUPD 32(DX)(BX*1), Y3
	VMOVUPD 0(R9), Y4
	VMOVUPD 32(R9), Y5
	VMOVUPD 0(R9)(BX*1), Y6
	VMOVUPD 32(R9)(BX*1), Y7

uloop8:
	VMOVUPD 0(DI), Y8
	VMOVUPD 32(DI), Y9
	VBROADCASTSD 0(SI), Y10
	ACC(Y10, Y8, Y11, Y0)
	ACC(Y10, Y9, Y12, Y1)
	VBROADCASTSD 8(SI), Y13
	ACC(Y13, Y8, Y14, Y2)
	ACC(Y13, Y9, Y15, Y3)
	VBROADCASTSD 16(SI), Y10
	ACC(Y10, Y8, Y11, Y4)
	ACC(Y10, Y9, Y12, Y5)
	VBROADCASTSD 24(SI), Y13
	ACC(Y13, Y8, Y14, Y6)
	ACC(Y13, Y9, Y15, Y7)
	ADDQ $32, SI
	ADDQ BX, DI
	DECQ CX
	JNZ uloop8

	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 0(DX)(BX*1)
	VMOVUPD Y3, 32(DX)(BX*1)
	VMOVUPD Y4, 0(R9)
	VMOVUPD Y5, 32(R9)
	VMOVUPD Y6, 0(R9)(BX*1)
	VMOVUPD Y7, 32(R9)(BX*1)
	VZEROUPPER

udone8:
	RET

// func update4x4(p, w []float64, ldw, i0, kmax int)
TEXT ·update4x4(SB), NOSPLIT, $0-72
	UARGS
	TESTQ CX, CX
	JZ udone4
	VMOVUPD 0(DX), Y0
	VMOVUPD 0(DX)(BX*1), Y2
	VMOVUPD 0(R9), Y4
	VMOVUPD 0(R9)(BX*1), Y6

uloop4:
	VMOVUPD 0(DI), Y8
	VBROADCASTSD 0(SI), Y10
	ACC(Y10, Y8, Y11, Y0)
	VBROADCASTSD 8(SI), Y13
	ACC(Y13, Y8, Y14, Y2)
	VBROADCASTSD 16(SI), Y10
	ACC(Y10, Y8, Y12, Y4)
	VBROADCASTSD 24(SI), Y13
	ACC(Y13, Y8, Y15, Y6)
	ADDQ $32, SI
	ADDQ BX, DI
	DECQ CX
	JNZ uloop4

	VMOVUPD Y0, 0(DX)
	VMOVUPD Y2, 0(DX)(BX*1)
	VMOVUPD Y4, 0(R9)
	VMOVUPD Y6, 0(R9)(BX*1)
	VZEROUPPER

udone4:
	RET
