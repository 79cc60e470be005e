#include "textflag.h"

// The norms' sums and the row scaling of every amd64 build
// (sums_amd64.go), AVX: float32 widened to float64 in the lane order of
// the scalar definitions' vector twins, ending with VZEROUPPER. The loops
// are aligned to 64 bytes, so their speed does not depend on where the
// linker puts them (see elt_amd64.s).

// func scaleF32AVX(dst, x *float32, s float32, n int)
TEXT ·scaleF32AVX(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS s+16(FP), Y1
	MOVQ         n+24(FP), CX
	XORQ         AX, AX
	PCALIGN      $64

sloop:
	CMPQ    AX, CX
	JGE     sdone
	VMOVUPS (SI)(AX*4), Y0
	VMULPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     sloop

sdone:
	VZEROUPPER
	RET

// ADD4(v, acc0, acc1): the low and high four float32 of v widened to
// float64 and added to acc0 and acc1 (Y10 scratch).
#define ADD4(v, xv, acc0, acc1) \
	VEXTRACTF128 $1, v, X10 \
	VCVTPS2PD    xv, v \
	VCVTPS2PD    X10, Y10 \
	VADDPD       v, acc0, acc0 \
	VADDPD       Y10, acc1, acc1

// func sumsF32AVX(dst, x *float32, m float32, n int, mode int, out *[16]float64)
//
// Mode 0: Σ x; 1: Σ x·x (the product in float32); 2: dst = x − m and
// Σ d·d. Four float64x4 partial sums a, b, c, d (Y4-Y7) of the values
// 16j + 0..3, 4..7, 8..11, 12..15, and, for a last group of eight, a and
// b: sumSqVec's and centerSumSqRow's order. out gets a, b, c, d.
TEXT ·sumsF32AVX(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS m+16(FP), Y8
	MOVQ         n+24(FP), CX
	MOVQ         mode+32(FP), DX
	MOVQ         out+40(FP), R8
	VXORPD       Y4, Y4, Y4
	VXORPD       Y5, Y5, Y5
	VXORPD       Y6, Y6, Y6
	VXORPD       Y7, Y7, Y7
	XORQ         AX, AX
	MOVQ         CX, BX
	SUBQ         $16, BX // the last start of a step of sixteen
	PCALIGN      $64

uloop:
	CMPQ    AX, BX
	JGT     utail
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	CMPQ    DX, $2
	JNE     usq
	VSUBPS  Y8, Y0, Y0
	VSUBPS  Y8, Y1, Y1
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)

usq:
	CMPQ   DX, $0
	JEQ    uadd
	VMULPS Y0, Y0, Y0
	VMULPS Y1, Y1, Y1

uadd:
	ADD4(Y0, X0, Y4, Y5)
	ADD4(Y1, X1, Y6, Y7)
	ADDQ $16, AX
	JMP  uloop

utail:
	CMPQ    AX, CX
	JGE     udone
	VMOVUPS (SI)(AX*4), Y0
	CMPQ    DX, $2
	JNE     tsq
	VSUBPS  Y8, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)

tsq:
	CMPQ   DX, $0
	JEQ    tadd
	VMULPS Y0, Y0, Y0

tadd:
	ADD4(Y0, X0, Y4, Y5)

udone:
	VMOVUPD Y4, 0(R8)
	VMOVUPD Y5, 32(R8)
	VMOVUPD Y6, 64(R8)
	VMOVUPD Y7, 96(R8)
	VZEROUPPER
	RET
