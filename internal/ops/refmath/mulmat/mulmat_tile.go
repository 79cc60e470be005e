package mulmat

import (
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// Eight-row tiles of the quantized MulMat (q8_0 and q4_0 weights with the
// vector kernels, mulmat_tile_simd_amd64.go, or the VNNI assembly alone,
// mulmat_vnni_amd64.go): eight weight rows against one activation row per
// call, the rows' f16 scales gathered once per tile of rows and reused for
// every column (the VNNI kernels widen them in each call).

// actPad is how many values the activation scale and sum arrays have
// after their last block, for the kernels' four-lane loads.
const actPad = 4

// fusedMaxCols: groups of rows used by fewer columns than this take the
// fused kernels, which widen the scales in each call instead of once.
const fusedMaxCols = 3

// qasm reports whether the CPU runs an assembly form of the eight-row
// kernels: AVX-512 VNNI, AVX2 (mulmat_qavx2_amd64.go), or arm64's
// (mulmat_qneon_arm64.go).
func (ks *Kernels) qasm() bool { return ks.VNNI || ks.QAVX2 || ks.NEON }

// has8R reports whether dot8R has a kernel for t: the vector kernels, or
// the assembly alone (asmAlone, qasm; act.q is there for either).
func (act *actRows) has8R(t ops.Type) bool {
	ks := act.ks
	return (act.vec || act.q != nil && ks.qasm()) && (t == ops.Q8_0 || t == ops.Q4_0) &&
		cap(act.d)-len(act.d) >= actPad && cap(act.s)-len(act.s) >= actPad
}

// rows8 holds eight weight rows of a quantized type and their block
// scales, widened to float32, for dot8R.
type rows8 struct {
	p     [8]unsafe.Pointer
	fused bool           // no scales gathered: dot8R uses the fused kernels
	next  unsafe.Pointer // the first of the eight rows to prefetch (setNext), or nil
	sc    []uint16       // the f16 scales, block j of row r at sc[8j+r]
	da    []float32      // sc widened
}

// setRows sets r to rows (of t, nb blocks each, as RowBytes returns
// them) without gathering their scales, for the fused kernels.
func (r *rows8) setRows(t ops.Type, rows *[8][]byte, nb int) {
	bsz := t.TypeSize()
	for i, row := range rows {
		row = row[:nb*bsz]
		r.p[i] = unsafe.Pointer(&row[0])
	}
	r.fused = true
}

// setNext sets the rows the VNNI kernels prefetch while they run r's:
// the eight rows of rowBytes each from next on, if they follow each other
// in memory (stride == rowBytes), else none.
func (r *rows8) setNext(next unsafe.Pointer, stride, rowBytes int) {
	r.next = nil
	if stride == rowBytes {
		r.next = next
	}
}

// load sets r to rows (of t, nb blocks each, as RowBytes returns them).
// Only the vector build calls it (on little-endian amd64), so the scales
// are read in native byte order.
func (r *rows8) load(ks *Kernels, t ops.Type, rows *[8][]byte, nb int) {
	bsz := t.TypeSize()
	if cap(r.da) < 8*nb {
		r.sc = make([]uint16, 8*nb)
		r.da = make([]float32, 8*nb)
	}
	r.sc, r.da = r.sc[:8*nb], r.da[:8*nb]
	r.fused = false
	for i, row := range rows {
		row = row[:nb*bsz]
		r.p[i] = unsafe.Pointer(&row[0])
	}
	p0, p1, p2, p3, p4, p5, p6, p7 := r.p[0], r.p[1], r.p[2], r.p[3], r.p[4], r.p[5], r.p[6], r.p[7]
	h := func(p unsafe.Pointer, o int) uint64 { return uint64(*(*uint16)(unsafe.Add(p, o))) }
	for j := 0; j < nb; j++ {
		// Two 64-bit stores per block rather than eight 16-bit ones.
		o := j * bsz
		s := (*[2]uint64)(unsafe.Pointer(&r.sc[8*j : 8*j+8][0]))
		s[0] = h(p0, o) | h(p1, o)<<16 | h(p2, o)<<32 | h(p3, o)<<48
		s[1] = h(p4, o) | h(p5, o)<<16 | h(p6, o)<<32 | h(p7, o)<<48
	}
	ks.widenF16sVec(r.sc, r.da)
}

// dot8R is dot1 of the eight rows of w with activation row r (only when
// has8R).
func (act *actRows) dot8R(t ops.Type, w *rows8, r int) [8]float32 {
	ks := act.ks
	k := act.k
	nb := k / codec.QK8_0
	if (!w.fused && len(w.da) != 8*nb) || nb == 0 {
		panic("ops: dot8R: rows not loaded for this k")
	}
	y := act.q[r*k : (r+1)*k]
	d := act.d[r*nb : (r+1)*nb+actPad-1]
	if ks.NEON { // (w fused: fused8)
		return ks.dot8RNEON(t, w, y, d, act.s[r*nb:(r+1)*nb+actPad-1], nb)
	}
	if w.fused {
		if t == ops.Q8_0 {
			if ks.VNNI {
				var out [8]float32
				s := act.s[r*nb : (r+1)*nb+actPad-1]
				q8_0Rows8VNNI(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), nb, &out, w.next)
				return out
			}
			if ks.QAVX2 {
				var out [8]float32
				s := act.s[r*nb : (r+1)*nb+actPad-1]
				q8_0Rows8AVX2(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), nb, &out, w.next)
				return out
			}
			return q8_0Rows8FusedVec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), nb)
		}
		s := act.s[r*nb : (r+1)*nb+actPad-1]
		if ks.VNNI {
			var out [8]float32
			q4_0Rows8VNNI(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), nb, &out, w.next)
			return out
		}
		if ks.QAVX2 {
			var out [8]float32
			q4_0Rows8AVX2(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), nb, &out, w.next)
			return out
		}
		if ks.Vec512 {
			return q4_0Rows8Fused512(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), nb)
		}
		return q4_0Rows8FusedVec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), nb)
	}
	if t == ops.Q8_0 {
		return q8_0Rows8Vec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&w.da[0]), nb)
	}
	s := act.s[r*nb : (r+1)*nb+actPad-1]
	return q4_0Rows8Vec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), unsafe.Pointer(&w.da[0]), nb)
}

// has8R2 reports whether dot8R2 has a kernel for w (of type t).
func (act *actRows) has8R2(t ops.Type, w *rows8) bool {
	return (t == ops.Q8_0 || t == ops.Q4_0) && w.fused
}

// fused8 reports whether groups of eight rows used by n columns take the
// fused kernels (rows8.setRows) rather than gathered scales (rows8.load):
// for few columns, or always with the assembly kernels (qasm), which
// widen the scales for less than the archsimd kernels' integer work per
// column.
func (ks *Kernels) fused8(n int) bool { return n < fusedMaxCols || ks.qasm() }

// dot8R2 is dot8R of w (of type t) with activation rows r and r2 at once
// (only when has8R2).
func (act *actRows) dot8R2(t ops.Type, w *rows8, r, r2 int) (out, out2 [8]float32) {
	ks := act.ks
	k := act.k
	nb := k / codec.QK8_0
	if !w.fused || nb == 0 {
		panic("ops: dot8R2: rows not set for the fused kernels")
	}
	y, y2 := act.q[r*k:(r+1)*k], act.q[r2*k:(r2+1)*k]
	d, d2 := act.d[r*nb:(r+1)*nb+actPad-1], act.d[r2*nb:(r2+1)*nb+actPad-1]
	if ks.qasm() {
		// The second row's quants, scales and sums by their offsets from
		// the first's, in the same arrays (negative offsets wrap); the
		// kernels take the quants' as eight times the others'.
		s := act.s[r*nb : (r+1)*nb+actPad-1]
		dy := uintptr(unsafe.Pointer(&y2[0])) - uintptr(unsafe.Pointer(&y[0]))
		dd := uintptr(unsafe.Pointer(&d2[0])) - uintptr(unsafe.Pointer(&d[0]))
		if dd != uintptr(unsafe.Pointer(&act.s[r2*nb]))-uintptr(unsafe.Pointer(&s[0])) || dy != 8*dd {
			panic("ops: dot8R2: quants, scales and sums laid out differently")
		}
		var o [16]float32
		switch {
		case ks.NEON:
			ks.dot8R2NEON(t, w, y, d, s, dd, nb, &o)
		case t == ops.Q8_0 && ks.VNNI:
			q8_0Rows8x2VNNI(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), dd, nb, &o, w.next)
		case ks.VNNI:
			q4_0Rows8x2VNNI(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), dd, nb, &o, w.next)
		case t == ops.Q8_0:
			q8_0Rows8x2AVX2(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), dd, nb, &o, w.next)
		default:
			q4_0Rows8x2AVX2(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]), dd, nb, &o, w.next)
		}
		return [8]float32(o[:8]), [8]float32(o[8:])
	}
	if t == ops.Q8_0 {
		return q8_0Rows8Fused2Vec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&y2[0]), unsafe.Pointer(&d2[0]), nb)
	}
	s, s2 := act.s[r*nb:(r+1)*nb+actPad-1], act.s[r2*nb:(r2+1)*nb+actPad-1]
	return q4_0Rows8Fused2Vec(&w.p, unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0]),
		unsafe.Pointer(&y2[0]), unsafe.Pointer(&d2[0]), unsafe.Pointer(&s2[0]), nb)
}

// packQuads interleaves the q8_0 quants, scales and sums of each four
// columns 4i..4i+3 of every batch of n columns (n/4 fours a batch) by
// block, 32 quants of each column in turn, for dot8R4.
func (act *actRows) packQuads(n int) {
	k := act.k
	nb := k / codec.QK8_0
	batches := len(act.d) / nb / n
	act.nq = n / 4
	fours := batches * act.nq
	act.q4 = cpu.ScratchI8.Get(fours * 4 * k) // every entry written below
	act.d4 = cpu.ScratchF32.Get(fours * 4 * nb)
	act.s4 = cpu.ScratchI32.Get(fours * 4 * nb)
	for b := range batches {
		for qi := range act.nq {
			o := (b*act.nq + qi) * nb // in blocks
			for c := range 4 {
				r := b*n + 4*qi + c
				for j := range nb {
					copy(act.q4[(o+j)*128+32*c:][:32], act.q[r*k+32*j:][:32])
					act.d4[(o+j)*4+c] = act.d[r*nb+j]
					act.s4[(o+j)*4+c] = act.s[r*nb+j]
				}
			}
		}
	}
}

// dot8R4 is dot8R of the fused q8_0 rows w with the four columns of
// packQuads' four qi of batch: out[8c:8c+8] for column 4qi+c.
func (act *actRows) dot8R4(w *rows8, batch, qi int) (out [32]float32) {
	nb := act.k / codec.QK8_0
	o := (batch*act.nq + qi) * nb
	q8_0Rows8x4TVNNI(&w.p, unsafe.Pointer(&act.q4[o*128]), unsafe.Pointer(&act.d4[o*4]), unsafe.Pointer(&act.s4[o*4]), nb, &out, w.next)
	return out
}
