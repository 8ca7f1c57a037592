#include "textflag.h"

// Eight rows of Z at a time, stored as a panel: entry (j, r) of the rows'
// block at a[8j+r]. Each rotation is applied as rotateRows applies it to
// one row (the same multiplications, additions and subtractions, in the
// same order, in SSE2 without fused operations), so the bits are the same.

// func rotForward8(c, s, a []float64)
// Planes (j, j+1), j = 0..len(c)−1 increasing; a[8j:8j+8] is column j.
TEXT ·rotForward8(SB), NOSPLIT, $0-72
	MOVQ c_base+0(FP), SI
	MOVQ c_len+8(FP), CX
	MOVQ s_base+24(FP), DI
	MOVQ a_base+48(FP), DX
	MOVSD $(1.0), X15
	XORPS X14, X14
	MOVUPD 0(DX), X0
	MOVUPD 16(DX), X1
	MOVUPD 32(DX), X2
	MOVUPD 48(DX), X3
	XORQ BX, BX

fwdloop:
	CMPQ BX, CX
	JGE fwddone
	MOVSD (SI)(BX*8), X4
	MOVSD (DI)(BX*8), X5
	UCOMISD X15, X4
	JNE fwdgeneral
	JPS fwdgeneral
	UCOMISD X14, X5
	JNE fwdgeneral
	JPS fwdgeneral
	// c = 1, s = 0: a[j] = x, x = a[j+1].
	MOVUPD X0, 0(DX)
	MOVUPD X1, 16(DX)
	MOVUPD X2, 32(DX)
	MOVUPD X3, 48(DX)
	MOVUPD 64(DX), X0
	MOVUPD 80(DX), X1
	MOVUPD 96(DX), X2
	MOVUPD 112(DX), X3
	ADDQ $64, DX
	INCQ BX
	JMP fwdloop

fwdgeneral:
	UNPCKLPD X4, X4
	UNPCKLPD X5, X5

#define FWD(X, off) \
	MOVUPD 64+off(DX), X6; \
	MOVAPD X6, X7; \
	MULPD X5, X7; \
	MOVAPD X, X8; \
	MULPD X4, X8; \
	ADDPD X8, X7; \
	MOVUPD X7, off(DX); \
	MULPD X4, X6; \
	MULPD X5, X; \
	SUBPD X, X6; \
	MOVAPD X6, X

	// a[j] = s·t + c·x, x = c·t − s·x, t = a[j+1].
	FWD(X0, 0)
	FWD(X1, 16)
	FWD(X2, 32)
	FWD(X3, 48)
	ADDQ $64, DX
	INCQ BX
	JMP fwdloop

fwddone:
	MOVUPD X0, 0(DX)
	MOVUPD X1, 16(DX)
	MOVUPD X2, 32(DX)
	MOVUPD X3, 48(DX)
	RET

// func rotBackward8(c, s, a []float64)
// Planes (j, j+1), j = len(c)−1..0 decreasing.
TEXT ·rotBackward8(SB), NOSPLIT, $0-72
	MOVQ c_base+0(FP), SI
	MOVQ c_len+8(FP), CX
	MOVQ s_base+24(FP), DI
	MOVQ a_base+48(FP), DX
	MOVSD $(1.0), X15
	XORPS X14, X14
	// DX = &a[8k], x = column k.
	MOVQ CX, AX
	SHLQ $6, AX
	ADDQ AX, DX
	MOVUPD 0(DX), X0
	MOVUPD 16(DX), X1
	MOVUPD 32(DX), X2
	MOVUPD 48(DX), X3
	MOVQ CX, BX

bwdloop:
	DECQ BX
	JL bwddone
	MOVSD (SI)(BX*8), X4
	MOVSD (DI)(BX*8), X5
	UCOMISD X15, X4
	JNE bwdgeneral
	JPS bwdgeneral
	UCOMISD X14, X5
	JNE bwdgeneral
	JPS bwdgeneral
	// a[j+1] = x, x = a[j].
	MOVUPD X0, 0(DX)
	MOVUPD X1, 16(DX)
	MOVUPD X2, 32(DX)
	MOVUPD X3, 48(DX)
	MOVUPD -64(DX), X0
	MOVUPD -48(DX), X1
	MOVUPD -32(DX), X2
	MOVUPD -16(DX), X3
	SUBQ $64, DX
	JMP bwdloop

bwdgeneral:
	UNPCKLPD X4, X4
	UNPCKLPD X5, X5

#define BWD(X, off) \
	MOVUPD off-64(DX), X6; \
	MOVAPD X, X7; \
	MULPD X4, X7; \
	MOVAPD X6, X8; \
	MULPD X5, X8; \
	SUBPD X8, X7; \
	MOVUPD X7, off(DX); \
	MULPD X5, X; \
	MULPD X4, X6; \
	ADDPD X6, X

	// a[j+1] = c·x − s·t, x = s·x + c·t, t = a[j].
	BWD(X0, 0)
	BWD(X1, 16)
	BWD(X2, 32)
	BWD(X3, 48)
	SUBQ $64, DX
	JMP bwdloop

bwddone:
	MOVUPD X0, 0(DX)
	MOVUPD X1, 16(DX)
	MOVUPD X2, 32(DX)
	MOVUPD X3, 48(DX)
	RET

// Sixteen rows at a time in AVX: entry (j, r) of the block at a[16j+r],
// four rows to a register; the same operations as rotForward8.

// func rotForward16(c, s, a []float64)
TEXT ·rotForward16(SB), NOSPLIT, $0-72
	MOVQ c_base+0(FP), SI
	MOVQ c_len+8(FP), CX
	MOVQ s_base+24(FP), DI
	MOVQ a_base+48(FP), DX
	MOVSD $(1.0), X15
	XORPS X14, X14
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	XORQ BX, BX

f16loop:
	CMPQ BX, CX
	JGE f16done
	MOVSD (SI)(BX*8), X4
	MOVSD (DI)(BX*8), X5
	UCOMISD X15, X4
	JNE f16general
	JPS f16general
	UCOMISD X14, X5
	JNE f16general
	JPS f16general
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD 128(DX), Y0
	VMOVUPD 160(DX), Y1
	VMOVUPD 192(DX), Y2
	VMOVUPD 224(DX), Y3
	ADDQ $128, DX
	INCQ BX
	JMP f16loop

f16general:
	VBROADCASTSD (SI)(BX*8), Y4
	VBROADCASTSD (DI)(BX*8), Y5

#define F16(Y, T, off) \
	VMOVUPD 128+off(DX), T; \
	VMULPD Y5, T, Y7; \
	VMULPD Y4, Y, Y8; \
	VADDPD Y8, Y7, Y7; \
	VMOVUPD Y7, off(DX); \
	VMULPD Y4, T, T; \
	VMULPD Y5, Y, Y; \
	VSUBPD Y, T, Y

	// a[j] = s·t + c·x, x = c·t − s·x, t = a[j+1].
	F16(Y0, Y6, 0)
	F16(Y1, Y9, 32)
	F16(Y2, Y10, 64)
	F16(Y3, Y11, 96)
	ADDQ $128, DX
	INCQ BX
	JMP f16loop

f16done:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET

// func rotBackward16(c, s, a []float64)
TEXT ·rotBackward16(SB), NOSPLIT, $0-72
	MOVQ c_base+0(FP), SI
	MOVQ c_len+8(FP), CX
	MOVQ s_base+24(FP), DI
	MOVQ a_base+48(FP), DX
	MOVSD $(1.0), X15
	XORPS X14, X14
	MOVQ CX, AX
	SHLQ $7, AX
	ADDQ AX, DX
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	MOVQ CX, BX

b16loop:
	DECQ BX
	JL b16done
	MOVSD (SI)(BX*8), X4
	MOVSD (DI)(BX*8), X5
	UCOMISD X15, X4
	JNE b16general
	JPS b16general
	UCOMISD X14, X5
	JNE b16general
	JPS b16general
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD -128(DX), Y0
	VMOVUPD -96(DX), Y1
	VMOVUPD -64(DX), Y2
	VMOVUPD -32(DX), Y3
	SUBQ $128, DX
	JMP b16loop

b16general:
	VBROADCASTSD (SI)(BX*8), Y4
	VBROADCASTSD (DI)(BX*8), Y5

#define B16(Y, T, off) \
	VMOVUPD off-128(DX), T; \
	VMULPD Y4, Y, Y7; \
	VMULPD Y5, T, Y8; \
	VSUBPD Y8, Y7, Y7; \
	VMOVUPD Y7, off(DX); \
	VMULPD Y5, Y, Y; \
	VMULPD Y4, T, T; \
	VADDPD T, Y, Y

	// a[j+1] = c·x − s·t, x = s·x + c·t, t = a[j].
	B16(Y0, Y6, 0)
	B16(Y1, Y9, 32)
	B16(Y2, Y10, 64)
	B16(Y3, Y11, 96)
	SUBQ $128, DX
	JMP b16loop

b16done:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET
