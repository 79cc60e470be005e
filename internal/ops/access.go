package ops

import (
	"encoding/binary"
	"fmt"
	"math"
)

// This file is the element-access and view API that every reference op
// uses. Indices are in ggml order: i0 indexes ne[0] (the innermost
// dimension), i3 indexes ne[3]. All accessors go through Offs and Nb, so
// they work on views, permutations and transposes without copying.
//
// For block-quantized types the element i0 lives in block i0/BlockSize,
// at byte offset (i0/BlockSize)*Nb[0] within its row.

// ElemOffset is the byte offset in Buf of element (i0, i1, i2, i3), or,
// for a quantized type, of the block that holds it.
func (x *Tensor) ElemOffset(i0, i1, i2, i3 int64) uint64 {
	bs := int64(x.Type.BlockSize())
	return x.Offs + uint64(i0/bs)*x.Nb[0] + uint64(i1)*x.Nb[1] + uint64(i2)*x.Nb[2] + uint64(i3)*x.Nb[3]
}

// RowOffset is the byte offset in Buf of element (0, i1, i2, i3).
func (x *Tensor) RowOffset(i1, i2, i3 int64) uint64 {
	return x.Offs + uint64(i1)*x.Nb[1] + uint64(i2)*x.Nb[2] + uint64(i3)*x.Nb[3]
}

// F32 returns element (i0, i1, i2, i3) as a float32 for any type: f16 is
// widened, i32/i64 are converted, quantized types are dequantized (one
// block per call, so use Row for whole rows).
func (x *Tensor) F32(i0, i1, i2, i3 int64) float32 {
	off := x.ElemOffset(i0, i1, i2, i3)
	switch x.Type {
	case F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(x.Buf[off:]))
	case F16:
		return F16ToF32(binary.LittleEndian.Uint16(x.Buf[off:]))
	case I32:
		return float32(int32(binary.LittleEndian.Uint32(x.Buf[off:])))
	case I64:
		return float32(int64(binary.LittleEndian.Uint64(x.Buf[off:])))
	}
	bs := int64(x.Type.BlockSize())
	var blk [256]float32
	DequantizeRow(x.Type, x.Buf[off:off+uint64(x.Type.TypeSize())], blk[:bs])
	return blk[i0%bs]
}

// SetF32 stores v at element (i0, i1, i2, i3): f16 rounds to nearest even,
// i32/i64 truncate toward zero as a C cast does, and a quantized type
// requantizes the whole block that holds the element.
func (x *Tensor) SetF32(i0, i1, i2, i3 int64, v float32) {
	off := x.ElemOffset(i0, i1, i2, i3)
	switch x.Type {
	case F32:
		binary.LittleEndian.PutUint32(x.Buf[off:], math.Float32bits(v))
		return
	case F16:
		binary.LittleEndian.PutUint16(x.Buf[off:], F32ToF16(v))
		return
	case I32:
		binary.LittleEndian.PutUint32(x.Buf[off:], uint32(int32(v)))
		return
	case I64:
		binary.LittleEndian.PutUint64(x.Buf[off:], uint64(int64(v)))
		return
	}
	bs := int64(x.Type.BlockSize())
	b := x.Buf[off : off+uint64(x.Type.TypeSize())]
	var blk [256]float32
	DequantizeRow(x.Type, b, blk[:bs])
	blk[i0%bs] = v
	QuantizeRow(x.Type, blk[:bs], b)
}

// Int returns element (i0, i1, i2, i3) as an int64: integer types exactly,
// float types truncated toward zero. It is meant for index tensors
// (get_rows, set_rows, rope positions).
func (x *Tensor) Int(i0, i1, i2, i3 int64) int64 {
	off := x.ElemOffset(i0, i1, i2, i3)
	switch x.Type {
	case I8:
		return int64(int8(x.Buf[off]))
	case I16:
		return int64(int16(binary.LittleEndian.Uint16(x.Buf[off:])))
	case I32:
		return int64(int32(binary.LittleEndian.Uint32(x.Buf[off:])))
	case I64:
		return int64(binary.LittleEndian.Uint64(x.Buf[off:]))
	}
	return int64(x.F32(i0, i1, i2, i3))
}

// SetInt stores v at element (i0, i1, i2, i3): exactly for i8, i16, i32
// (wrapping as a C cast does) and i64, converted for the other types.
func (x *Tensor) SetInt(i0, i1, i2, i3 int64, v int64) {
	off := x.ElemOffset(i0, i1, i2, i3)
	switch x.Type {
	case I8:
		x.Buf[off] = byte(v)
	case I16:
		binary.LittleEndian.PutUint16(x.Buf[off:], uint16(v))
	case I32:
		binary.LittleEndian.PutUint32(x.Buf[off:], uint32(int32(v)))
	case I64:
		binary.LittleEndian.PutUint64(x.Buf[off:], uint64(v))
	default:
		x.SetF32(i0, i1, i2, i3, float32(v))
	}
}

// Row converts row (i1, i2, i3) — Ne[0] elements — to float32 into
// dst[:Ne[0]], dequantizing quantized types. dst must hold Ne[0] values.
func (x *Tensor) Row(i1, i2, i3 int64, dst []float32) {
	ClearUpper() // every row-based op reads rows: see clearUpper
	n := x.Ne[0]
	dst = dst[:n]
	off := x.RowOffset(i1, i2, i3)
	ts := uint64(x.Type.TypeSize())
	if x.Nb[0] == ts {
		DequantizeRow(x.Type, x.Buf[off:off+x.Type.RowSize(n)], dst)
		return
	}
	bs := int64(x.Type.BlockSize())
	for b := int64(0); b < n/bs; b++ {
		o := off + uint64(b)*x.Nb[0]
		DequantizeRow(x.Type, x.Buf[o:o+ts], dst[b*bs:(b+1)*bs])
	}
}

// SetRow stores src[:Ne[0]] as row (i1, i2, i3), converting or quantizing
// (with ggml's reference quantizers) to the tensor's type.
func (x *Tensor) SetRow(i1, i2, i3 int64, src []float32) {
	ClearUpper()
	n := x.Ne[0]
	src = src[:n]
	off := x.RowOffset(i1, i2, i3)
	ts := uint64(x.Type.TypeSize())
	if x.Nb[0] == ts {
		QuantizeRow(x.Type, src, x.Buf[off:off+x.Type.RowSize(n)])
		return
	}
	bs := int64(x.Type.BlockSize())
	for b := int64(0); b < n/bs; b++ {
		o := off + uint64(b)*x.Nb[0]
		QuantizeRow(x.Type, src[b*bs:(b+1)*bs], x.Buf[o:o+ts])
	}
}

// RowBytes returns the raw bytes of row (i1, i2, i3), aliasing Buf. It
// requires a row whose elements (blocks) are dense: Nb[0] == TypeSize.
func (x *Tensor) RowBytes(i1, i2, i3 int64) []byte {
	off := x.RowOffset(i1, i2, i3)
	return x.Buf[off : off+x.Type.RowSize(x.Ne[0])]
}

// FromF32 builds a contiguous tensor of type t and shape ne (1 to 4 dims,
// ggml order) from data in ggml order (ne0 fastest), converting or
// quantizing with ggml's reference quantizers. It panics if len(data) is
// not the element count or ne0 is not a multiple of t's block size: both
// are programming errors.
func FromF32(t Type, ne []int64, data []float32) *Tensor {
	x := New(t, ne...)
	if int64(len(data)) != x.NElements() {
		panic(fmt.Sprintf("ops.FromF32: %d values for shape %s", len(data), x.ShapeString()))
	}
	if x.Ne[0]%int64(t.BlockSize()) != 0 {
		panic(fmt.Sprintf("ops.FromF32: ne0 = %d is not a multiple of the %s block size %d", x.Ne[0], t, t.BlockSize()))
	}
	n := x.Ne[0]
	r := int64(0)
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				x.SetRow(i1, i2, i3, data[r*n:(r+1)*n])
				r++
			}
		}
	}
	return x
}

// FromInts builds a contiguous i32 or i64 (or any other type) tensor of
// shape ne from data in ggml order. It panics if len(data) is not the
// element count.
func FromInts(t Type, ne []int64, data []int64) *Tensor {
	x := New(t, ne...)
	if int64(len(data)) != x.NElements() {
		panic(fmt.Sprintf("ops.FromInts: %d values for shape %s", len(data), x.ShapeString()))
	}
	i := 0
	x.ForEach(func(i0, i1, i2, i3 int64) {
		x.SetInt(i0, i1, i2, i3, data[i])
		i++
	})
	return x
}

// ToF32 returns all elements as float32 in ggml order (ne0 fastest),
// whatever the strides, dequantizing quantized types.
func (x *Tensor) ToF32() []float32 {
	n := x.Ne[0]
	out := make([]float32, x.NElements())
	r := int64(0)
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				x.Row(i1, i2, i3, out[r*n:(r+1)*n])
				r++
			}
		}
	}
	return out
}

// ForEach calls fn for every element index in ggml order (ne0 fastest).
func (x *Tensor) ForEach(fn func(i0, i1, i2, i3 int64)) {
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				for i0 := int64(0); i0 < x.Ne[0]; i0++ {
					fn(i0, i1, i2, i3)
				}
			}
		}
	}
}

// View is ggml_view_4d (and _1d/_2d/_3d): a tensor of shape ne sharing x's
// buffer, starting offs bytes after x's element 0, with Nb[0] = the type
// size (as ggml_view_impl sets it, whatever x's own nb0: a view of a
// permuted tensor has dense rows) and Nb[1..len(nb)] = nb (byte strides of
// dims 1..3). Strides not given
// continue contiguously (nb[i] = nb[i-1]*ne[i-1]) as in ggml. It fails if
// the view reaches outside the buffer or ne0 is not a multiple of the
// block size.
func View(x *Tensor, ne []int64, nb []uint64, offs uint64) (*Tensor, error) {
	if len(ne) < 1 || len(ne) > MaxDims {
		return nil, fmt.Errorf("view: ne has %d dims, want 1 to %d", len(ne), MaxDims)
	}
	if len(nb) > len(ne)-1 {
		return nil, fmt.Errorf("view: %d strides for %d dims (give nb of dims 1..%d)", len(nb), len(ne), len(ne)-1)
	}
	v := &Tensor{Name: x.Name + " (view)", Type: x.Type, Buf: x.Buf, Offs: x.Offs + offs, DataLen: x.DataLen}
	for i := range v.Ne {
		v.Ne[i] = 1
	}
	copy(v.Ne[:], ne)
	for i, n := range v.Ne {
		if n < 0 {
			return nil, fmt.Errorf("view: negative ne%d = %d", i, n)
		}
	}
	if bs := int64(x.Type.BlockSize()); v.Ne[0]%bs != 0 {
		return nil, fmt.Errorf("view: ne0 = %d is not a multiple of the %s block size %d", v.Ne[0], x.Type, bs)
	}
	v.Nb[0] = uint64(x.Type.TypeSize())
	v.Nb[1] = v.Nb[0] * uint64(v.Ne[0]/int64(x.Type.BlockSize()))
	for i := 2; i < MaxDims; i++ {
		v.Nb[i] = v.Nb[i-1] * uint64(v.Ne[i-1])
	}
	copy(v.Nb[1:], nb)
	for j := max(len(nb)+1, 2); j < MaxDims; j++ {
		v.Nb[j] = v.Nb[j-1] * uint64(v.Ne[j-1])
	}
	if end := v.Offs + v.NBytes(); end > x.BufLen() {
		return nil, fmt.Errorf("view: shape %s with offset %d needs %d bytes, source buffer has %d",
			v.ShapeString(), offs, end-x.Offs, x.BufLen()-x.Offs)
	}
	return v, nil
}

// Reshape is ggml_reshape_4d: a view of contiguous x with a new shape of
// the same element count and contiguous strides.
func Reshape(x *Tensor, ne ...int64) (*Tensor, error) {
	if len(ne) < 1 || len(ne) > MaxDims {
		return nil, fmt.Errorf("reshape: ne has %d dims, want 1 to %d", len(ne), MaxDims)
	}
	if !x.IsContiguous() {
		return nil, fmt.Errorf("reshape: source %s is not contiguous", x.ShapeString())
	}
	v := &Tensor{Name: x.Name + " (reshaped)", Type: x.Type, Buf: x.Buf, Offs: x.Offs, DataLen: x.DataLen}
	for i := range v.Ne {
		v.Ne[i] = 1
	}
	copy(v.Ne[:], ne)
	if v.NElements() != x.NElements() {
		return nil, fmt.Errorf("reshape: %s has %d elements, source %s has %d",
			v.ShapeString(), v.NElements(), x.ShapeString(), x.NElements())
	}
	if bs := int64(x.Type.BlockSize()); v.Ne[0]%bs != 0 {
		return nil, fmt.Errorf("reshape: ne0 = %d is not a multiple of the %s block size %d", v.Ne[0], x.Type, bs)
	}
	v.Nb = ContiguousStrides(x.Type, v.Ne)
	return v, nil
}

// Permute is ggml_permute(x, a0, a1, a2, a3): source dimension i becomes
// dimension ai of the result (ne[ai] = x.ne[i], nb[ai] = x.nb[i]). The
// axes must be a permutation of 0..3.
func Permute(x *Tensor, a0, a1, a2, a3 int) (*Tensor, error) {
	axes := [MaxDims]int{a0, a1, a2, a3}
	var seen [MaxDims]bool
	for _, a := range axes {
		if a < 0 || a >= MaxDims || seen[a] {
			return nil, fmt.Errorf("permute: axes %v are not a permutation of 0..3", axes)
		}
		seen[a] = true
	}
	v := &Tensor{Name: x.Name + " (permuted)", Type: x.Type, Buf: x.Buf, Offs: x.Offs, DataLen: x.DataLen}
	for i, a := range axes {
		v.Ne[a] = x.Ne[i]
		v.Nb[a] = x.Nb[i]
	}
	return v, nil
}

// Transpose is ggml_transpose: Permute(x, 1, 0, 2, 3).
func Transpose(x *Tensor) *Tensor {
	v, _ := Permute(x, 1, 0, 2, 3)
	v.Name = x.Name + " (transposed)"
	return v
}

// Cont is ggml_cont: a new contiguous tensor of the same type and shape
// holding x's elements in ggml order. Quantized blocks are copied as raw
// bytes (no requantization).
func Cont(x *Tensor) *Tensor {
	y := New(x.Type, x.Ne[:]...)
	y.Name = x.Name + " (cont)"
	ts := uint64(x.Type.TypeSize())
	nblk := x.Ne[0] / int64(x.Type.BlockSize())
	d := uint64(0)
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				off := x.RowOffset(i1, i2, i3)
				if x.Nb[0] == ts {
					n := uint64(nblk) * ts
					copy(y.Buf[d:d+n], x.Buf[off:off+n])
					d += n
					continue
				}
				for b := int64(0); b < nblk; b++ {
					o := off + uint64(b)*x.Nb[0]
					copy(y.Buf[d:d+ts], x.Buf[o:o+ts])
					d += ts
				}
			}
		}
	}
	return y
}
