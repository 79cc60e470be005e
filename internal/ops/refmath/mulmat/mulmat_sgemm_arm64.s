#include "textflag.h"

// The tinyBLAS-order register tiles of f32 and f16 MulMat for arm64
// (mulmat_sgemm_arm64.go): two weight rows against one or two activation
// rows, each (row, column) pair's 16 lane sums in four vectors (lanes
// 0-3, 4-7, 8-11, 12-15), loaded from acc, each lane j summing the
// products of the elements i ≡ j (mod 16) in order by FMLA (one rounding:
// fmaLane's, sgemmDot's), stored back. ARMv8.0 Advanced SIMD; the f16
// weights are widened exactly by FCVTL and FCVTL2, which Go's assembler
// has no mnemonic for (the macros write their WORDs).
// Registers: R0-R1 the rows, R2-R3 the columns, R4 and R7 the two rows'
// sums, R6 the count of 16 values; V0-V3 and V4-V7 the rows' 16 weights,
// V8-V11 and V12-V15 the columns' 16 activations, V16-V19 (row 0,
// column 0), V20-V23 (0, 1), V24-V27 (1, 0), V28-V31 (1, 1) the sums.

// FCVTL Vd.4S, Vn.4H
#define FCVTL4S(d, n) WORD $(0x0e217800 | (n)<<5 | (d))
// FCVTL2 Vd.4S, Vn.8H
#define FCVTL24S(d, n) WORD $(0x4e217800 | (n)<<5 | (d))

// ENTER loads the arguments and row 0's sums (and row 1's).
#define ENTER \
	MOVD w+0(FP), R8 \
	LDP (R8), (R0, R1) \
	MOVD x+8(FP), R8 \
	LDP (R8), (R2, R3) \
	MOVD acc+16(FP), R4 \
	MOVD rs+24(FP), R5 \
	MOVD nv+32(FP), R6 \
	LSR $4, R6, R6 \
	ADD R4, R5, R7 \
	ADD $64, R4, R8 \
	ADD $64, R7, R9 \
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4] \
	VLD1 (R7), [V24.S4, V25.S4, V26.S4, V27.S4]

// ENTER2 loads the second column's sums.
#define ENTER2 \
	VLD1 (R8), [V20.S4, V21.S4, V22.S4, V23.S4] \
	VLD1 (R9), [V28.S4, V29.S4, V30.S4, V31.S4]

// LEAVE stores row 0's and row 1's sums of column 0; LEAVE2 column 1's.
#define LEAVE \
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R4) \
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R7)

#define LEAVE2 \
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R8) \
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R9)

// F32ROWS loads the two rows' next 16 float32 weights: row 0's in V0-V3,
// row 1's in V4-V7.
#define F32ROWS \
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]

// F16ROWS loads the two rows' next 16 halves, widened: elements 0-3, 4-7,
// 8-11, 12-15 of row 0 in V0, V2, V1, V3 (row 1: V4, V6, V5, V7).
#define F16ROWS \
	VLD1.P 32(R0), [V0.H8, V1.H8] \
	VLD1.P 32(R1), [V4.H8, V5.H8] \
	FCVTL24S(2, 0) \
	FCVTL4S(0, 0) \
	FCVTL24S(3, 1) \
	FCVTL4S(1, 1) \
	FCVTL24S(6, 4) \
	FCVTL4S(4, 4) \
	FCVTL24S(7, 5) \
	FCVTL4S(5, 5)

// FMA16 adds the products of the weights w0-w3 and the activations x0-x3
// to the sums s0-s3, lane by lane, fused.
#define FMA16(w0, w1, w2, w3, x0, x1, x2, x3, s0, s1, s2, s3) \
	VFMLA w0.S4, x0.S4, s0.S4 \
	VFMLA w1.S4, x1.S4, s1.S4 \
	VFMLA w2.S4, x2.S4, s2.S4 \
	VFMLA w3.S4, x3.S4, s3.S4

// COL0 and COL1: the column's next 16 activations against both rows
// (f32 and f16 weights' registers in element order W0..: see F16ROWS).
#define COL0(a, b, c, d, e, f, g, h) \
	VLD1.P 64(R2), [V8.S4, V9.S4, V10.S4, V11.S4] \
	FMA16(a, b, c, d, V8, V9, V10, V11, V16, V17, V18, V19) \
	FMA16(e, f, g, h, V8, V9, V10, V11, V24, V25, V26, V27)

#define COL1(a, b, c, d, e, f, g, h) \
	VLD1.P 64(R3), [V12.S4, V13.S4, V14.S4, V15.S4] \
	FMA16(a, b, c, d, V12, V13, V14, V15, V20, V21, V22, V23) \
	FMA16(e, f, g, h, V12, V13, V14, V15, V28, V29, V30, V31)

// func sgemmF32Tile2x2NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)
TEXT ·sgemmF32Tile2x2NEON(SB), NOSPLIT, $0-40
	ENTER
	ENTER2
	CBZ R6, done

loop:
	F32ROWS
	COL0(V0, V1, V2, V3, V4, V5, V6, V7)
	COL1(V0, V1, V2, V3, V4, V5, V6, V7)
	SUBS $1, R6, R6
	BNE  loop

done:
	LEAVE
	LEAVE2
	RET

// func sgemmF32Tile2x1NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)
TEXT ·sgemmF32Tile2x1NEON(SB), NOSPLIT, $0-40
	ENTER
	CBZ R6, done

loop:
	F32ROWS
	COL0(V0, V1, V2, V3, V4, V5, V6, V7)
	SUBS $1, R6, R6
	BNE  loop

done:
	LEAVE
	RET

// func sgemmF16Tile2x2NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)
TEXT ·sgemmF16Tile2x2NEON(SB), NOSPLIT, $0-40
	ENTER
	ENTER2
	CBZ R6, done

loop:
	F16ROWS
	COL0(V0, V2, V1, V3, V4, V6, V5, V7)
	COL1(V0, V2, V1, V3, V4, V6, V5, V7)
	SUBS $1, R6, R6
	BNE  loop

done:
	LEAVE
	LEAVE2
	RET

// func sgemmF16Tile2x1NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)
TEXT ·sgemmF16Tile2x1NEON(SB), NOSPLIT, $0-40
	ENTER
	CBZ R6, done

loop:
	F16ROWS
	COL0(V0, V2, V1, V3, V4, V6, V5, V7)
	SUBS $1, R6, R6
	BNE  loop

done:
	LEAVE
	RET
