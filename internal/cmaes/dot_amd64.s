//go:build amd64 && !noasm

#include "textflag.h"

// func dot4(x, y []float64, ldy int, out *[4]float64)
// out[r] = Σ x[l]·y[r·ldy + l], l < len(x), for r < 4, each summed as
// gonum's DotUnitary (amd64) sums it: four lanes (l mod 4) over the blocks
// of four, the tail added to lane 0 in order, then (l0 + l2) + (l1 + l3).
// Each product rounded, then added; no fused multiply-add.
TEXT ·dot4(SB), NOSPLIT, $0-64
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ y_base+24(FP), DI
	MOVQ ldy+48(FP), DX
	SHLQ $3, DX
	LEAQ (DI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	MOVQ out+56(FP), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, BX
	SHRQ $2, BX
	JZ dsplit

dloop:
	VMOVUPD (SI)(AX*8), Y4
	VMULPD (DI)(AX*8), Y4, Y5
	VMULPD (R8)(AX*8), Y4, Y6
	VMULPD (R9)(AX*8), Y4, Y7
	VMULPD (R10)(AX*8), Y4, Y12
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y12, Y3, Y3
	ADDQ $4, AX
	DECQ BX
	JNZ dloop

dsplit:
	// Lanes 2 and 3 aside (a scalar VEX op clears the upper half).
	VEXTRACTF128 $1, Y0, X8
	VEXTRACTF128 $1, Y1, X9
	VEXTRACTF128 $1, Y2, X10
	VEXTRACTF128 $1, Y3, X11
	ANDQ $3, CX
	JZ dsum

dtail:
	VMOVSD (SI)(AX*8), X4
	VMULSD (DI)(AX*8), X4, X5
	VMULSD (R8)(AX*8), X4, X6
	VMULSD (R9)(AX*8), X4, X7
	VMULSD (R10)(AX*8), X4, X12
	VADDSD X5, X0, X0
	VADDSD X6, X1, X1
	VADDSD X7, X2, X2
	VADDSD X12, X3, X3
	INCQ AX
	DECQ CX
	JNZ dtail

dsum:
	VADDPD X8, X0, X0
	VADDPD X9, X1, X1
	VADDPD X10, X2, X2
	VADDPD X11, X3, X3
	VHADDPD X0, X0, X0
	VHADDPD X1, X1, X1
	VHADDPD X2, X2, X2
	VHADDPD X3, X3, X3
	VMOVSD X0, 0(R11)
	VMOVSD X1, 8(R11)
	VMOVSD X2, 16(R11)
	VMOVSD X3, 24(R11)
	VZEROUPPER
	RET
