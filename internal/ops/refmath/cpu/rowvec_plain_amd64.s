//go:build !goexperiment.simd

#include "textflag.h"

// The row kernels of the plain build (rowvec_plain_amd64.go) with AVX2:
// the arithmetic of rowvec_simd_amd64.go's, eight lanes at a time, in the
// same order. Each takes n a multiple of 8 (the sums: of 16 or 8 more) and
// ends with VZEROUPPER.

// func dequantQ8_0AVX(src *byte, dst *float32, nb int)
//
// nb q8_0 blocks (34 bytes each) to float32: q·d, d the block's half
// widened by VCVTPH2PS (F16C), q sign-extended and converted exactly.
TEXT ·dequantQ8_0AVX(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ nb+16(FP), CX

qloop:
	TESTQ        CX, CX
	JZ           qdone
	MOVWLZX      (SI), AX
	VMOVD        AX, X0
	VCVTPH2PS    X0, X0
	VBROADCASTSS X0, Y0
	VPMOVSXBD    2(SI), Y1
	VPMOVSXBD    10(SI), Y2
	VPMOVSXBD    18(SI), Y3
	VPMOVSXBD    26(SI), Y4
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       Y0, Y1, Y1
	VMULPS       Y0, Y2, Y2
	VMULPS       Y0, Y3, Y3
	VMULPS       Y0, Y4, Y4
	VMOVUPS      Y1, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JMP          qloop

qdone:
	VZEROUPPER
	RET

// func softMaxPrepAVX(w, x, m *float32, scale, slope float32, n int, out *[8]float32) int
//
// w = x·scale (+ slope·m where m is not nil) over n values, the lanes'
// maxima (VMAXPS, from -inf) to out, and the mask of the lanes that held
// a NaN returned.
TEXT ·softMaxPrepAVX(SB), NOSPLIT, $0-56
	MOVQ         w+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         m+16(FP), DX
	VBROADCASTSS scale+24(FP), Y8
	VBROADCASTSS slope+28(FP), Y9
	MOVQ         n+32(FP), CX
	MOVQ         out+40(FP), R8
	MOVL         $0xff800000, AX
	VMOVD        AX, X10
	VBROADCASTSS X10, Y10
	VXORPS       Y11, Y11, Y11
	XORQ         AX, AX

ploop:
	CMPQ   AX, CX
	JGE    pdone
	VMULPS (SI)(AX*4), Y8, Y0
	TESTQ  DX, DX
	JZ     pnomask
	VMULPS (DX)(AX*4), Y9, Y1
	VADDPS Y1, Y0, Y0

pnomask:
	VMOVUPS Y0, (DI)(AX*4)
	VMAXPS  Y0, Y10, Y10
	VCMPPS  $3, Y0, Y0, Y1 // unordered: NaN
	VORPS   Y1, Y11, Y11
	ADDQ    $8, AX
	JMP     ploop

pdone:
	VMOVUPS   Y10, (R8)
	VMOVMSKPS Y11, AX
	MOVQ      AX, ret+48(FP)
	VZEROUPPER
	RET

// func ropeNeoxAVX(dst, x, c, s *float32, h, n int)
//
// The pairs (x[i], x[i+h]) for i < n (a multiple of 8): dst[i] = x[i]·c[i]
// - x[i+h]·s[i], dst[i+h] = x[i]·s[i] + x[i+h]·c[i], each product rounded.
TEXT ·ropeNeoxAVX(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ c+16(FP), DX
	MOVQ s+24(FP), R8
	MOVQ h+32(FP), R9
	MOVQ n+40(FP), CX
	SHLQ $2, R9 // h in bytes
	LEAQ (SI)(R9*1), R10 // x + h
	LEAQ (DI)(R9*1), R11 // dst + h
	XORQ AX, AX

nloop:
	CMPQ    AX, CX
	JGE     ndone
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS (R10)(AX*4), Y1
	VMOVUPS (DX)(AX*4), Y2
	VMOVUPS (R8)(AX*4), Y3
	VMULPS  Y2, Y0, Y4
	VMULPS  Y3, Y1, Y5
	VSUBPS  Y5, Y4, Y4
	VMULPS  Y3, Y0, Y6
	VMULPS  Y2, Y1, Y7
	VADDPS  Y7, Y6, Y6
	VMOVUPS Y4, (DI)(AX*4)
	VMOVUPS Y6, (R11)(AX*4)
	ADDQ    $8, AX
	JMP     nloop

ndone:
	VZEROUPPER
	RET

// func ropeNormalAVX(dst, x, cc, ss *float32, n int)
//
// dst = x·cc + swap(x)·ss over n values (a multiple of 8), swap exchanging
// the two values of each pair: ropeExpand's layout.
TEXT ·ropeNormalAVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ cc+16(FP), DX
	MOVQ ss+24(FP), R8
	MOVQ n+32(FP), CX
	XORQ AX, AX

rloop:
	CMPQ       AX, CX
	JGE        rdone
	VMOVUPS    (SI)(AX*4), Y0
	VPERMILPS  $0xb1, Y0, Y1
	VMULPS     (DX)(AX*4), Y0, Y0
	VMULPS     (R8)(AX*4), Y1, Y1
	VADDPS     Y1, Y0, Y0
	VMOVUPS    Y0, (DI)(AX*4)
	ADDQ       $8, AX
	JMP        rloop

rdone:
	VZEROUPPER
	RET
