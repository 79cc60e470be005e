package gen

import "strings"

const qavx2Header = `#include "textflag.h"

// The quantized MulMat's kernels by AVX2 and F16C (mulmat_qavx2_amd64.go),
// for CPUs without AVX-512 VNNI: the VNNI kernels' arguments and float32
// steps (mulmat_vnni_amd64.s), with the int32 sum of each block by
// VPMADDUBSW (unsigned by signed bytes, adjacent pairs summed into int16)
// and VPMADDWD against ones (pairs of int16 into int32). VPMADDUBSW
// saturates past 32767, so the q8_0 quants x go in as |x| (at most 128)
// against y with x's sign (VPSIGNB; |y| ≤ 127): a pair is at most
// 2·128·127 = 32512, and Σ |x|·(y·sign x) = Σ x·y. The q4_0 nibbles
// (0-15) go in as they are, and 8·Σy (s) is taken from the sum, as in the
// VNNI kernels. Each row's eight int32 lanes are summed by VPHADDD across
// the eight rows, into row r's sum in lane r. Exact integers, then the
// float32 operations of the scalar dotQ4_0 and dotQ8_0, lane by lane, in
// order: bit-identical results.
`

// qavx2File is mulmat_qavx2_amd64.s.
func qavx2File() string {
	var l lines
	l.add("%s", strings.TrimSuffix(qavx2Header, "\n"))
	for _, q4 := range []bool{true, false} {
		for _, n := range []int{1, 2} {
			qRows8AVX2(&l, q4, n)
		}
	}
	return align(l.String())
}

// qRows8AVX2 writes q4_0Rows8AVX2, q8_0Rows8AVX2 (n = 1),
// q4_0Rows8x2AVX2 or q8_0Rows8x2AVX2 (n = 2): qRows8's kernels for AVX2.
func qRows8AVX2(l *lines, q4 bool, n int) {
	typ, blk := "q8_0", 34
	if q4 {
		typ, blk = "q4_0", 18
	}
	name := typ + "Rows8AVX2"
	if n == 2 {
		name = typ + "Rows8x2AVX2"
	}
	// Per column: its 32 activations (y), the address suffix of its
	// quants (at y + 8·dd) and of its scales and sums (at d + dd, s +
	// dd), the row sums being reduced (p, q, h; the block's eight sums
	// end in p) and the eight rows' float32 sums (acc). Y0 holds a
	// row's quants, Y1 (q8_0) their absolute values, Y2 a row's sums for
	// an odd row, Y8 the scales, Y14 (q4_0) the nibble mask, Y15 int16
	// ones.
	type column struct {
		y          int
		idx8, idx1 string
		p, q, h    int
		acc        int
	}
	cols := []column{
		{12, "", "", 3, 4, 5, 10},
		{13, "(R15*8)", "(R15*1)", 6, 7, 9, 11},
	}[:n]

	count, next, outArg := qPrologue(l, name, n)
	l.add("\tMOVL $0x00010001, %s\n\tVMOVD %s, X15\n\tVPBROADCASTD X15, Y15", next, next)
	if q4 {
		l.add("\tMOVL $0x0f0f0f0f, %s\n\tVMOVD %s, X14\n\tVPBROADCASTD X14, Y14", next, next)
	}
	l.add("\tMOVQ next+%d(FP), %s", outArg+8, next)
	for _, c := range cols {
		l.add("\tVXORPS Y%d, Y%d, Y%d", c.acc, c.acc, c.acc)
	}
	l.add("\tCMPQ %s, $0\n\tJEQ done", count)
	l.add("\nloop:")
	ahead(l, next, blk)

	l.add("\t// The block's 32 activations of each column.")
	for _, c := range cols {
		l.add("\tVMOVDQU (DI)%s, Y%d", c.idx8, c.y)
	}
	for r, row := range vnniRows {
		l.add("")
		if q4 {
			l.add("\t// Row %d: its nibbles in element order (low nibbles, then high).", r)
			l.add("\tVMOVDQU 2(%s)(SI*1), X0", row)
			l.add("\tVPSRLW $4, X0, X1\n\tVINSERTI128 $1, X1, Y0, Y0\n\tVPAND Y14, Y0, Y0")
		} else {
			l.add("\t// Row %d: its quants and their absolute values.", r)
			l.add("\tVMOVDQU 2(%s)(SI*1), Y0", row)
			l.add("\tVPABSB Y0, Y1")
		}
		for _, c := range cols {
			dst := c.p
			if r%2 == 1 {
				dst = 2
			}
			if q4 {
				l.add("\tVPMADDUBSW Y%d, Y0, Y%d", c.y, dst)
			} else {
				l.add("\tVPSIGNB Y0, Y%d, Y%d", c.y, dst)
				l.add("\tVPMADDUBSW Y%d, Y1, Y%d", dst, dst)
			}
			l.add("\tVPMADDWD Y15, Y%d, Y%d", dst, dst)
			// Rows 0-3 end in h, rows 4-7 in q: per 128-bit half, row
			// j's partial sum in lane j mod 4.
			switch r {
			case 1, 5:
				l.add("\tVPHADDD Y2, Y%d, Y%d", c.p, c.q)
			case 3:
				l.add("\tVPHADDD Y2, Y%d, Y%d\n\tVPHADDD Y%d, Y%d, Y%d", c.p, c.p, c.p, c.q, c.h)
			case 7:
				l.add("\tVPHADDD Y2, Y%d, Y%d\n\tVPHADDD Y%d, Y%d, Y%d", c.p, c.p, c.p, c.q, c.q)
			}
		}
	}
	l.add("")
	l.add("\t// The halves' sums added: row r's block sum in lane r.")
	for _, c := range cols {
		l.add("\tVPERM2I128 $0x20, Y%d, Y%d, Y%d", c.q, c.h, c.p)
		l.add("\tVPERM2I128 $0x31, Y%d, Y%d, Y%d", c.q, c.h, c.q)
		l.add("\tVPADDD Y%d, Y%d, Y%d", c.q, c.p, c.p)
	}

	l.add("")
	if q4 {
		l.add("\t// The rows' f16 scales da, widened; isum = Σ q·y − 8·Σy, as float32;")
	} else {
		l.add("\t// The rows' f16 scales da, widened; isum as float32;")
	}
	l.add("\t// acc += isum·(da·db).")
	scales8(l)
	for _, c := range cols {
		if q4 {
			l.add("\tVPBROADCASTD (R13)%s, Y2", c.idx1)
			l.add("\tVPSLLD $3, Y2, Y2")
			l.add("\tVPSUBD Y2, Y%d, Y%d", c.p, c.p)
		}
		l.add("\tVCVTDQ2PS Y%d, Y%d", c.p, c.p)
		l.add("\tVBROADCASTSS (R12)%s, Y2", c.idx1)
		l.add("\tVMULPS Y2, Y8, Y2")
		l.add("\tVMULPS Y2, Y%d, Y%d", c.p, c.p)
		l.add("\tVADDPS Y%d, Y%d, Y%d", c.p, c.acc, c.acc)
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
