package gen

import (
	"fmt"
	"strings"
)

const qneonHeader = `#include "textflag.h"

// The quantized MulMat's eight-row kernels for arm64 (mulmat_qneon_arm64.go):
// the AVX2 kernels' arguments (without the prefetch pointer) and float32
// steps. Each row's block sum is exact integer arithmetic: with ARMv8.0
// Advanced SIMD (the *NEON kernels, every arm64) by SMULL/SMULL2 (int8
// products widened to int16, at most 128·128) and SADDLP/SADALP (pairs of
// int16 added into int32 lanes); the q4_0 nibbles (0-15) by SMULL and SMLAL,
// four products an int16 lane (at most 4·15·128); with the ARMv8.2 dot
// product (the *DOT kernels, Kernels.DotProd: ASIMDDP) by SDOT (four int8
// products into each int32 lane). ADDP reduces each row's four lanes, row
// r's sum in lane r mod 4 of the rows 0-3 or 4-7 vector. Then, per block
// and lane, the scalar dotQ8_0's and dotQ4_0's float32 operations in order:
// isum (q4_0: minus 8·Σy) converted exactly by SCVTF, da·db by FMUL (da the
// row's f16 scale widened exactly by FCVTL), isum·(da·db) by FMUL and the
// running sum by FADD, no fused multiply-add: bit-identical results (NaNs
// aside: both NaN). Go's assembler has no mnemonic for these vector
// instructions: they are WORDs, each with the instruction it encodes.
// Registers: R0-R7 the rows (at their quants, the f16 scale at -2), R8-R10
// the first column's quants, scales and sums (R19-R21 the second's), V16-V17
// (V18-V19) the block's activations, V8-V15 (V20-V27) the rows' int32 sums,
// V28-V29 (V30-V31) the float32 sums of rows 0-3 and 4-7.
`

// qneonFile is mulmat_qneon_arm64.s.
func qneonFile() string {
	var l lines
	l.add("%s", strings.TrimSuffix(qneonHeader, "\n"))
	for _, dot := range []bool{false, true} {
		for _, q4 := range []bool{true, false} {
			for _, n := range []int{1, 2} {
				qRows8NEON(&l, q4, dot, n)
			}
		}
	}
	return align(l.String())
}

// a64 writes one A64 instruction as its WORD: enc with the register
// numbers d, n and m in the Rd, Rn and Rm fields (m < 0: none), and the
// instruction in Arm's syntax.
func a64(l *lines, enc uint32, d, n, m int, format string, args ...any) {
	enc |= uint32(d) | uint32(n)<<5
	if m >= 0 {
		enc |= uint32(m) << 16
	}
	l.add("\tWORD $0x%08x // %s", enc, fmt.Sprintf(format, args...))
}

// The encodings (Arm ARM, C7: Advanced SIMD three different / two-register
// misc / three same / shift by immediate) with the register fields zero.
const (
	encSMULL  = 0x0e20c000 // SMULL Vd.8H, Vn.8B, Vm.8B; | 1<<30: SMULL2 on the upper halves
	encSMLAL  = 0x0e208000 // SMLAL Vd.8H, Vn.8B, Vm.8B; | 1<<30: SMLAL2
	encSADDLP = 0x4e602800 // SADDLP Vd.4S, Vn.8H
	encSADALP = 0x4e606800 // SADALP Vd.4S, Vn.8H
	encSDOT   = 0x4e809400 // SDOT Vd.4S, Vn.16B, Vm.16B (ASIMDDP)
	encADDP   = 0x4ea0bc00 // ADDP Vd.4S, Vn.4S, Vm.4S
	encSUB    = 0x6ea08400 // SUB Vd.4S, Vn.4S, Vm.4S
	encSHL3   = 0x4f235400 // SHL Vd.4S, Vn.4S, #3
	encSCVTF  = 0x4e21d800 // SCVTF Vd.4S, Vn.4S
	encFMUL   = 0x6e20dc00 // FMUL Vd.4S, Vn.4S, Vm.4S
	encFADD   = 0x4e20d400 // FADD Vd.4S, Vn.4S, Vm.4S
	encFCVTL  = 0x0e217800 // FCVTL Vd.4S, Vn.4H; | 1<<30: FCVTL2 Vd.4S, Vn.8H
)

// widen writes SMULL (acc false) or SMLAL of the lower (hi false) or upper
// eight bytes of Vn and Vm into Vd.8H.
func widen(l *lines, acc, hi bool, d, n, m int) {
	enc, op := uint32(encSMULL), "SMULL"
	if acc {
		enc, op = encSMLAL, "SMLAL"
	}
	if hi {
		a64(l, enc|1<<30, d, n, m, "%s2 V%d.8H, V%d.16B, V%d.16B", op, d, n, m)
		return
	}
	a64(l, enc, d, n, m, "%s V%d.8H, V%d.8B, V%d.8B", op, d, n, m)
}

// qRows8NEON writes q4_0Rows8NEON, q8_0Rows8NEON (n = 1),
// q4_0Rows8x2NEON or q8_0Rows8x2NEON (n = 2), or with dot their SDOT forms
// (q4_0Rows8DOT, ...): the eight rows against n activation rows, the
// second one's quants at y + 8·dd and its scales and sums at d + dd and
// s + dd, each weight block loaded once.
func qRows8NEON(l *lines, q4, dot bool, n int) {
	typ, blk := "q8_0", 34
	if q4 {
		typ, blk = "q4_0", 18
	}
	kind := "NEON"
	if dot {
		kind = "DOT"
	}
	name, nbArg, outArg, frame := typ+"Rows8"+kind, 32, 40, 48
	l.add("")
	if n == 1 {
		l.add("// func %s(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32)", name)
	} else {
		name, nbArg, outArg, frame = typ+"Rows8x2"+kind, 40, 48, 56
		l.add("// func %s(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32)", name)
	}
	l.add("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	l.add("\tMOVD p+0(FP), R13")
	for r := 0; r < 8; r += 2 {
		l.add("\tLDP %s(R13), (R%d, R%d)", off(8*r), r, r+1)
	}
	for r := range 8 {
		l.add("\tADD $2, R%d", r)
	}
	l.add("\tMOVD y+8(FP), R8\n\tMOVD d+16(FP), R9\n\tMOVD s+24(FP), R10")
	if n == 2 {
		l.add("\tMOVD dd+32(FP), R12")
		l.add("\tADD R12<<3, R8, R19\n\tADD R12, R9, R20\n\tADD R12, R10, R21")
	}
	l.add("\tMOVD nb+%d(FP), R11", nbArg)
	for a := 28; a < 28+2*n; a++ {
		l.add("\tVEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
	}
	if q4 {
		l.add("\tVMOVI $15, V7.B16")
	}
	l.add("\tCBZ R11, done")

	type column struct {
		y, sum, acc int
		yp, dp, sp  string
	}
	cols := []column{{16, 8, 28, "R8", "R9", "R10"}, {18, 20, 30, "R19", "R20", "R21"}}[:n]
	l.add("\nloop:")
	l.add("\t// The block's 32 activations of each column.")
	for _, c := range cols {
		l.add("\tVLD1.P 32(%s), [V%d.B16, V%d.B16]", c.yp, c.y, c.y+1)
	}
	// lo and hi: the registers of the block's elements 0-15 and 16-31.
	lo, hi := 0, 1
	if q4 {
		lo, hi = 1, 0
	}
	for r := range 8 {
		l.add("")
		if q4 {
			l.add("\t// Row %d: its nibbles, elements 0-15 (low) and 16-31 (high).", r)
			l.add("\tVLD1 (R%d), [V0.B16]", r)
			l.add("\tVAND V7.B16, V0.B16, V1.B16\n\tVUSHR $4, V0.B16, V0.B16")
		} else {
			l.add("\t// Row %d: its quants.", r)
			l.add("\tVLD1 (R%d), [V0.B16, V1.B16]", r)
		}
		for _, c := range cols {
			s := c.sum + r
			switch {
			case dot:
				l.add("\tVEOR V%d.B16, V%d.B16, V%d.B16", s, s, s)
				a64(l, encSDOT, s, lo, c.y, "SDOT V%d.4S, V%d.16B, V%d.16B", s, lo, c.y)
				a64(l, encSDOT, s, hi, c.y+1, "SDOT V%d.4S, V%d.16B, V%d.16B", s, hi, c.y+1)
			case q4:
				widen(l, false, false, 2, lo, c.y)
				widen(l, true, true, 2, lo, c.y)
				widen(l, true, false, 2, hi, c.y+1)
				widen(l, true, true, 2, hi, c.y+1)
				a64(l, encSADDLP, s, 2, -1, "SADDLP V%d.4S, V2.8H", s)
			default:
				widen(l, false, false, 2, lo, c.y)
				widen(l, false, true, 3, lo, c.y)
				widen(l, false, false, 4, hi, c.y+1)
				widen(l, false, true, 5, hi, c.y+1)
				a64(l, encSADDLP, s, 2, -1, "SADDLP V%d.4S, V2.8H", s)
				for t := 3; t <= 5; t++ {
					a64(l, encSADALP, s, t, -1, "SADALP V%d.4S, V%d.8H", s, t)
				}
			}
		}
	}
	l.add("")
	l.add("\t// Each row's four lanes added: rows 0-3 in V(sum), 4-7 in V(sum+4).")
	for _, c := range cols {
		for _, b := range []int{c.sum, c.sum + 4} {
			addp := func(d, n, m int) { a64(l, encADDP, d, n, m, "ADDP V%d.4S, V%d.4S, V%d.4S", d, n, m) }
			addp(b, b, b+1)
			addp(b+2, b+2, b+3)
			addp(b, b, b+2)
		}
	}
	l.add("")
	l.add("\t// The rows' f16 scales da, widened: rows 0-3 in V3, 4-7 in V4.")
	for r := range 8 {
		t := 13 + r%2
		l.add("\tMOVHU -2(R%d), R%d\n\tVMOV R%d, V2.H[%d]", r, t, t, r)
	}
	a64(l, encFCVTL, 3, 2, -1, "FCVTL V3.4S, V2.4H")
	a64(l, encFCVTL|1<<30, 4, 2, -1, "FCVTL2 V4.4S, V2.8H")
	for r := range 8 {
		l.add("\tADD $%d, R%d", blk, r)
	}
	l.add("")
	if q4 {
		l.add("\t// isum = Σ q·y − 8·Σy, as float32; acc += isum·(da·db).")
	} else {
		l.add("\t// isum as float32; acc += isum·(da·db).")
	}
	for _, c := range cols {
		l.add("\tVLD1R (%s), [V5.S4]\n\tADD $4, %s", c.dp, c.dp)
		if q4 {
			l.add("\tVLD1R (%s), [V6.S4]\n\tADD $4, %s", c.sp, c.sp)
			a64(l, encSHL3, 6, 6, -1, "SHL V6.4S, V6.4S, #3")
		}
		for h, b := range []int{c.sum, c.sum + 4} {
			if q4 {
				a64(l, encSUB, b, b, 6, "SUB V%d.4S, V%d.4S, V6.4S", b, b)
			}
			a64(l, encSCVTF, b, b, -1, "SCVTF V%d.4S, V%d.4S", b, b)
			a64(l, encFMUL, 2, 3+h, 5, "FMUL V2.4S, V%d.4S, V5.4S", 3+h)
			a64(l, encFMUL, b, b, 2, "FMUL V%d.4S, V%d.4S, V2.4S", b, b)
			a64(l, encFADD, c.acc+h, c.acc+h, b, "FADD V%d.4S, V%d.4S, V%d.4S", c.acc+h, c.acc+h, b)
		}
	}
	l.add("")
	l.add("\tSUBS $1, R11, R11\n\tBNE loop")
	l.add("\ndone:")
	l.add("\tMOVD out+%d(FP), R13", outArg)
	if n == 1 {
		l.add("\tVST1 [V28.S4, V29.S4], (R13)")
	} else {
		l.add("\tVST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R13)")
	}
	l.add("\tRET")
}
