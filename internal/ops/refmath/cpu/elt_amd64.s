#include "textflag.h"

// The element-wise row kernels of every amd64 build (elt_amd64.go), AVX:
// dst[i] = a[i] op b[i] over n values, n a multiple of 8, 32 values a
// step (four independent vectors, one compare, branch and index update
// for them: a fifth less time on rows in L1, BenchmarkEltRow), then eight,
// ending with VZEROUPPER. The loops are aligned to 64 bytes: unaligned,
// the eight-value loop ran a third slower on Zen 5 in some binaries (it
// crossed a fetch window), which made the op's time depend on unrelated
// code.

// ELTWISE(op) is dst[i] = a[i] op b[i] over n values.
#define ELTWISE(op) \
	MOVQ dst+0(FP), DI \
	MOVQ a+8(FP), SI \
	MOVQ b+16(FP), DX \
	MOVQ n+24(FP), CX \
	XORQ AX, AX \
	LEAQ -32(CX), BX \
	CMPQ AX, BX \
	JGT  eloop \
	PCALIGN $64 \
eloop32: \
	VMOVUPS (SI)(AX*4), Y0 \
	VMOVUPS 32(SI)(AX*4), Y1 \
	VMOVUPS 64(SI)(AX*4), Y2 \
	VMOVUPS 96(SI)(AX*4), Y3 \
	op      (DX)(AX*4), Y0, Y0 \
	op      32(DX)(AX*4), Y1, Y1 \
	op      64(DX)(AX*4), Y2, Y2 \
	op      96(DX)(AX*4), Y3, Y3 \
	VMOVUPS Y0, (DI)(AX*4) \
	VMOVUPS Y1, 32(DI)(AX*4) \
	VMOVUPS Y2, 64(DI)(AX*4) \
	VMOVUPS Y3, 96(DI)(AX*4) \
	ADDQ    $32, AX \
	CMPQ    AX, BX \
	JLE     eloop32 \
	PCALIGN $64 \
eloop: \
	CMPQ    AX, CX \
	JGE     edone \
	VMOVUPS (SI)(AX*4), Y0 \
	op      (DX)(AX*4), Y0, Y0 \
	VMOVUPS Y0, (DI)(AX*4) \
	ADDQ    $8, AX \
	JMP     eloop \
edone: \
	VZEROUPPER \
	RET

// func addF32AVX(dst, a, b *float32, n int)
TEXT ·addF32AVX(SB), NOSPLIT, $0-32
	ELTWISE(VADDPS)

// func subF32AVX(dst, a, b *float32, n int)
TEXT ·subF32AVX(SB), NOSPLIT, $0-32
	ELTWISE(VSUBPS)

// func mulF32AVX(dst, a, b *float32, n int)
TEXT ·mulF32AVX(SB), NOSPLIT, $0-32
	ELTWISE(VMULPS)
