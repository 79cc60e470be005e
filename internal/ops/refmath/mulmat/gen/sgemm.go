package gen

import (
	"fmt"
	"strings"
)

const sgemmHeader = `#include "textflag.h"

// The register tiles of ggml's tinyBLAS order (mulmat_sgemm.go; written by
// gen/sgemm.go): nr weight rows (f32 at w, or f16 at p, widened by
// VCVTPH2PS as they are loaded) against nc activation rows (x) over nv
// values, a multiple of 16. The sum of (row i, column j) is 16 float32
// lanes at acc + i·rs + 64·j, lane l summing the products of the elements
// ≡ l (mod 16) in order, each s = fma(w, x, s) (VFMADD231PS, one rounding).
// With AVX-512 (sgemm*Tile4x*) a sum is one Z register, Z16-Z31, which
// the compiler does not use; with AVX2 and FMA (sgemm*TileY4x*) each half
// of a sum, lanes 0-7 and 8-15, is a Y register in its own pass over each
// block of values: the same operations lane by lane, the same bits.
// The AVX-512 tiles of one to three columns take in x[3] the next four
// weight rows (contiguous in memory; nil for none) and prefetch them to
// L2 as one run while they read their own (sgemmTile). sgemmF16HTile*
// take f16 activations too, widened by VCVTPH2PS as they are loaded:
// the same values as f32 activations rounded to f16, half the bytes.
`

// sgemmFile is mulmat_sgemm_amd64.s: the 4x1-4x4 AVX-512 tiles with f32,
// f16, and f16 weights and activations, and the 4x1-4x3 AVX2 tiles with
// f32 and f16 weights.
func sgemmFile() string {
	out := sgemmHeader
	for _, nc := range []int{4, 3, 2, 1} {
		out += sgemmTile(fmt.Sprintf("sgemmF32Tile4x%d", nc), false, 4, nc, true, false)
		out += sgemmTile(fmt.Sprintf("sgemmF16Tile4x%d", nc), true, 4, nc, true, false)
		out += sgemmTile(fmt.Sprintf("sgemmF16HTile4x%d", nc), true, 4, nc, true, true)
	}
	for _, nc := range []int{3, 2, 1} {
		out += sgemmTileY(fmt.Sprintf("sgemmF32TileY4x%d", nc), false, nc)
		out += sgemmTileY(fmt.Sprintf("sgemmF16TileY4x%d", nc), true, nc)
	}
	return out
}

// sgemmYBlock is how many values the AVX2 tiles take a block: both
// halves of the sums pass over a block in turn, which stays in L1 (4·2
// KB of f32 weights and 3·2 KB of activations).
const sgemmYBlock = 512

// sgemmTileY writes the AVX2 tile name: four weight rows (f16 or f32)
// against nc ≤ 3 f32 activation rows. A 16-lane sum is two independent
// halves (lanes 0-7 and 8-15, the elements ≡ 0-7 and 8-15 mod 16), so
// the tile runs each block of sgemmYBlock values twice, once per half,
// with the 4·nc sums of that half in Y4-Y15, the columns' eight values
// in Y1-Y3 and one row's in Y0: each lane takes the FMAs of the AVX-512
// tiles' lane in the same order, the same bits, with tinyBLAS's 4x3
// register tile of 8-lane vectors (16 YMM registers). Each pass
// prefetches to L1 the next block of two of the four rows (the first
// pass rows 0-1, the second rows 2-3), a cache line of each a step, so
// that the memory streams on in both passes rather than only in the
// first (the second reads its block from L1). Forced to these tiles on
// a Sapphire Rapids, f32 n = 2 21 -> 18 cpu-ms, f16 n = 2 12 -> 10.5.
func sgemmTileY(name string, f16 bool, nc int) string {
	esz, wname, xscale := 4, "w", 1
	if f16 {
		esz, wname, xscale = 2, "p", 2
	}
	wr := []string{"R8", "R9", "R10", "R11"}
	xr := []string{"R12", "R13", "BX"}[:nc]
	rows := []string{"(DI)", "(DI)(SI*1)", "(DI)(SI*2)", "(R15)"}
	acc := func(i, j int) string { return fmt.Sprintf("Y%d", 4+i*nc+j) }
	var l lines
	tilePrologue(&l, name, wname, wr, xr)
	// AX and R14 count weight bytes; DX is the end of the block.
	l.add("\tSHLQ $%d, CX\n\tXORQ AX, AX", esz/2)
	lbl := strings.ToLower(name)
	l.add("\n%sblock:\n\tCMPQ AX, CX\n\tJGE  %sdone", lbl, lbl)
	l.add("\tLEAQ %d(AX), DX\n\tCMPQ DX, CX\n\tCMOVQGT CX, DX", sgemmYBlock*esz)
	for h := 0; h < 2; h++ {
		l.add("\t// Lanes %d-%d of the sums.", 8*h, 8*h+7)
		for i := range 4 {
			for j := range nc {
				l.add("\tVMOVUPS %s%s, %s", off(64*j+32*h), rows[i], acc(i, j))
			}
		}
		l.add("\tMOVQ AX, R14")
		step := fmt.Sprintf("%sh%d", lbl, h)
		l.add("\n%s:", step)
		for _, r := range wr[2*h : 2*h+2] {
			l.add("\tPREFETCHT0 %d(%s)(R14*1)", sgemmYBlock*esz, r)
		}
		for j, r := range xr {
			l.add("\tVMOVUPS %s(%s)(R14*%d), Y%d", off(32*h), r, xscale, 1+j)
		}
		for i, r := range wr {
			if f16 {
				l.add("\tVCVTPH2PS %s(%s)(R14*1), Y0", off(16*h), r)
			} else {
				l.add("\tVMOVUPS %s(%s)(R14*1), Y0", off(32*h), r)
			}
			for j := range nc {
				l.add("\tVFMADD231PS Y%d, Y0, %s", 1+j, acc(i, j))
			}
		}
		l.add("\tADDQ $%d, R14\n\tCMPQ R14, DX\n\tJLT  %s", 16*esz, step)
		for i := range 4 {
			for j := range nc {
				l.add("\tVMOVUPS %s, %s%s", acc(i, j), off(64*j+32*h), rows[i])
			}
		}
	}
	l.add("\tMOVQ DX, AX\n\tJMP  %sblock", lbl)
	l.add("\n%sdone:\n\tVZEROUPPER\n\tRET", lbl)
	return l.String()
}

// sgemm is one tile's shape and registers.
type sgemm struct {
	f16, xh bool     // f16 weights; f16 activations too
	nr, nc  int      // weight rows, activation rows
	reg     string   // "Z" (AVX-512) or "Y" (AVX2)
	halves  int      // vectors per 16-lane sum
	vb      int      // bytes of float32 a vector holds
	wb      int      // weight bytes a vector takes
	accbase int      // the first sum register
	wr, xr  []string // the weight and activation row pointers
}

// acc is the register of the sum of (row i, column j), lanes 8h to 8h+7
// (AVX2) or all 16 (AVX-512, h = 0).
func (g *sgemm) acc(i, j, h int) string {
	return fmt.Sprintf("%s%d", g.reg, g.accbase+(i*g.nc+j)*g.halves+h)
}

// sgemmTile writes the tile name: nr weight rows (f16 or f32) against nc
// activation rows (f16 if xh, else f32), with Z registers if zmm, else Y.
func sgemmTile(name string, f16 bool, nr, nc int, zmm, xh bool) string {
	g := &sgemm{f16: f16, xh: xh, nr: nr, nc: nc, reg: "Y", halves: 2, vb: 32, accbase: 8}
	if zmm {
		g.reg, g.halves, g.vb, g.accbase = "Z", 1, 64, 16
	}
	g.wb = g.vb
	if f16 {
		g.wb = g.vb / 2
	}
	g.wr = []string{"R8", "R9", "R10", "R11"}[:nr]
	g.xr = []string{"R12", "R13", "BX", "DX"}[:nc]
	var l lines
	rows := []string{"(DI)", "(DI)(SI*1)", "(DI)(SI*2)", "(R15)"}
	ls := func(load bool) {
		for i := 0; i < nr; i++ {
			for j := 0; j < nc; j++ {
				for h := 0; h < g.halves; h++ {
					addr := off(64*j+32*h) + rows[i]
					if load {
						l.add("\tVMOVUPS %s, %s", addr, g.acc(i, j, h))
					} else {
						l.add("\tVMOVUPS %s, %s", g.acc(i, j, h), addr)
					}
				}
			}
		}
	}
	wname := "w"
	if f16 {
		wname = "p"
	}
	tilePrologue(&l, name, wname, g.wr, g.xr)
	ls(true)
	lbl := strings.ToLower(name)
	// AX counts weight bytes: nv values are 4·nv (f32) or 2·nv (f16) bytes.
	shift := 2
	if f16 {
		shift = 1
	}
	l.add("\tSHLQ $%d, CX\n\tXORQ AX, AX", shift)
	// The AVX-512 tiles with a column to spare take in x[3] the next four
	// rows (contiguous, or nil) and prefetch them to L2 as one run, 4·wb
	// bytes a step, while they read their own: see sgemmTile.
	if zmm && nc < 4 {
		l.add("\tMOVQ x+8(FP), DX\n\tMOVQ 24(DX), DX\n\tTESTQ DX, DX\n\tJZ   %s", lbl)
		var pf []string
		for o := 0; o < 4*g.wb; o += 64 {
			pf = append(pf, fmt.Sprintf("\tPREFETCHT1 %s(DX)(AX*4)", off(o)))
		}
		g.step(&l, lbl+"pf", lbl+"done", pf)
	}
	g.step(&l, lbl, lbl+"done", nil)
	l.add("\n%sdone:", lbl)
	ls(false)
	l.add("\tVZEROUPPER\n\tRET")
	return l.String()
}

// step writes the loop over nv: one 16-value step of every row and
// column, after the prefetches pf; with xh the activations are f16 too,
// widened by VCVTPH2PS as they are loaded (two bytes a value, as the f16
// weights).
func (g *sgemm) step(l *lines, lbl, done string, pf []string) {
	l.add("\n%s:\n\tCMPQ AX, CX\n\tJGE  %s", lbl, done)
	for _, p := range pf {
		l.add("%s", p)
	}
	xscale := 1
	if g.f16 {
		xscale = 2
	}
	for h := 0; h < g.halves; h++ {
		for i, r := range g.wr {
			if g.f16 {
				l.add("\tVCVTPH2PS %s(%s)(AX*1), %s%d", off(h*g.wb), r, g.reg, i)
			} else {
				l.add("\tVMOVUPS %s(%s)(AX*1), %s%d", off(h*g.wb), r, g.reg, i)
			}
		}
		for j, r := range g.xr {
			if g.xh {
				l.add("\tVCVTPH2PS %s(%s)(AX*1), %s%d", off(h*g.wb), r, g.reg, 4+j)
				continue
			}
			l.add("\tVMOVUPS %s(%s)(AX*%d), %s%d", off(h*g.vb), r, xscale, g.reg, 4+j)
		}
		for i := 0; i < g.nr; i++ {
			for j := 0; j < g.nc; j++ {
				l.add("\tVFMADD231PS %s%d, %s%d, %s", g.reg, 4+j, g.reg, i, g.acc(i, j, h))
			}
		}
	}
	l.add("\tADDQ $%d, AX\n\tJMP  %s", g.halves*g.wb, lbl)
}

// tilePrologue writes the start of the register tile name (weights
// wname, w or p): its signature, the weight and activation row pointers
// into wr and xr, acc in DI, rs in SI, nv in CX and the fourth row's sums
// at R15.
func tilePrologue(l *lines, name, wname string, wr, xr []string) {
	l.add("\n// func %s(%s, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)", name, wname)
	l.add("TEXT ·%s(SB), NOSPLIT, $0-40", name)
	l.add("\tMOVQ %s+0(FP), AX", wname)
	for k, r := range wr {
		l.add("\tMOVQ %d(AX), %s", 8*k, r)
	}
	l.add("\tMOVQ x+8(FP), AX")
	for k, r := range xr {
		l.add("\tMOVQ %d(AX), %s", 8*k, r)
	}
	l.add("\tMOVQ acc+16(FP), DI\n\tMOVQ rs+24(FP), SI\n\tMOVQ nv+32(FP), CX\n\tLEAQ (DI)(SI*2), R15\n\tADDQ SI, R15")
}
