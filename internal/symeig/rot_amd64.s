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
