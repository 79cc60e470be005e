#include "textflag.h"

// AHEAD_Q8_0(next) and AHEAD_Q4_0(next), at the top of each block's
// iteration (SI its offset in the rows AX-R11): where next is not nil, the
// block of the eight rows from next that goes with this one (at SI·8: eight
// blocks of 34 or 18 bytes), to L2, so that the weights stream as one
// sequential run; where it is nil, each of the rows 512 bytes ahead.
// ROWS8 loads the eight row pointers of p (a *[8]unsafe.Pointer, the
// first argument) into AX, BX, CX, DX, R8-R11, through R15.
#define ROWS8 \
	MOVQ p+0(FP), R15 \
	MOVQ 0(R15), AX \
	MOVQ 8(R15), BX \
	MOVQ 16(R15), CX \
	MOVQ 24(R15), DX \
	MOVQ 32(R15), R8 \
	MOVQ 40(R15), R9 \
	MOVQ 48(R15), R10 \
	MOVQ 56(R15), R11

// SCALES8 widens the f16 scales of the eight rows' block at SI into Y8
// (row r in lane r), through X8.
#define SCALES8 \
	VPINSRW   $0, (AX)(SI*1), X8, X8 \
	VPINSRW   $1, (BX)(SI*1), X8, X8 \
	VPINSRW   $2, (CX)(SI*1), X8, X8 \
	VPINSRW   $3, (DX)(SI*1), X8, X8 \
	VPINSRW   $4, (R8)(SI*1), X8, X8 \
	VPINSRW   $5, (R9)(SI*1), X8, X8 \
	VPINSRW   $6, (R10)(SI*1), X8, X8 \
	VPINSRW   $7, (R11)(SI*1), X8, X8 \
	VCVTPH2PS X8, Y8

#define ROWS_AHEAD \
	PREFETCHT0 512(AX)(SI*1) \
	PREFETCHT0 512(BX)(SI*1) \
	PREFETCHT0 512(CX)(SI*1) \
	PREFETCHT0 512(DX)(SI*1) \
	PREFETCHT0 512(R8)(SI*1) \
	PREFETCHT0 512(R9)(SI*1) \
	PREFETCHT0 512(R10)(SI*1) \
	PREFETCHT0 512(R11)(SI*1)

#define AHEAD_Q8_0(next) \
	TESTQ next, next \
	JZ    rowahead \
	PREFETCHT1 (next)(SI*8) \
	PREFETCHT1 64(next)(SI*8) \
	PREFETCHT1 128(next)(SI*8) \
	PREFETCHT1 192(next)(SI*8) \
	PREFETCHT1 256(next)(SI*8) \
	JMP   ahead \
rowahead: \
	ROWS_AHEAD \
ahead:

#define AHEAD_Q4_0(next) \
	TESTQ next, next \
	JZ    rowahead \
	PREFETCHT1 (next)(SI*8) \
	PREFETCHT1 64(next)(SI*8) \
	PREFETCHT1 128(next)(SI*8) \
	JMP   ahead \
rowahead: \
	ROWS_AHEAD \
ahead:

// func q4_0Rows8VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)
//
// q4_0Rows8FusedVec by AVX-512 VNNI; see mulmat_vnni_amd64.go.
TEXT ·q4_0Rows8VNNI(SB), NOSPLIT, $0-56
	ROWS8
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), R12
	MOVQ s+24(FP), R13
	MOVQ nb+32(FP), R14
	XORQ SI, SI
	MOVL $0x0f0f0f0f, R15
	VPBROADCASTD R15, Z15
	MOVQ next+48(FP), R15
	VMOVDQU32 ·reduceIdx(SB), Z14
	VXORPS Y13, Y13, Y13
	TESTQ R14, R14
	JZ   done

loop:
	// The next eight rows, one block of theirs for each of ours, or
	// without them (nil) these rows 512 bytes ahead.
	AHEAD_Q4_0(R15)

	// The block's activations 0-15 and 16-31, in each 128-bit lane.
	VBROADCASTI32X4 (DI), Z0
	VBROADCASTI32X4 16(DI), Z1

	// Rows 0-3, one per 128-bit lane: low nibbles in Z2, high in Z3.
	VMOVDQU      2(AX)(SI*1), X2
	VINSERTI32X4 $1, 2(BX)(SI*1), Z2, Z2
	VINSERTI32X4 $2, 2(CX)(SI*1), Z2, Z2
	VINSERTI32X4 $3, 2(DX)(SI*1), Z2, Z2
	VPSRLW       $4, Z2, Z3
	VPANDD       Z15, Z2, Z2
	VPANDD       Z15, Z3, Z3
	VPXORD       Z4, Z4, Z4
	VPDPBUSD     Z0, Z2, Z4
	VPDPBUSD     Z1, Z3, Z4

	// Rows 4-7.
	VMOVDQU      2(R8)(SI*1), X2
	VINSERTI32X4 $1, 2(R9)(SI*1), Z2, Z2
	VINSERTI32X4 $2, 2(R10)(SI*1), Z2, Z2
	VINSERTI32X4 $3, 2(R11)(SI*1), Z2, Z2
	VPSRLW       $4, Z2, Z3
	VPANDD       Z15, Z2, Z2
	VPANDD       Z15, Z3, Z3
	VPXORD       Z5, Z5, Z5
	VPDPBUSD     Z0, Z2, Z5
	VPDPBUSD     Z1, Z3, Z5

	// Per lane k: row k's sum in element 0, row k+4's in element 1, then
	// rows 0-7 in Y6.
	VPUNPCKLDQ Z5, Z4, Z6
	VPUNPCKHDQ Z5, Z4, Z7
	VPADDD     Z7, Z6, Z6
	VPSHUFD    $0x4e, Z6, Z7
	VPADDD     Z7, Z6, Z6
	VPERMD     Z6, Z14, Z6

	// isum = Σ q4·y − 8·Σy, as float32.
	VPBROADCASTD (R13), Y7
	VPSLLD       $3, Y7, Y7
	VPSUBD       Y7, Y6, Y6
	VCVTDQ2PS    Y6, Y6

	// The rows' f16 scales da, widened; acc += isum·(da·db).
	SCALES8
	VBROADCASTSS (R12), Y9
	VMULPS       Y9, Y8, Y8
	VMULPS       Y8, Y6, Y6
	VADDPS       Y6, Y13, Y13

	ADDQ $18, SI
	ADDQ $32, DI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ R14
	JNZ  loop

done:
	MOVQ    out+40(FP), R15
	VMOVUPS Y13, (R15)
	VZEROUPPER
	RET

// func q8_0Rows8VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)
//
// q8_0Rows8FusedVec by AVX-512 VNNI; see mulmat_vnni_amd64.go.
TEXT ·q8_0Rows8VNNI(SB), NOSPLIT, $0-56
	ROWS8
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), R12
	MOVQ s+24(FP), R13
	MOVQ nb+32(FP), R14
	XORQ SI, SI
	MOVL $0x80808080, R15
	VPBROADCASTD R15, Z15
	MOVQ next+48(FP), R15
	VMOVDQU32 ·reduceIdx(SB), Z14
	VXORPS Y13, Y13, Y13
	TESTQ R14, R14
	JZ   done

loop:
	// The next eight rows, one block of theirs for each of ours, or
	// without them (nil) these rows 512 bytes ahead.
	AHEAD_Q8_0(R15)

	// The block's 32 activations, in each 256-bit half.
	VBROADCASTI64X4 (DI), Z0

	// Two rows per vector, one per 256-bit half, their quants x biased to
	// x+128 (unsigned): Σ (x+128)·y in eight int32 lanes per row.
	VMOVDQU      2(AX)(SI*1), Y2
	VINSERTI64X4 $1, 2(BX)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z4, Z4, Z4
	VPDPBUSD     Z0, Z2, Z4
	VMOVDQU      2(CX)(SI*1), Y2
	VINSERTI64X4 $1, 2(DX)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z5, Z5, Z5
	VPDPBUSD     Z0, Z2, Z5
	VMOVDQU      2(R8)(SI*1), Y2
	VINSERTI64X4 $1, 2(R9)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z6, Z6, Z6
	VPDPBUSD     Z0, Z2, Z6
	VMOVDQU      2(R10)(SI*1), Y2
	VINSERTI64X4 $1, 2(R11)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z7, Z7, Z7
	VPDPBUSD     Z0, Z2, Z7

	// Rows 0-3 (Z4) and 4-7 (Z5), one per 128-bit lane, four lanes each.
	VSHUFI32X4 $0x88, Z5, Z4, Z11
	VSHUFI32X4 $0xdd, Z5, Z4, Z12
	VPADDD     Z12, Z11, Z4
	VSHUFI32X4 $0x88, Z7, Z6, Z11
	VSHUFI32X4 $0xdd, Z7, Z6, Z12
	VPADDD     Z12, Z11, Z5

	// As in q4_0Rows8VNNI: rows 0-7 in Y6.
	VPUNPCKLDQ Z5, Z4, Z6
	VPUNPCKHDQ Z5, Z4, Z7
	VPADDD     Z7, Z6, Z6
	VPSHUFD    $0x4e, Z6, Z7
	VPADDD     Z7, Z6, Z6
	VPERMD     Z6, Z14, Z6

	// isum = Σ (x+128)·y − 128·Σy, as float32.
	VPBROADCASTD (R13), Y7
	VPSLLD       $7, Y7, Y7
	VPSUBD       Y7, Y6, Y6
	VCVTDQ2PS    Y6, Y6

	SCALES8
	VBROADCASTSS (R12), Y9
	VMULPS       Y9, Y8, Y8
	VMULPS       Y8, Y6, Y6
	VADDPS       Y6, Y13, Y13

	ADDQ $34, SI
	ADDQ $32, DI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ R14
	JNZ  loop

done:
	MOVQ    out+40(FP), R15
	VMOVUPS Y13, (R15)
	VZEROUPPER
	RET

// func q8_0Rows8x2VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)
//
// q8_0Rows8VNNI against two activation rows: the second's quants at y+8·dd, its
// scales and sums at d+dd and s+dd. Each weight block is loaded once.
TEXT ·q8_0Rows8x2VNNI(SB), NOSPLIT, $0-64
	ROWS8
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), R12
	MOVQ s+24(FP), R13
	MOVQ dd+32(FP), R15
	MOVQ next+56(FP), R14
	XORQ SI, SI
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z15
	MOVQ p+0(FP), AX
	MOVQ 0(AX), AX
	VMOVDQU32 ·reduceIdx(SB), Z14
	VXORPS Y13, Y13, Y13
	VXORPS Y29, Y29, Y29
	CMPQ nb+40(FP), $0
	JEQ  done

loop:
	// The next eight rows, one block of theirs for each of ours, or
	// without them (nil) these rows 512 bytes ahead.
	AHEAD_Q8_0(R14)

	VBROADCASTI64X4 (DI), Z0
	VBROADCASTI64X4 (DI)(R15*8), Z1
	VMOVDQU      2(AX)(SI*1), Y2
	VINSERTI64X4 $1, 2(BX)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z4, Z4, Z4
	VPDPBUSD     Z0, Z2, Z4
	VPXORD       Z16, Z16, Z16
	VPDPBUSD     Z1, Z2, Z16
	VMOVDQU      2(CX)(SI*1), Y2
	VINSERTI64X4 $1, 2(DX)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z5, Z5, Z5
	VPDPBUSD     Z0, Z2, Z5
	VPXORD       Z17, Z17, Z17
	VPDPBUSD     Z1, Z2, Z17
	VMOVDQU      2(R8)(SI*1), Y2
	VINSERTI64X4 $1, 2(R9)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z6, Z6, Z6
	VPDPBUSD     Z0, Z2, Z6
	VPXORD       Z18, Z18, Z18
	VPDPBUSD     Z1, Z2, Z18
	VMOVDQU      2(R10)(SI*1), Y2
	VINSERTI64X4 $1, 2(R11)(SI*1), Z2, Z2
	VPXORD       Z15, Z2, Z2
	VPXORD       Z7, Z7, Z7
	VPDPBUSD     Z0, Z2, Z7
	VPXORD       Z19, Z19, Z19
	VPDPBUSD     Z1, Z2, Z19
	VSHUFI32X4 $0x88, Z5, Z4, Z11
	VSHUFI32X4 $0xdd, Z5, Z4, Z12
	VPADDD     Z12, Z11, Z4
	VSHUFI32X4 $0x88, Z7, Z6, Z11
	VSHUFI32X4 $0xdd, Z7, Z6, Z12
	VPADDD     Z12, Z11, Z5
	VSHUFI32X4 $0x88, Z17, Z16, Z11
	VSHUFI32X4 $0xdd, Z17, Z16, Z12
	VPADDD     Z12, Z11, Z16
	VSHUFI32X4 $0x88, Z19, Z18, Z11
	VSHUFI32X4 $0xdd, Z19, Z18, Z12
	VPADDD     Z12, Z11, Z17
	VPUNPCKLDQ Z5, Z4, Z6
	VPUNPCKHDQ Z5, Z4, Z7
	VPADDD     Z7, Z6, Z6
	VPSHUFD    $0x4e, Z6, Z7
	VPADDD     Z7, Z6, Z6
	VPERMD     Z6, Z14, Z6
	VPUNPCKLDQ Z17, Z16, Z20
	VPUNPCKHDQ Z17, Z16, Z21
	VPADDD     Z21, Z20, Z20
	VPSHUFD    $0x4e, Z20, Z21
	VPADDD     Z21, Z20, Z20
	VPERMD     Z20, Z14, Z20
	SCALES8
	VPBROADCASTD (R13), Y7
	VPSLLD       $7, Y7, Y7
	VPSUBD       Y7, Y6, Y6
	VCVTDQ2PS    Y6, Y6
	VBROADCASTSS (R12), Y9
	VMULPS       Y9, Y8, Y9
	VMULPS       Y9, Y6, Y6
	VADDPS       Y6, Y13, Y13
	VPBROADCASTD (R13)(R15*1), Y7
	VPSLLD       $7, Y7, Y7
	VPSUBD       Y7, Y20, Y20
	VCVTDQ2PS    Y20, Y20
	VBROADCASTSS (R12)(R15*1), Y9
	VMULPS       Y9, Y8, Y9
	VMULPS       Y9, Y20, Y20
	VADDPS       Y20, Y29, Y29

	ADDQ $34, SI
	ADDQ $32, DI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ nb+40(FP)
	JNZ  loop

done:
	MOVQ    out+48(FP), R15
	VMOVUPS Y13, (R15)
	VMOVUPS Y29, 32(R15)
	VZEROUPPER
	RET

// func q4_0Rows8x2VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)
//
// q4_0Rows8VNNI against two activation rows: the second's quants at y+8·dd, its
// scales and sums at d+dd and s+dd. Each weight block is loaded once.
TEXT ·q4_0Rows8x2VNNI(SB), NOSPLIT, $0-64
	ROWS8
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), R12
	MOVQ s+24(FP), R13
	MOVQ dd+32(FP), R15
	MOVQ next+56(FP), R14
	XORQ SI, SI
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15
	MOVQ p+0(FP), AX
	MOVQ 0(AX), AX
	VMOVDQU32 ·reduceIdx(SB), Z14
	VXORPS Y13, Y13, Y13
	VXORPS Y29, Y29, Y29
	CMPQ nb+40(FP), $0
	JEQ  done

loop:
	// The next eight rows, one block of theirs for each of ours, or
	// without them (nil) these rows 512 bytes ahead.
	AHEAD_Q4_0(R14)

	VBROADCASTI32X4 (DI), Z0
	VBROADCASTI32X4 16(DI), Z1
	VBROADCASTI32X4 (DI)(R15*8), Z22
	VBROADCASTI32X4 16(DI)(R15*8), Z23
	VMOVDQU      2(AX)(SI*1), X2
	VINSERTI32X4 $1, 2(BX)(SI*1), Z2, Z2
	VINSERTI32X4 $2, 2(CX)(SI*1), Z2, Z2
	VINSERTI32X4 $3, 2(DX)(SI*1), Z2, Z2
	VPSRLW       $4, Z2, Z3
	VPANDD       Z15, Z2, Z2
	VPANDD       Z15, Z3, Z3
	VPXORD       Z4, Z4, Z4
	VPDPBUSD     Z0, Z2, Z4
	VPDPBUSD     Z1, Z3, Z4
	VPXORD       Z16, Z16, Z16
	VPDPBUSD     Z22, Z2, Z16
	VPDPBUSD     Z23, Z3, Z16
	VMOVDQU      2(R8)(SI*1), X2
	VINSERTI32X4 $1, 2(R9)(SI*1), Z2, Z2
	VINSERTI32X4 $2, 2(R10)(SI*1), Z2, Z2
	VINSERTI32X4 $3, 2(R11)(SI*1), Z2, Z2
	VPSRLW       $4, Z2, Z3
	VPANDD       Z15, Z2, Z2
	VPANDD       Z15, Z3, Z3
	VPXORD       Z5, Z5, Z5
	VPDPBUSD     Z0, Z2, Z5
	VPDPBUSD     Z1, Z3, Z5
	VPXORD       Z17, Z17, Z17
	VPDPBUSD     Z22, Z2, Z17
	VPDPBUSD     Z23, Z3, Z17
	VPUNPCKLDQ Z5, Z4, Z6
	VPUNPCKHDQ Z5, Z4, Z7
	VPADDD     Z7, Z6, Z6
	VPSHUFD    $0x4e, Z6, Z7
	VPADDD     Z7, Z6, Z6
	VPERMD     Z6, Z14, Z6
	VPUNPCKLDQ Z17, Z16, Z20
	VPUNPCKHDQ Z17, Z16, Z21
	VPADDD     Z21, Z20, Z20
	VPSHUFD    $0x4e, Z20, Z21
	VPADDD     Z21, Z20, Z20
	VPERMD     Z20, Z14, Z20
	SCALES8
	VPBROADCASTD (R13), Y7
	VPSLLD       $3, Y7, Y7
	VPSUBD       Y7, Y6, Y6
	VCVTDQ2PS    Y6, Y6
	VBROADCASTSS (R12), Y9
	VMULPS       Y9, Y8, Y9
	VMULPS       Y9, Y6, Y6
	VADDPS       Y6, Y13, Y13
	VPBROADCASTD (R13)(R15*1), Y7
	VPSLLD       $3, Y7, Y7
	VPSUBD       Y7, Y20, Y20
	VCVTDQ2PS    Y20, Y20
	VBROADCASTSS (R12)(R15*1), Y9
	VMULPS       Y9, Y8, Y9
	VMULPS       Y9, Y20, Y20
	VADDPS       Y20, Y29, Y29

	ADDQ $18, SI
	ADDQ $32, DI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ nb+40(FP)
	JNZ  loop

done:
	MOVQ    out+48(FP), R15
	VMOVUPS Y13, (R15)
	VMOVUPS Y29, 32(R15)
	VZEROUPPER
	RET

// func cpuidAVX512VNNI() bool
TEXT ·cpuidAVX512VNNI(SB), NOSPLIT, $0-1
	MOVB $0, ret+0(FP)
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0xc0030000, BX // AVX512F, DQ, BW, VL
	CMPL BX, $0xc0030000
	JNE  novnni
	SHRL $11, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)

novnni:
	RET

// COL4T(yoff, soff, acc): one column of q8_0Rows8x4TVNNI's block: its
// quants at yoff(DI) against the transposed rows Y16-Y23 (two chains of
// VPDPBUSD, four quants broadcast each), less 128·Σy (soff(R13)), then
// acc += float(Σ)·(Y8·d) with d at soff(R12).
#define COL4T(yoff, soff, acc) \
	VPXORD        Y9, Y9, Y9 \
	VPXORD        Y10, Y10, Y10 \
	VPDPBUSD.BCST yoff+0(DI), Y16, Y9 \
	VPDPBUSD.BCST yoff+4(DI), Y17, Y10 \
	VPDPBUSD.BCST yoff+8(DI), Y18, Y9 \
	VPDPBUSD.BCST yoff+12(DI), Y19, Y10 \
	VPDPBUSD.BCST yoff+16(DI), Y20, Y9 \
	VPDPBUSD.BCST yoff+20(DI), Y21, Y10 \
	VPDPBUSD.BCST yoff+24(DI), Y22, Y9 \
	VPDPBUSD.BCST yoff+28(DI), Y23, Y10 \
	VPADDD        Y10, Y9, Y9 \
	VPBROADCASTD  soff(R13), Y11 \
	VPSLLD        $7, Y11, Y11 \
	VPSUBD        Y11, Y9, Y9 \
	VCVTDQ2PS     Y9, Y9 \
	VBROADCASTSS  soff(R12), Y11 \
	VMULPS        Y11, Y8, Y11 \
	VMULPS        Y11, Y9, Y9 \
	VADDPS        Y9, acc, acc

// func q8_0Rows8x4TVNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[32]float32, next unsafe.Pointer)
//
// q8_0Rows8VNNI against four activation rows at once, with the weights
// transposed in registers; see mulmat_vnni_amd64.go.
TEXT ·q8_0Rows8x4TVNNI(SB), NOSPLIT, $0-56
	ROWS8
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), R12
	MOVQ s+24(FP), R13
	MOVQ next+48(FP), R14
	XORQ SI, SI
	MOVL $0x80808080, R15
	VPBROADCASTD R15, Y15
	VPXORD Y24, Y24, Y24
	VPXORD Y25, Y25, Y25
	VPXORD Y26, Y26, Y26
	VPXORD Y27, Y27, Y27
	CMPQ nb+32(FP), $0
	JEQ  done

loop:
	AHEAD_Q8_0(R14)

	// The block's quants of the eight rows, made unsigned (x+128).
	VMOVDQU 2(AX)(SI*1), Y0
	VMOVDQU 2(BX)(SI*1), Y1
	VMOVDQU 2(CX)(SI*1), Y2
	VMOVDQU 2(DX)(SI*1), Y3
	VMOVDQU 2(R8)(SI*1), Y4
	VMOVDQU 2(R9)(SI*1), Y5
	VMOVDQU 2(R10)(SI*1), Y6
	VMOVDQU 2(R11)(SI*1), Y7
	VPXOR   Y15, Y0, Y0
	VPXOR   Y15, Y1, Y1
	VPXOR   Y15, Y2, Y2
	VPXOR   Y15, Y3, Y3
	VPXOR   Y15, Y4, Y4
	VPXOR   Y15, Y5, Y5
	VPXOR   Y15, Y6, Y6
	VPXOR   Y15, Y7, Y7

	// Transposed: Y16+g holds the g-th four quants of rows 0..7, one
	// row a lane.
	VPUNPCKLDQ  Y1, Y0, Y16
	VPUNPCKHDQ  Y1, Y0, Y17
	VPUNPCKLDQ  Y3, Y2, Y18
	VPUNPCKHDQ  Y3, Y2, Y19
	VPUNPCKLDQ  Y5, Y4, Y20
	VPUNPCKHDQ  Y5, Y4, Y21
	VPUNPCKLDQ  Y7, Y6, Y22
	VPUNPCKHDQ  Y7, Y6, Y23
	VPUNPCKLQDQ Y18, Y16, Y0
	VPUNPCKHQDQ Y18, Y16, Y1
	VPUNPCKLQDQ Y19, Y17, Y2
	VPUNPCKHQDQ Y19, Y17, Y3
	VPUNPCKLQDQ Y22, Y20, Y4
	VPUNPCKHQDQ Y22, Y20, Y5
	VPUNPCKLQDQ Y23, Y21, Y6
	VPUNPCKHQDQ Y23, Y21, Y7
	VSHUFI64X2  $0, Y4, Y0, Y16
	VSHUFI64X2  $3, Y4, Y0, Y20
	VSHUFI64X2  $0, Y5, Y1, Y17
	VSHUFI64X2  $3, Y5, Y1, Y21
	VSHUFI64X2  $0, Y6, Y2, Y18
	VSHUFI64X2  $3, Y6, Y2, Y22
	VSHUFI64X2  $0, Y7, Y3, Y19
	VSHUFI64X2  $3, Y7, Y3, Y23

	// The rows' scales of the block.
	SCALES8

	COL4T(0, 0, Y24)
	COL4T(32, 4, Y25)
	COL4T(64, 8, Y26)
	COL4T(96, 12, Y27)

	ADDQ $34, SI
	ADDQ $128, DI
	ADDQ $16, R12
	ADDQ $16, R13
	DECQ nb+32(FP)
	JNZ  loop

done:
	MOVQ    out+40(FP), R15
	VMOVUPS Y24, (R15)
	VMOVUPS Y25, 32(R15)
	VMOVUPS Y26, 64(R15)
	VMOVUPS Y27, 96(R15)
	VZEROUPPER
	RET
