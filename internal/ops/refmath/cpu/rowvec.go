package cpu

import (
	"encoding/binary"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
)

// The kernels of the row and element-wise ops on contiguous float32 rows.
// Each has a scalar version here (the definition, and the fallback) and a
// dispatcher without the suffix: rowvec_simd_amd64.go runs the same
// arithmetic eight lanes at a time on CPUs with AVX2, and
// rowvec_novec.go calls the scalar code. Element-wise kernels give the same
// bits either way; the float64 sums of the norms add in eight lane-wise
// partial sums in the vector code (ggml's own SIMD reductions reorder the
// same way), and silu's exp is a float64 polynomial in the vector code
// (see expF64x4).

// F32RowView is row (i1, i2, i3) of a float32 tensor whose elements are dense
// (Nb[0] == 4) as a []float32 aliasing Buf, or nil if the tensor is not
// f32, its row is not dense or not 4-byte aligned, or the host is not
// little-endian.
func F32RowView(x *ops.Tensor, i1, i2, i3 int64) []float32 {
	if x.Type != ops.F32 || x.Nb[0] != 4 || !ops.HostLE {
		return nil
	}
	n := x.Ne[0]
	if n == 0 {
		return nil
	}
	off := x.RowOffset(i1, i2, i3)
	b := x.Buf[off : off+4*uint64(n)]
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%4 != 0 {
		return nil
	}
	return unsafe.Slice((*float32)(p), n)
}

// F32Rows is the rows i1 = 0..ne1-1 at (i2, i3) of a tensor with dense
// f32 rows (denseF32Rows, ne1 > 0) as one []float32 aliasing Buf, row i1
// starting at i1·stride: one bounds check for all of them.
func F32Rows(x *ops.Tensor, i2, i3 int64) (rows []float32, stride int64) {
	stride = int64(x.Nb[1] / 4)
	n := (x.Ne[1]-1)*stride + x.Ne[0]
	off := x.RowOffset(0, i2, i3)
	b := x.Buf[off : off+4*uint64(n)]
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), stride
}

// F16RowView is f32RowView for an f16 tensor: the row's half bits as []uint16.
func F16RowView(x *ops.Tensor, i1, i2, i3 int64) []uint16 {
	if x.Type != ops.F16 || x.Nb[0] != 2 || !ops.HostLE {
		return nil
	}
	n := x.Ne[0]
	if n == 0 {
		return nil
	}
	off := x.RowOffset(i1, i2, i3)
	b := x.Buf[off : off+2*uint64(n)]
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%2 != 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(p), n)
}

// DenseF32Rows reports whether each tensor has elements and every row of it
// has an f32RowView
// (checked on the first and last row, which bound the alignment of all:
// strides are multiples of 4 when the first row is aligned).
func DenseF32Rows(ts ...*ops.Tensor) bool {
	for _, t := range ts {
		if t.Type != ops.F32 || t.Nb[0] != 4 || !ops.HostLE || t.NElements() == 0 {
			return false
		}
		if t.Nb[1]%4 != 0 || t.Nb[2]%4 != 0 || t.Nb[3]%4 != 0 || F32RowView(t, 0, 0, 0) == nil {
			return false
		}
	}
	return true
}

// DenseF16Rows is denseF32Rows for f16 tensors (f16RowView).
func DenseF16Rows(ts ...*ops.Tensor) bool {
	for _, t := range ts {
		if t.Type != ops.F16 || t.Nb[0] != 2 || !ops.HostLE || t.NElements() == 0 {
			return false
		}
		if t.Nb[1]%2 != 0 || t.Nb[2]%2 != 0 || t.Nb[3]%2 != 0 || F16RowView(t, 0, 0, 0) == nil {
			return false
		}
	}
	return true
}

// EltChunk is the most elements of one row that the element-wise ops
// (unary, glu) hand out as one piece of parallel work, so that a single
// long row (n = 1) still spreads over the workers. A multiple of 8: the
// pieces of a row keep the vector kernels' alignment.
const EltChunk = 4096

// ForRowChunks calls fn(r, lo, hi) for every row r < nrows of n elements,
// in pieces [lo, hi) of at most eltChunk elements, through refParallel
// with cost work units per element.
func ForRowChunks(nrows, n, cost int64, fn func(r, lo, hi int64)) {
	per := max(1, (n+EltChunk-1)/EltChunk)
	RefParallel(nrows*per, max(1, min(n, EltChunk)*cost), func(a, b int64) {
		for it := a; it < b; it++ {
			r, c := it/per, it%per
			fn(r, c*EltChunk, min(n, (c+1)*EltChunk))
		}
	})
}

func addScalar(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i := range a {
		dst[i] = a[i] + b[i]
	}
}

func subScalar(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i := range a {
		dst[i] = a[i] - b[i]
	}
}

func mulScalar(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	for i := range a {
		dst[i] = a[i] * b[i]
	}
}

// scaleScalar is dst = x·s.
func scaleScalar(dst, x []float32, s float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v * s
	}
}

// SumScalar is Σ float64(x[i]), in order (ggml_float sum).
func SumScalar(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// SumSqScalar is Σ float64(x[i]·x[i]) (the product in float32), in order.
func SumSqScalar(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v * v)
	}
	return s
}

// CenterSumSqScalar sets dst = x - mean and returns Σ float64(d·d).
func CenterSumSqScalar(dst, x []float32, mean float32) float64 {
	dst = dst[:len(x)]
	var s float64
	for i, v := range x {
		d := v - mean
		dst[i] = d
		s += float64(d * d)
	}
	return s
}

// f32ToF16RowScalar is dst = F32ToF16(src).
func f32ToF16RowScalar(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = ops.F32ToF16(v)
	}
}

// ropeNeoxScalar rotates the pairs (x[i], x[i+h]), h = len(c), by the
// angles with cosines c and sines s into dst (which may alias x):
// dst[i] = x[i]·c - x[i+h]·s, dst[i+h] = x[i]·s + x[i+h]·c, each product
// rounded to float32 as ggml's C does.
func ropeNeoxScalar(dst, x, c, s []float32) {
	h := len(c)
	s = s[:h]
	x = x[:2*h]
	dst = dst[:2*h]
	for i := range c {
		x0, x1 := x[i], x[i+h]
		dst[i] = float32(x0*c[i]) - float32(x1*s[i])
		dst[i+h] = float32(x0*s[i]) + float32(x1*c[i])
	}
}

// ropeNormalScalar rotates the adjacent pairs (x[2i], x[2i+1]) by the
// angles with cosines cc[2i] (= cc[2i+1]) and sines ss[2i+1] (= -ss[2i])
// into dst (which may alias x): the expanded layout of ropeExpand, which
// the vector code reads lane for lane.
func ropeNormalScalar(dst, x, cc, ss []float32) {
	n := len(cc) &^ 1
	ss, x, dst = ss[:n], x[:n], dst[:n]
	for i := 0; i < n; i += 2 {
		c, s := cc[i], ss[i+1]
		x0, x1 := x[i], x[i+1]
		dst[i] = float32(x0*c) - float32(x1*s)
		dst[i+1] = float32(x0*s) + float32(x1*c)
	}
}

// RopeExpand fills cc and ss (2·len(c) each) for ropeNormalRow:
// cc = [c0 c0 c1 c1 ...], ss = [-s0 s0 -s1 s1 ...].
func RopeExpand(cc, ss, c, s []float32) {
	cc, ss = cc[:2*len(c)], ss[:2*len(c)]
	for i := range c {
		cc[2*i], cc[2*i+1] = c[i], c[i]
		ss[2*i], ss[2*i+1] = -s[i], s[i]
	}
}

// dequantQ8_0Scalar is DequantizeRow(Q8_0, src, dst).
func dequantQ8_0Scalar(src []byte, dst []float32) {
	for b := 0; b < len(dst)/codec.QK8_0; b++ {
		x := src[b*34 : (b+1)*34]
		d := ops.F16ToF32(binary.LittleEndian.Uint16(x))
		y := dst[b*codec.QK8_0 : (b+1)*codec.QK8_0]
		for j := range y {
			y[j] = float32(int8(x[2+j])) * d
		}
	}
}
