//go:build goexperiment.simd && amd64

#include "textflag.h"

// One step of f16Dot4F16C: eight halves of each row at byte offset
// off+SI widened by VCVTPH2PS, multiplied by the eight activations in Y4
// and added to the row's running sums Y0-Y3 (multiply, then a separate
// add: the order of dotF16Vec4R).
#define STEP4(off, y) \
	VCVTPH2PS off(AX)(SI*1), Y6 \
	VCVTPH2PS off(BX)(SI*1), Y7 \
	VCVTPH2PS off(CX)(SI*1), Y8 \
	VCVTPH2PS off(DX)(SI*1), Y9 \
	VMULPS    y, Y6, Y6 \
	VMULPS    y, Y7, Y7 \
	VMULPS    y, Y8, Y8 \
	VMULPS    y, Y9, Y9 \
	VADDPS    Y6, Y0, Y0 \
	VADDPS    Y7, Y1, Y1 \
	VADDPS    Y8, Y2, Y2 \
	VADDPS    Y9, Y3, Y3

// func f16Dot4F16C(p *[4]unsafe.Pointer, b unsafe.Pointer, n int, out *[4][8]float32)
TEXT ·f16Dot4F16C(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), R8
	MOVQ 0(R8), AX
	MOVQ 8(R8), BX
	MOVQ 16(R8), CX
	MOVQ 24(R8), DX
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), R9
	MOVQ out+24(FP), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ SI, SI          // byte offset into the rows (2 per element)
	MOVQ R9, R11
	ANDQ $-16, R11
	SHLQ $1, R11         // bytes in whole groups of 16 elements
	SHLQ $1, R9          // bytes in all n elements

loop16:
	CMPQ SI, R11
	JGE  tail8
	PREFETCHT0 1024(AX)(SI*1)
	PREFETCHT0 1024(BX)(SI*1)
	PREFETCHT0 1024(CX)(SI*1)
	PREFETCHT0 1024(DX)(SI*1)
	VMOVUPS (DI)(SI*2), Y4
	VMOVUPS 32(DI)(SI*2), Y5
	STEP4(0, Y4)
	STEP4(16, Y5)
	ADDQ $32, SI
	JMP  loop16

tail8:
	CMPQ SI, R9
	JGE  done
	VMOVUPS (DI)(SI*2), Y4
	STEP4(0, Y4)
	ADDQ $16, SI
	JMP  tail8

done:
	VMOVUPS Y0, 0(R10)
	VMOVUPS Y1, 32(R10)
	VMOVUPS Y2, 64(R10)
	VMOVUPS Y3, 96(R10)
	VZEROUPPER
	RET

// func widenF16F16C(dst, src unsafe.Pointer, n int)
TEXT ·widenF16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	MOVQ CX, R11
	ANDQ $-16, R11

wloop16:
	CMPQ AX, R11
	JGE  wtail8
	PREFETCHT0 1024(SI)(AX*2)
	VCVTPH2PS (SI)(AX*2), Y0
	VCVTPH2PS 16(SI)(AX*2), Y1
	VMOVUPS   Y0, (DI)(AX*4)
	VMOVUPS   Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  wloop16

wtail8:
	CMPQ AX, CX
	JGE  wdone
	VCVTPH2PS (SI)(AX*2), Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  wtail8

wdone:
	VZEROUPPER
	RET

// One row of f16Tile4x2F16C: the row's eight halves at (r)(SI*1) widened
// into w, times x0 (Y8) and x1 (Y9) into the row's sums s0 and s1.
#define ROW2(r, w, t, s0, s1) \
	VCVTPH2PS (r)(SI*1), w \
	VMULPS    Y8, w, t \
	VADDPS    t, s0, s0 \
	VMULPS    Y9, w, w \
	VADDPS    w, s1, s1

// func f16Tile4x2F16C(p *[4]unsafe.Pointer, x0, x1, acc unsafe.Pointer, rs, n int)
TEXT ·f16Tile4x2F16C(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), R8
	MOVQ 0(R8), AX
	MOVQ 8(R8), BX
	MOVQ 16(R8), CX
	MOVQ 24(R8), DX
	MOVQ x0+8(FP), DI
	MOVQ x1+16(FP), R12
	MOVQ acc+24(FP), R10
	MOVQ rs+32(FP), R11
	MOVQ n+40(FP), R9
	LEAQ (R10)(R11*1), R13
	VMOVUPS (R10), Y0
	VMOVUPS 32(R10), Y1
	VMOVUPS (R13), Y2
	VMOVUPS 32(R13), Y3
	VMOVUPS (R10)(R11*2), Y4
	VMOVUPS 32(R10)(R11*2), Y5
	VMOVUPS (R13)(R11*2), Y6
	VMOVUPS 32(R13)(R11*2), Y7
	XORQ SI, SI
	SHLQ $1, R9

t2loop:
	CMPQ SI, R9
	JGE  t2done
	PREFETCHT0 512(AX)(SI*1)
	PREFETCHT0 512(BX)(SI*1)
	PREFETCHT0 512(CX)(SI*1)
	PREFETCHT0 512(DX)(SI*1)
	VMOVUPS (DI)(SI*2), Y8
	VMOVUPS (R12)(SI*2), Y9
	ROW2(AX, Y10, Y11, Y0, Y1)
	ROW2(BX, Y12, Y13, Y2, Y3)
	ROW2(CX, Y14, Y15, Y4, Y5)
	ROW2(DX, Y10, Y11, Y6, Y7)
	ADDQ $16, SI
	JMP  t2loop

t2done:
	VMOVUPS Y0, (R10)
	VMOVUPS Y1, 32(R10)
	VMOVUPS Y2, (R13)
	VMOVUPS Y3, 32(R13)
	VMOVUPS Y4, (R10)(R11*2)
	VMOVUPS Y5, 32(R10)(R11*2)
	VMOVUPS Y6, (R13)(R11*2)
	VMOVUPS Y7, 32(R13)(R11*2)
	VZEROUPPER
	RET

// func f16Tile4x1F16C(p *[4]unsafe.Pointer, x0, acc unsafe.Pointer, rs, n int)
TEXT ·f16Tile4x1F16C(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), R8
	MOVQ 0(R8), AX
	MOVQ 8(R8), BX
	MOVQ 16(R8), CX
	MOVQ 24(R8), DX
	MOVQ x0+8(FP), DI
	MOVQ acc+16(FP), R10
	MOVQ rs+24(FP), R11
	MOVQ n+32(FP), R9
	LEAQ (R10)(R11*1), R13
	VMOVUPS (R10), Y0
	VMOVUPS (R13), Y1
	VMOVUPS (R10)(R11*2), Y2
	VMOVUPS (R13)(R11*2), Y3
	XORQ SI, SI
	SHLQ $1, R9

t1loop:
	CMPQ SI, R9
	JGE  t1done
	PREFETCHT0 512(AX)(SI*1)
	PREFETCHT0 512(BX)(SI*1)
	PREFETCHT0 512(CX)(SI*1)
	PREFETCHT0 512(DX)(SI*1)
	VMOVUPS (DI)(SI*2), Y4
	STEP4(0, Y4)
	ADDQ $16, SI
	JMP  t1loop

t1done:
	VMOVUPS Y0, (R10)
	VMOVUPS Y1, (R13)
	VMOVUPS Y2, (R10)(R11*2)
	VMOVUPS Y3, (R13)(R11*2)
	VZEROUPPER
	RET
