#include "textflag.h"

// func symvRow(a, x []float64, xr float64, y []float64) float64
// y[j] += xr·a[j] for j < len(a), and returns Σ a[j]·x[j] summed as
// symvRowGo sums it: eight lanes (j mod 8) over the blocks of eight, the
// lanes combined as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), then the tail in
// order. Each product rounded, then added; no fused multiply-add.
TEXT ·symvRow(SB), NOSPLIT, $0-88
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ x_base+24(FP), DI
	MOVQ y_base+56(FP), DX
	VBROADCASTSD xr+48(FP), Y15
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ CX, BX
	SHRQ $3, BX
	JZ stail

sloop:
	VMOVUPD 0(SI), Y2
	VMOVUPD 32(SI), Y3
	VMOVUPD 0(DI), Y8
	VMOVUPD 32(DI), Y9
	VMULPD Y8, Y2, Y4
	VMULPD Y9, Y3, Y5
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VMOVUPD 0(DX), Y10
	VMOVUPD 32(DX), Y11
	VMULPD Y15, Y2, Y6
	VMULPD Y15, Y3, Y7
	VADDPD Y10, Y6, Y6
	VADDPD Y11, Y7, Y7
	VMOVUPD Y6, 0(DX)
	VMOVUPD Y7, 32(DX)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, DX
	DECQ BX
	JNZ sloop
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0

stail:
	ANDQ $7, CX
	JZ sdone

stloop:
	VMOVSD (SI), X2
	VMOVSD (DI), X8
	VMULSD X8, X2, X3
	VADDSD X3, X0, X0
	VMOVSD (DX), X10
	VMULSD X15, X2, X4
	VADDSD X10, X4, X4
	VMOVSD X4, (DX)
	ADDQ $8, SI
	ADDQ $8, DI
	ADDQ $8, DX
	DECQ CX
	JNZ stloop

sdone:
	VMOVSD X0, ret+80(FP)
	VZEROUPPER
	RET
