package ops

import (
	"encoding/binary"
	"unsafe"
)

// Eight-row tiles of the quantized MulMat (q8_0 and q4_0 weights with the
// vector kernels, mulmat_tile_simd_amd64.go): eight weight rows against
// one activation row per call, the rows' f16 scales gathered once per
// tile of rows and reused for every column.

// actPad is how many values the activation scale and sum arrays have
// after their last block, for the kernels' four-lane loads.
const actPad = 4

// has8R reports whether dot8R has a kernel for t.
func (act *actRows) has8R(t Type) bool {
	return act.vec && (t == Q8_0 || t == Q4_0) && cap(act.d)-len(act.d) >= actPad && cap(act.s)-len(act.s) >= actPad
}

// rows8 holds eight weight rows of a quantized type and their block
// scales, widened to float32 bits, for dot8R.
type rows8 struct {
	p  [8]unsafe.Pointer
	da []uint32 // block j of row r at da[8j+r]
}

// load sets r to rows (of t, nb blocks each, as RowBytes returns them).
func (r *rows8) load(t Type, rows *[8][]byte, nb int) {
	bsz := t.TypeSize()
	if cap(r.da) < 8*nb {
		r.da = make([]uint32, 8*nb)
	}
	r.da = r.da[:8*nb]
	tab := (*[1 << 16]uint32)(unsafe.Pointer(f16ToF32Table()))
	for i, row := range rows {
		row = row[:nb*bsz]
		r.p[i] = unsafe.Pointer(&row[0])
		da := r.da[i:]
		for j := 0; j < nb; j++ {
			da[8*j] = tab[binary.LittleEndian.Uint16(row[j*bsz:])]
		}
	}
}

// dot8R is dot1 of the eight rows of w with activation row r (only when
// has8R).
func (act *actRows) dot8R(t Type, w *rows8, r int) [8]float32 {
	k := act.k
	nb := k / QK8_0
	if len(w.da) != 8*nb || nb == 0 {
		panic("ops: dot8R: rows not loaded for this k")
	}
	y := act.q[r*k : (r+1)*k]
	d := act.d[r*nb : (r+1)*nb+actPad-1]
	if t == Q8_0 {
		return q8_0Rows8Vec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&w.da[0]), nb)
	}
	s := act.s[r*nb : (r+1)*nb+actPad-1]
	return q4_0Rows8Vec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), unsafe.Pointer(&w.da[0]), nb)
}
