#include "textflag.h"

// The eight-row dot products of the f16 and f32 MulMat with one column
// (mulmat_dot8_amd64.go), in every amd64 build. Both keep the eight rows'
// pointers in AX-DX and R8-R11, the activations in DI, the byte offset in
// the rows in SI (up to R12), and row r's eight lane sums in Yr.

// DOT8_ENTER loads the arguments (p, b, n, out: out in R13), n as bytes
// of weights (n << shift), and clears the sums.
#define DOT8_ENTER(shift) \
	MOVQ p+0(FP), R13 \
	MOVQ 0(R13), AX \
	MOVQ 8(R13), BX \
	MOVQ 16(R13), CX \
	MOVQ 24(R13), DX \
	MOVQ 32(R13), R8 \
	MOVQ 40(R13), R9 \
	MOVQ 48(R13), R10 \
	MOVQ 56(R13), R11 \
	MOVQ b+8(FP), DI \
	MOVQ n+16(FP), R12 \
	MOVQ out+24(FP), R13 \
	SHLQ $shift, R12 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	XORQ SI, SI

// DOT8_AHEAD prefetches each row 1 KB ahead of SI.
#define DOT8_AHEAD \
	PREFETCHT0 1024(AX)(SI*1) \
	PREFETCHT0 1024(BX)(SI*1) \
	PREFETCHT0 1024(CX)(SI*1) \
	PREFETCHT0 1024(DX)(SI*1) \
	PREFETCHT0 1024(R8)(SI*1) \
	PREFETCHT0 1024(R9)(SI*1) \
	PREFETCHT0 1024(R10)(SI*1) \
	PREFETCHT0 1024(R11)(SI*1)

// DOT8_STORE stores the sums to out and clears the upper halves.
#define DOT8_STORE \
	VMOVUPS Y0, 0(R13) \
	VMOVUPS Y1, 32(R13) \
	VMOVUPS Y2, 64(R13) \
	VMOVUPS Y3, 96(R13) \
	VMOVUPS Y4, 128(R13) \
	VMOVUPS Y5, 160(R13) \
	VMOVUPS Y6, 192(R13) \
	VMOVUPS Y7, 224(R13) \
	VZEROUPPER

// Four rows of f16Dot8F16C: eight halves of each of r0..r3 widened, times
// the activations in Y8, added to the sums s0..s3.
#define ROWS4F16(r0, r1, r2, r3, s0, s1, s2, s3) \
	VCVTPH2PS (r0)(SI*1), Y9 \
	VCVTPH2PS (r1)(SI*1), Y10 \
	VCVTPH2PS (r2)(SI*1), Y11 \
	VCVTPH2PS (r3)(SI*1), Y12 \
	VMULPS    Y8, Y9, Y9 \
	VMULPS    Y8, Y10, Y10 \
	VMULPS    Y8, Y11, Y11 \
	VMULPS    Y8, Y12, Y12 \
	VADDPS    Y9, s0, s0 \
	VADDPS    Y10, s1, s1 \
	VADDPS    Y11, s2, s2 \
	VADDPS    Y12, s3, s3

// Four rows of f32Dot8AVX: eight float32s of each of r0..r3 times the
// activations in Y8, added to the sums s0..s3 (a multiply, then a
// separate add: dotF32's order).
#define ROWS4F32(r0, r1, r2, r3, s0, s1, s2, s3) \
	VMULPS (r0)(SI*1), Y8, Y9 \
	VMULPS (r1)(SI*1), Y8, Y10 \
	VMULPS (r2)(SI*1), Y8, Y11 \
	VMULPS (r3)(SI*1), Y8, Y12 \
	VADDPS Y9, s0, s0 \
	VADDPS Y10, s1, s1 \
	VADDPS Y11, s2, s2 \
	VADDPS Y12, s3, s3

// func f16Dot8F16C(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)
TEXT ·f16Dot8F16C(SB), NOSPLIT, $0-32
	DOT8_ENTER(1)

d8loop:
	CMPQ SI, R12
	JGE  d8done
	VMOVUPS (DI)(SI*2), Y8
	ROWS4F16(AX, BX, CX, DX, Y0, Y1, Y2, Y3)
	ROWS4F16(R8, R9, R10, R11, Y4, Y5, Y6, Y7)
	// One prefetch per row per 64 bytes, 1 KB ahead: every other step
	// (the halves of a 64-byte line take four steps of 16 bytes; two
	// prefetches per line are cheap next to the eight conversions).
	TESTQ $16, SI
	JNZ   d8next
	DOT8_AHEAD

d8next:
	ADDQ $16, SI
	JMP  d8loop

d8done:
	DOT8_STORE
	RET

// func f32Dot8AVX(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)
TEXT ·f32Dot8AVX(SB), NOSPLIT, $0-32
	DOT8_ENTER(2)

f8loop:
	CMPQ SI, R12
	JGE  f8done
	VMOVUPS (DI)(SI*1), Y8
	ROWS4F32(AX, BX, CX, DX, Y0, Y1, Y2, Y3)
	ROWS4F32(R8, R9, R10, R11, Y4, Y5, Y6, Y7)
	// One prefetch per row per 64-byte line (two steps), 1 KB ahead.
	TESTQ $32, SI
	JNZ   f8next
	DOT8_AHEAD

f8next:
	ADDQ $32, SI
	JMP  f8loop

f8done:
	DOT8_STORE
	RET
