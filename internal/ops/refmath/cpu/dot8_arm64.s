#include "textflag.h"

// The eight-row f32 and f16 dot products of MulMat against one column
// (kernels_arm64.go), ARMv8.0 Advanced SIMD: per row, lanes 0-3 and 4-7 of
// two vectors are dotF32's eight running sums, each s = s + w·x by FMUL
// and a separate FADD (no fused multiply-add), in element order; the f16
// weights widened exactly by FCVTL and FCVTL2. Go's assembler has no
// mnemonic for these, so the macros write their WORDs (register numbers
// in the Rd, Rn and Rm fields).
// Registers: R0-R7 the rows, R8 the activations, R9 the count of eight
// values; V0-V1 the activations, V2-V5 the weights and products, V16+2r
// and V17+2r row r's sums.

// FMUL Vd.4S, Vn.4S, Vm.4S
#define FMUL4S(d, n, m) WORD $(0x6e20dc00 | (m)<<16 | (n)<<5 | (d))
// FADD Vd.4S, Vn.4S, Vm.4S
#define FADD4S(d, n, m) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))
// FCVTL Vd.4S, Vn.4H
#define FCVTL4S(d, n) WORD $(0x0e217800 | (n)<<5 | (d))
// FCVTL2 Vd.4S, Vn.8H
#define FCVTL24S(d, n) WORD $(0x4e217800 | (n)<<5 | (d))

// ROWS8 loads the eight row pointers, the activations and the count.
#define ROWS8 \
	MOVD p+0(FP), R13 \
	LDP (R13), (R0, R1) \
	LDP 16(R13), (R2, R3) \
	LDP 32(R13), (R4, R5) \
	LDP 48(R13), (R6, R7) \
	MOVD b+8(FP), R8 \
	MOVD n+16(FP), R9 \
	LSR $3, R9, R9 \
	VEOR V16.B16, V16.B16, V16.B16 \
	VEOR V17.B16, V17.B16, V17.B16 \
	VEOR V18.B16, V18.B16, V18.B16 \
	VEOR V19.B16, V19.B16, V19.B16 \
	VEOR V20.B16, V20.B16, V20.B16 \
	VEOR V21.B16, V21.B16, V21.B16 \
	VEOR V22.B16, V22.B16, V22.B16 \
	VEOR V23.B16, V23.B16, V23.B16 \
	VEOR V24.B16, V24.B16, V24.B16 \
	VEOR V25.B16, V25.B16, V25.B16 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	VEOR V28.B16, V28.B16, V28.B16 \
	VEOR V29.B16, V29.B16, V29.B16 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V31.B16, V31.B16, V31.B16

// ACC adds the products of weights Vw (lanes 0-3) and Vw2 (4-7) with the
// activations into sums Vs and Vs+1.
#define ACC(w, w2, s) \
	FMUL4S(w, w, 0) \
	FMUL4S(w2, w2, 1) \
	FADD4S(s, s, w) \
	FADD4S(s+1, s+1, w2)

// F32ROW: row R's next eight float32 weights into the sums Vs, Vs+1.
#define F32ROW(R, s) \
	VLD1.P 32(R), [V2.S4, V3.S4] \
	ACC(2, 3, s)

// F16ROW: row R's next eight halves, widened, into the sums Vs, Vs+1.
#define F16ROW(R, s) \
	VLD1.P 16(R), [V4.H8] \
	FCVTL4S(2, 4) \
	FCVTL24S(3, 4) \
	ACC(2, 3, s)

// STORE8 writes the eight rows' sums to out.
#define STORE8 \
	MOVD out+24(FP), R13 \
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R13) \
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R13) \
	VST1.P [V24.S4, V25.S4, V26.S4, V27.S4], 64(R13) \
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R13)

// func f32Dot8NEON(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)
TEXT ·f32Dot8NEON(SB), NOSPLIT, $0-32
	ROWS8
	CBZ R9, done

loop:
	VLD1.P 32(R8), [V0.S4, V1.S4]
	F32ROW(R0, 16)
	F32ROW(R1, 18)
	F32ROW(R2, 20)
	F32ROW(R3, 22)
	F32ROW(R4, 24)
	F32ROW(R5, 26)
	F32ROW(R6, 28)
	F32ROW(R7, 30)
	SUBS $1, R9, R9
	BNE  loop

done:
	STORE8
	RET

// func f16Dot8NEON(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)
TEXT ·f16Dot8NEON(SB), NOSPLIT, $0-32
	ROWS8
	CBZ R9, done

loop:
	VLD1.P 32(R8), [V0.S4, V1.S4]
	F16ROW(R0, 16)
	F16ROW(R1, 18)
	F16ROW(R2, 20)
	F16ROW(R3, 22)
	F16ROW(R4, 24)
	F16ROW(R5, 26)
	F16ROW(R6, 28)
	F16ROW(R7, 30)
	SUBS $1, R9, R9
	BNE  loop

done:
	STORE8
	RET
