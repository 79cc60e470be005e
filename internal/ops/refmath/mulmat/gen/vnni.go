package gen

import (
	"fmt"
	"strings"
)

const vnniHeader = `#include "textflag.h"

// The quantized MulMat's kernels by AVX-512 VNNI (mulmat_vnni_amd64.go):
// eight q4_0 or q8_0 weight rows (p, the pointers AX, BX, CX, DX, R8-R11;
// SI the offset of the block in them) against one, two or four q8_0
// activation rows, nb blocks of 32 values. VPDPBUSD sums the products of
// unsigned by signed bytes four at a time into int32 lanes, exactly: the
// q4_0 nibbles are unsigned (0-15) and the q8_0 quants go in as x+128
// (their sign bit flipped), so the kernels take 8·Σy or 128·Σy (s, the
// activations' block sums) from each int32 sum. The sum then becomes
// float32 and acc += float(isum)·(da·db), da the weight rows' f16 scales
// widened by VCVTPH2PS and db the activations' (d): the float32
// operations of the scalar dotQ4_0 and dotQ8_0, lane by lane, in order.
//
// At the top of each block's iteration the kernels prefetch to L2, where
// next is not nil, the block of the eight rows from next that goes with
// this one (at SI·8: eight blocks of 18 or 34 bytes), so that the weights
// stream as one sequential run; where next is nil, their own rows 512
// bytes ahead, to L1.
`

// vnniFile is mulmat_vnni_amd64.s.
func vnniFile() string {
	var l lines
	l.add("%s", strings.TrimSuffix(vnniHeader, "\n"))
	for _, q4 := range []bool{true, false} {
		for _, n := range []int{1, 2} {
			qRows8(&l, q4, n)
		}
	}
	q8Rows8x4T(&l)
	return align(l.String())
}

// vnniRows are the eight weight row pointers of the kernels.
var vnniRows = []string{"AX", "BX", "CX", "DX", "R8", "R9", "R10", "R11"}

// rows8 loads the eight row pointers of p (a *[8]unsafe.Pointer, the
// first argument) into vnniRows, through R15.
func rows8(l *lines) {
	l.add("\tMOVQ p+0(FP), R15")
	for k, r := range vnniRows {
		l.add("\tMOVQ %d(R15), %s", 8*k, r)
	}
	l.add("")
}

// scales8 widens the f16 scales of the eight rows' block at SI into Y8
// (row r in lane r), through X8.
func scales8(l *lines) {
	for k, r := range vnniRows {
		l.add("\tVPINSRW $%d, (%s)(SI*1), X8, X8", k, r)
	}
	l.add("\tVCVTPH2PS X8, Y8")
}

// ahead prefetches, where the register next is not nil, the eight blocks
// of blk bytes at next + SI·8 to L2, else the eight rows 512 bytes ahead
// of SI to L1.
func ahead(l *lines, next string, blk int) {
	l.add("\t// The next eight rows, one block of theirs for each of ours, or")
	l.add("\t// without them (nil) these rows 512 bytes ahead.")
	l.add("\tTESTQ %s, %s", next, next)
	l.add("\tJZ rowahead")
	for o := 0; o < 8*blk; o += 64 {
		l.add("\tPREFETCHT1 %s(%s)(SI*8)", off(o), next)
	}
	l.add("\tJMP ahead")
	l.add("\nrowahead:")
	for _, r := range vnniRows {
		l.add("\tPREFETCHT0 512(%s)(SI*1)", r)
	}
	l.add("\nahead:")
}

// qRows8 writes q4_0Rows8VNNI, q8_0Rows8VNNI (n = 1), q4_0Rows8x2VNNI or
// q8_0Rows8x2VNNI (n = 2): the eight rows against n activation rows, the
// second one's quants at y + 8·dd and its scales and sums at d + dd and
// s + dd, each weight block loaded once.
func qRows8(l *lines, q4 bool, n int) {
	typ, blk, mask, bias := "q8_0", 34, "0x80808080", 7
	if q4 {
		typ, blk, mask, bias = "q4_0", 18, "0x0f0f0f0f", 3
	}
	name := typ + "Rows8VNNI"
	if n == 2 {
		name = typ + "Rows8x2VNNI"
	}
	// Per column: the registers of its activations (q4_0: quants 0-15
	// and 16-31 in each 128-bit lane; q8_0: all 32 in each 256-bit
	// half), the address suffix of its quants (at y + 8·dd) and of its
	// scales and sums (at d + dd, s + dd), the int32 sums of the row
	// groups, the reduced sums and a scratch register, and the float32
	// sums of the eight rows.
	type column struct {
		y          []int
		idx8, idx1 string
		sums       int
		red, tmp   int
		acc        int
	}
	ys := [][]int{{0}, {1}}
	if q4 {
		ys = [][]int{{0, 1}, {22, 23}}
	}
	cols := []column{
		{ys[0], "", "", 4, 6, 7, 13},
		{ys[1], "(R15*8)", "(R15*1)", 16, 20, 21, 29},
	}[:n]

	count, next, outArg := qPrologue(l, name, n)
	l.add("\tMOVL $%s, %s\n\tVPBROADCASTD %s, Z15", mask, next, next)
	l.add("\tMOVQ next+%d(FP), %s", outArg+8, next)
	l.add("\tVMOVDQU32 ·reduceIdx(SB), Z14")
	for _, c := range cols {
		l.add("\tVXORPS Y%d, Y%d, Y%d", c.acc, c.acc, c.acc)
	}
	l.add("\tCMPQ %s, $0\n\tJEQ done", count)
	l.add("\nloop:")
	ahead(l, next, blk)

	if q4 {
		l.add("\t// The block's activations 0-15 and 16-31, in each 128-bit lane.")
		for _, c := range cols {
			l.add("\tVBROADCASTI32X4 (DI)%s, Z%d", c.idx8, c.y[0])
			l.add("\tVBROADCASTI32X4 16(DI)%s, Z%d", c.idx8, c.y[1])
		}
		for g := 0; g < 2; g++ {
			r := vnniRows[4*g : 4*g+4]
			l.add("")
			l.add("\t// Rows %d-%d, one per 128-bit lane: low nibbles in Z2, high in Z3.", 4*g, 4*g+3)
			l.add("\tVMOVDQU 2(%s)(SI*1), X2", r[0])
			for k := 1; k < 4; k++ {
				l.add("\tVINSERTI32X4 $%d, 2(%s)(SI*1), Z2, Z2", k, r[k])
			}
			l.add("\tVPSRLW $4, Z2, Z3\n\tVPANDD Z15, Z2, Z2\n\tVPANDD Z15, Z3, Z3")
			for _, c := range cols {
				s := c.sums + g
				l.add("\tVPXORD Z%d, Z%d, Z%d", s, s, s)
				l.add("\tVPDPBUSD Z%d, Z2, Z%d", c.y[0], s)
				l.add("\tVPDPBUSD Z%d, Z3, Z%d", c.y[1], s)
			}
		}
	} else {
		l.add("\t// The block's 32 activations, in each 256-bit half.")
		for _, c := range cols {
			l.add("\tVBROADCASTI64X4 (DI)%s, Z%d", c.idx8, c.y[0])
		}
		l.add("")
		l.add("\t// Two rows per vector, one per 256-bit half, their quants x biased to")
		l.add("\t// x+128 (unsigned): Σ (x+128)·y in eight int32 lanes per row.")
		for g := 0; g < 4; g++ {
			l.add("\tVMOVDQU 2(%s)(SI*1), Y2", vnniRows[2*g])
			l.add("\tVINSERTI64X4 $1, 2(%s)(SI*1), Z2, Z2", vnniRows[2*g+1])
			l.add("\tVPXORD Z15, Z2, Z2")
			for _, c := range cols {
				s := c.sums + g
				l.add("\tVPXORD Z%d, Z%d, Z%d", s, s, s)
				l.add("\tVPDPBUSD Z%d, Z2, Z%d", c.y[0], s)
			}
		}
		l.add("")
		l.add("\t// Rows 0-3 and 4-7, one per 128-bit lane, four lanes each.")
		for _, c := range cols {
			for h := 0; h < 2; h++ {
				a, b := c.sums+2*h, c.sums+2*h+1
				l.add("\tVSHUFI32X4 $0x88, Z%d, Z%d, Z11", b, a)
				l.add("\tVSHUFI32X4 $0xdd, Z%d, Z%d, Z12", b, a)
				l.add("\tVPADDD Z12, Z11, Z%d", c.sums+h)
			}
		}
	}

	l.add("")
	l.add("\t// Per lane k: row k's sum in element 0, row k+4's in element 1, then")
	l.add("\t// rows 0-7 in the low 256 bits.")
	for _, c := range cols {
		lo, hi := c.sums, c.sums+1
		l.add("\tVPUNPCKLDQ Z%d, Z%d, Z%d", hi, lo, c.red)
		l.add("\tVPUNPCKHDQ Z%d, Z%d, Z%d", hi, lo, c.tmp)
		l.add("\tVPADDD Z%d, Z%d, Z%d", c.tmp, c.red, c.red)
		l.add("\tVPSHUFD $0x4e, Z%d, Z%d", c.red, c.tmp)
		l.add("\tVPADDD Z%d, Z%d, Z%d", c.tmp, c.red, c.red)
		l.add("\tVPERMD Z%d, Z14, Z%d", c.red, c.red)
	}

	l.add("")
	l.add("\t// The rows' f16 scales da, widened; isum = Σ q·y − %d·Σy, as float32;", 1<<bias)
	l.add("\t// acc += isum·(da·db).")
	scales8(l)
	for _, c := range cols {
		l.add("\tVPBROADCASTD (R13)%s, Y7", c.idx1)
		l.add("\tVPSLLD $%d, Y7, Y7", bias)
		l.add("\tVPSUBD Y7, Y%d, Y%d", c.red, c.red)
		l.add("\tVCVTDQ2PS Y%d, Y%d", c.red, c.red)
		l.add("\tVBROADCASTSS (R12)%s, Y9", c.idx1)
		l.add("\tVMULPS Y9, Y8, Y9")
		l.add("\tVMULPS Y9, Y%d, Y%d", c.red, c.red)
		l.add("\tVADDPS Y%d, Y%d, Y%d", c.red, c.acc, c.acc)
	}

	l.add("")
	l.add("\tADDQ $%d, SI\n\tADDQ $32, DI\n\tADDQ $4, R12\n\tADDQ $4, R13", blk)
	l.add("\tDECQ %s\n\tJNZ loop", count)
	l.add("\ndone:")
	l.add("\tMOVQ out+%d(FP), R15", outArg)
	for k, c := range cols {
		l.add("\tVMOVUPS Y%d, %s(R15)", c.acc, off(32*k))
	}
	l.add("\tVZEROUPPER\n\tRET")
}

// qPrologue writes the start of the eight-row kernel name against n = 1
// or 2 activation rows, up to loading its arguments but next, and
// returns where the kernel counts its blocks, next's register and out's
// offset in the arguments (next is the one after it). The registers: n =
// 1 keeps nb in R14 and next in R15; n = 2 keeps dd in R15, next in R14
// and nb in its argument. The kernel's constants go through next's
// register before next is loaded.
func qPrologue(l *lines, name string, n int) (count, next string, outArg int) {
	nbArg, outArg, frame := 32, 40, 56
	count, next = "R14", "R15"
	if n == 2 {
		nbArg, outArg, frame = 40, 48, 64
		count, next = fmt.Sprintf("nb+%d(FP)", nbArg), "R14"
	}
	l.add("")
	if n == 1 {
		l.add("// func %s(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)", name)
	} else {
		l.add("// func %s(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)", name)
	}
	l.add("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	rows8(l)
	l.add("\tMOVQ y+8(FP), DI\n\tMOVQ d+16(FP), R12\n\tMOVQ s+24(FP), R13")
	if n == 1 {
		l.add("\tMOVQ nb+%d(FP), R14", nbArg)
	} else {
		l.add("\tMOVQ dd+32(FP), R15")
	}
	l.add("\tXORQ SI, SI")
	return count, next, outArg
}

// q8Rows8x4T writes q8_0Rows8x4TVNNI: the eight q8_0 rows against four
// activation rows interleaved by block (128 bytes of quants, four scales
// and four sums a block), the weights transposed in registers.
func q8Rows8x4T(l *lines) {
	l.add(`
// func q8_0Rows8x4TVNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[32]float32, next unsafe.Pointer)
TEXT ·q8_0Rows8x4TVNNI(SB), NOSPLIT, $0-56`)
	rows8(l)
	l.add("\tMOVQ y+8(FP), DI\n\tMOVQ d+16(FP), R12\n\tMOVQ s+24(FP), R13\n\tMOVQ next+48(FP), R14")
	l.add("\tXORQ SI, SI")
	l.add("\tMOVL $0x80808080, R15\n\tVPBROADCASTD R15, Y15")
	for c := 0; c < 4; c++ {
		l.add("\tVPXORD Y%d, Y%d, Y%d", 24+c, 24+c, 24+c)
	}
	l.add("\tCMPQ nb+32(FP), $0\n\tJEQ done")
	l.add("\nloop:")
	ahead(l, "R14", 34)

	l.add("\t// The block's quants of the eight rows, made unsigned (x+128).")
	for k, r := range vnniRows {
		l.add("\tVMOVDQU 2(%s)(SI*1), Y%d", r, k)
	}
	for k := range vnniRows {
		l.add("\tVPXOR Y15, Y%d, Y%d", k, k)
	}
	l.add("")
	l.add("\t// Transposed: Y16+g holds the g-th four quants of rows 0-7, one")
	l.add("\t// row a lane.")
	for k := 0; k < 4; k++ {
		l.add("\tVPUNPCKLDQ Y%d, Y%d, Y%d", 2*k+1, 2*k, 16+2*k)
		l.add("\tVPUNPCKHDQ Y%d, Y%d, Y%d", 2*k+1, 2*k, 17+2*k)
	}
	for h := 0; h < 2; h++ {
		for m := 0; m < 2; m++ {
			a, b := 16+4*h+m, 18+4*h+m
			l.add("\tVPUNPCKLQDQ Y%d, Y%d, Y%d", b, a, 4*h+2*m)
			l.add("\tVPUNPCKHQDQ Y%d, Y%d, Y%d", b, a, 4*h+2*m+1)
		}
	}
	for m := 0; m < 4; m++ {
		l.add("\tVSHUFI64X2 $0, Y%d, Y%d, Y%d", 4+m, m, 16+m)
		l.add("\tVSHUFI64X2 $3, Y%d, Y%d, Y%d", 4+m, m, 20+m)
	}
	l.add("")
	l.add("\t// The rows' scales of the block.")
	scales8(l)

	// Column c: its quants at 32c(DI) against the transposed rows (two
	// chains of VPDPBUSD, four quants broadcast each), less 128·Σy
	// (4c(R13)), then acc += float(Σ)·(Y8·d) with d at 4c(R12).
	for c := 0; c < 4; c++ {
		l.add("")
		l.add("\t// Column %d.", c)
		l.add("\tVPXORD Y9, Y9, Y9\n\tVPXORD Y10, Y10, Y10")
		for g := 0; g < 8; g++ {
			l.add("\tVPDPBUSD.BCST %s(DI), Y%d, Y%d", off(32*c+4*g), 16+g, 9+g%2)
		}
		l.add("\tVPADDD Y10, Y9, Y9")
		l.add("\tVPBROADCASTD %s(R13), Y11", off(4*c))
		l.add("\tVPSLLD $7, Y11, Y11\n\tVPSUBD Y11, Y9, Y9\n\tVCVTDQ2PS Y9, Y9")
		l.add("\tVBROADCASTSS %s(R12), Y11", off(4*c))
		l.add("\tVMULPS Y11, Y8, Y11\n\tVMULPS Y11, Y9, Y9")
		l.add("\tVADDPS Y9, Y%d, Y%d", 24+c, 24+c)
	}

	l.add("")
	l.add("\tADDQ $34, SI\n\tADDQ $128, DI\n\tADDQ $16, R12\n\tADDQ $16, R13")
	l.add("\tDECQ nb+32(FP)\n\tJNZ loop")
	l.add("\ndone:")
	l.add("\tMOVQ out+40(FP), R15")
	for c := 0; c < 4; c++ {
		l.add("\tVMOVUPS Y%d, %s(R15)", 24+c, off(32*c))
	}
	l.add("\tVZEROUPPER\n\tRET")
}

// align pads the mnemonics of each run of instruction lines (a tab, then
// neither a comment nor a blank) to one width, as gofmt aligns comments.
func align(text string) string {
	ls := strings.Split(text, "\n")
	isInstr := func(s string) bool {
		return strings.HasPrefix(s, "\t") && !strings.HasPrefix(s, "\t//") && strings.Contains(s, " ")
	}
	for i := 0; i < len(ls); {
		if !isInstr(ls[i]) {
			i++
			continue
		}
		j, w := i, 0
		for ; j < len(ls) && isInstr(ls[j]); j++ {
			w = max(w, strings.Index(ls[j], " "))
		}
		for k := i; k < j; k++ {
			op, args, _ := strings.Cut(ls[k], " ")
			ls[k] = op + strings.Repeat(" ", w-len(op)+1) + args
		}
		i = j
	}
	return strings.Join(ls, "\n")
}
