#include "textflag.h"

// func f32ToF16F16C(dst *uint16, src *float32, n int) int
TEXT ·f32ToF16F16C(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	LEAQ -32(CX), DX // the last start of a 32-value step

	// 32 values a step, one branch for their NaNs (an unordered compare
	// of two vectors is true in a lane where either holds a NaN); a step
	// with one goes to the eight-value steps, which stop before it.
loop32:
	CMPQ      AX, DX
	JGT       loop
	VMOVUPS   (SI)(AX*4), Y0
	VMOVUPS   32(SI)(AX*4), Y1
	VMOVUPS   64(SI)(AX*4), Y2
	VMOVUPS   96(SI)(AX*4), Y3
	VCMPPS    $3, Y1, Y0, Y4
	VCMPPS    $3, Y3, Y2, Y5
	VORPS     Y5, Y4, Y4
	VMOVMSKPS Y4, R8
	TESTL     R8, R8
	JNZ       loop
	VCVTPS2PH $0, Y0, X0
	VCVTPS2PH $0, Y1, X1
	VCVTPS2PH $0, Y2, X2
	VCVTPS2PH $0, Y3, X3
	VMOVDQU   X0, (DI)(AX*2)
	VMOVDQU   X1, 16(DI)(AX*2)
	VMOVDQU   X2, 32(DI)(AX*2)
	VMOVDQU   X3, 48(DI)(AX*2)
	ADDQ      $32, AX
	JMP       loop32

loop:
	CMPQ AX, CX
	JGE  done
	VMOVUPS   (SI)(AX*4), Y0
	VCMPPS    $3, Y0, Y0, Y1 // unordered: the NaN lanes
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       done
	VCVTPS2PH $0, Y0, X2
	VMOVDQU   X2, (DI)(AX*2)
	ADDQ      $8, AX
	JMP       loop

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func f32ToF16AVX512(dst *uint16, src *float32, n int) int
TEXT ·f32ToF16AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	LEAQ -64(CX), DX // the last start of a 64-value step

	// 64 values a step, one branch for their NaNs; a step with one goes
	// to the 32-value steps, which stop before it.
loop64:
	CMPQ      AX, DX
	JGT       loop512
	VMOVUPS   (SI)(AX*4), Z0
	VMOVUPS   64(SI)(AX*4), Z1
	VMOVUPS   128(SI)(AX*4), Z4
	VMOVUPS   192(SI)(AX*4), Z5
	VCMPPS    $3, Z0, Z0, K1
	VCMPPS    $3, Z1, Z1, K2
	VCMPPS    $3, Z4, Z4, K4
	VCMPPS    $3, Z5, Z5, K5
	KORW      K1, K2, K3
	KORW      K4, K5, K6
	KORTESTW  K3, K6
	JNZ       loop512
	VCVTPS2PH $0, Z0, Y2
	VCVTPS2PH $0, Z1, Y3
	VCVTPS2PH $0, Z4, Y6
	VCVTPS2PH $0, Z5, Y7
	VMOVDQU   Y2, (DI)(AX*2)
	VMOVDQU   Y3, 32(DI)(AX*2)
	VMOVDQU   Y6, 64(DI)(AX*2)
	VMOVDQU   Y7, 96(DI)(AX*2)
	ADDQ      $64, AX
	JMP       loop64

loop512:
	CMPQ AX, CX
	JGE  done512
	VMOVUPS   (SI)(AX*4), Z0
	VMOVUPS   64(SI)(AX*4), Z1
	VCMPPS    $3, Z0, Z0, K1 // unordered: the NaN lanes
	VCMPPS    $3, Z1, Z1, K2
	KORW      K1, K2, K3
	KORTESTW  K3, K3
	JNZ       done512
	VCVTPS2PH $0, Z0, Y2
	VCVTPS2PH $0, Z1, Y3
	VMOVDQU   Y2, (DI)(AX*2)
	VMOVDQU   Y3, 32(DI)(AX*2)
	ADDQ      $32, AX
	JMP       loop512

done512:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
