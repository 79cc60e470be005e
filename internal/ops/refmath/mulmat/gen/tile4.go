package gen

import (
	"fmt"
	"strings"
)

const tile4Header = `//go:build goexperiment.simd && amd64

#include "textflag.h"

// The register tiles of the f32 and f16 MulMat on CPUs with AVX-512
// (mulmat_ftile.go, mulmat_f16c_amd64.go; written by gen/tile4.go): four
// weight rows (f32 at w, or f16 at p, widened by VCVTPH2PS as they are
// loaded) against
// one to four activation rows (x) over nv values, a multiple of 8. The
// sums of (row i, column j), eight lanes each, are the float32s at
// acc + i·rs + 32·j; they stay in Y16-Y31 (AVX-512VL registers, which the
// compiler does not use) while the loop runs, each s = s + w·x by a
// multiply and a separate add, lane by lane, as the archsimd tiles do. A
// step's four weight loads feed up to 128 products, so the activations of
// a column group stay in L1 while the tile's weight rows stream from L2,
// where the 2x3 archsimd tile was bound by L2 bandwidth.
`

// tile4File is mulmat_tile4_amd64.s: the f32 tiles 4x2-4x4 and the f16
// ones 4x3-4x4.
func tile4File() string {
	out := tile4Header
	for _, nc := range []int{4, 3, 2} {
		out += tile4(fmt.Sprintf("f32Tile4x%d", nc), false, nc)
	}
	for _, nc := range []int{4, 3} {
		out += tile4(fmt.Sprintf("f16Tile4x%dF16C", nc), true, nc)
	}
	return out
}

// tile4 writes the tile name: four weight rows (f16 or f32) against nc
// f32 activation rows, eight lanes a step, a multiply and an add.
func tile4(name string, f16 bool, nc int) string {
	sum := func(i, j int) string { return fmt.Sprintf("Y%d", 16+4*i+j) }
	rows := []string{"(DI)", "(DI)(SI*1)", "(DI)(SI*2)", "(R15)"}
	var l lines
	ls := func(load bool) {
		for i := 0; i < 4; i++ {
			for j := 0; j < nc; j++ {
				addr := off(32*j) + rows[i]
				if load {
					l.add("\tVMOVUPS %s, %s", addr, sum(i, j))
				} else {
					l.add("\tVMOVUPS %s, %s", sum(i, j), addr)
				}
			}
		}
	}
	wname, shift, xscale, step := "w", 2, 1, 32
	if f16 {
		wname, shift, xscale, step = "p", 1, 2, 16
	}
	wr := []string{"R8", "R9", "R10", "R11"}
	xr := []string{"R12", "R13", "BX", "DX"}[:nc]
	tilePrologue(&l, name, wname, wr, xr)
	ls(true)
	lbl := strings.ToLower(name)
	l.add("\tSHLQ $%d, CX\n\tXORQ AX, AX\n\n%s:\n\tCMPQ AX, CX\n\tJGE  %sdone", shift, lbl, lbl)
	for i, r := range wr {
		if f16 {
			l.add("\tVCVTPH2PS (%s)(AX*1), Y%d", r, i)
		} else {
			l.add("\tVMOVUPS (%s)(AX*1), Y%d", r, i)
		}
	}
	for j, r := range xr {
		l.add("\tVMOVUPS (%s)(AX*%d), Y%d", r, xscale, 4+j)
	}
	// The products go through Y8-Y15 in turn.
	t := 8
	for i := 0; i < 4; i++ {
		for j := 0; j < nc; j++ {
			l.add("\tVMULPS Y%d, Y%d, Y%d", 4+j, i, t)
			l.add("\tVADDPS Y%d, %s, %s", t, sum(i, j), sum(i, j))
			if t++; t == 16 {
				t = 8
			}
		}
	}
	l.add("\tADDQ $%d, AX\n\tJMP  %s\n\n%sdone:", step, lbl, lbl)
	ls(false)
	l.add("\tVZEROUPPER\n\tRET")
	return l.String()
}
