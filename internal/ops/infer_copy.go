package ops

import (
	"fmt"
)

// --- cpy (its math: refmath/cpy.go) ---
// cpy and cont. cpy copies x into a new contiguous tensor of the type
// given by the "type" param: the same type is a bit-exact byte copy
// (quantized blocks included); otherwise rows go through float32 (f16
// rounds to nearest even, quantized types use ggml's reference quantizers,
// whose ne0 must be a multiple of the block size). Integer types copy only
// to themselves, except f32 -> i32 (truncating) and i32 -> f32. cont is
// cpy to x's own type.
//
// With a second source dst (ggml_cpy(x, dst)), the result is written into
// dst's memory with dst's shape and strides (a permuted or viewed dst
// works), its type is dst's (the type param must name it) and x and dst
// need the same element count; elements go in row-major order, so a dst
// of another shape is a reshape, as in ggml. Plain types only when the
// shapes differ.

func inferCpy(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	t := p.Type("type")
	if !p.Has("type") {
		return 0, x.Ne, &ParamError{Op: OpCpy, Param: "type", Msg: "required (destination type, e.g. f16)"}
	}
	if len(srcs) > 1 {
		d := srcs[1]
		if d.Type != t {
			return 0, x.Ne, &ParamError{Op: OpCpy, Param: "type", Msg: fmt.Sprintf("%s, but dst is %s", t, d.Type)}
		}
		if d.NElements() != x.NElements() {
			return 0, x.Ne, ShapeErr(OpCpy, "dst %s has %d elements, x %s has %d", d.ShapeString(), d.NElements(), x.ShapeString(), x.NElements())
		}
		if d.Ne != x.Ne && (x.Type.Quantized() || t.Quantized()) && x.Ne[0] != d.Ne[0] {
			return 0, x.Ne, ShapeErr(OpCpy, "a quantized cpy to another shape needs the same ne0 (x %s, dst %s)", x.ShapeString(), d.ShapeString())
		}
	}
	if t != x.Type && !CpyIntFloat(x.Type, t) {
		if !isFloatType(x.Type) || !isFloatType(t) {
			return 0, x.Ne, ShapeErr(OpCpy, "cannot convert %s to %s (integer types copy only to themselves)", x.Type, t)
		}
		if bs := int64(t.BlockSize()); x.Ne[0]%bs != 0 {
			return 0, x.Ne, ShapeErr(OpCpy, "x.ne0 = %d is not a multiple of the %s block size %d", x.Ne[0], t, bs)
		}
	}
	if len(srcs) > 1 {
		return t, srcs[1].Ne, nil
	}
	return t, x.Ne, nil
}

// CpyIntFloat is ggml's f32 -> i32 (truncating, C's conversion) and
// i32 -> f32 copy, the only ones between integer and float types.
func CpyIntFloat(from, to Type) bool {
	return (from == F32 && to == I32) || (from == I32 && to == F32)
}

func inferCont(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	return srcs[0].Type, srcs[0].Ne, nil
}

// --- getrows (its math: refmath/getrows.go) ---
// get_rows (ggml_get_rows): data [ne0, ne1, ne2, ne3] of any float or
// quantized type, rows i32 [n, ne2, ne3]; the result is f32
// [ne0, n, ne2, ne3] with dst[:, i, j, k] = data[:, rows[i, j, k], j, k],
// dequantized. An index outside 0..ne1-1 is an error.

func inferGetRows(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	data, rows := srcs[0], srcs[1]
	var ne [MaxDims]int64
	if data.Type == I64 {
		return 0, ne, ShapeErr(OpGetRows, "data is %s, want f32, f16, i32 or a quantized type", data.Type)
	}
	if err := wantTypes(OpGetRows, "rows", rows.Type, I32); err != nil {
		return 0, ne, err
	}
	if rows.Ne[3] != 1 {
		return 0, ne, ShapeErr(OpGetRows, "rows.ne3 = %d, want 1", rows.Ne[3])
	}
	if rows.Ne[1] != data.Ne[2] || rows.Ne[2] != data.Ne[3] {
		return 0, ne, ShapeErr(OpGetRows, "rows %s does not match data %s: want rows.ne1 = data.ne2 and rows.ne2 = data.ne3",
			rows.ShapeString(), data.ShapeString())
	}
	t := F32
	if data.Type == I32 {
		t = I32 // ggml_get_rows keeps i32 data i32
	}
	return t, [MaxDims]int64{data.Ne[0], rows.Ne[0], rows.Ne[1], rows.Ne[2]}, nil
}

// --- setrows (its math: refmath/setrows.go) ---
// set_rows (ggml_set_rows(dst, src, idx), case order [dst, src, idx]): the
// result is dst with rows replaced: for every row (i, j, k) of src (f32),
// result[:, idx[i, j % idx.ne1, k % idx.ne2], j, k] = src[:, i, j, k],
// converted to dst's type (f32, f16 or quantized with ggml's reference
// quantizers). Indices are i64 (what ggml-et accepts) or i32. Rows are
// written in order, so with repeated indices the last one wins.

func inferSetRows(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	d, s, idx := srcs[0], srcs[1], srcs[2]
	if !isFloatType(d.Type) {
		return 0, d.Ne, ShapeErr(OpSetRows, "dst is %s, want f32, f16 or a quantized type", d.Type)
	}
	if err := wantTypes(OpSetRows, "src", s.Type, F32, F16); err != nil {
		return 0, d.Ne, err
	}
	if err := wantTypes(OpSetRows, "idx", idx.Type, I64, I32); err != nil {
		return 0, d.Ne, err
	}
	if s.Ne[0] != d.Ne[0] {
		return 0, d.Ne, ShapeErr(OpSetRows, "src.ne0 = %d != dst.ne0 = %d", s.Ne[0], d.Ne[0])
	}
	if s.Ne[2] != d.Ne[2] || s.Ne[3] != d.Ne[3] {
		return 0, d.Ne, ShapeErr(OpSetRows, "src %s and dst %s differ in ne2 or ne3", s.ShapeString(), d.ShapeString())
	}
	if s.Ne[1] != idx.Ne[0] {
		return 0, d.Ne, ShapeErr(OpSetRows, "src.ne1 = %d != idx.ne0 = %d (one index per src row)", s.Ne[1], idx.Ne[0])
	}
	if idx.Ne[1] == 0 || idx.Ne[2] == 0 || s.Ne[2]%idx.Ne[1] != 0 || s.Ne[3]%idx.Ne[2] != 0 {
		return 0, d.Ne, ShapeErr(OpSetRows, "idx %s cannot be broadcast over src %s: want src.ne2 %% idx.ne1 == 0 and src.ne3 %% idx.ne2 == 0",
			idx.ShapeString(), s.ShapeString())
	}
	if idx.Ne[3] != 1 {
		return 0, d.Ne, ShapeErr(OpSetRows, "idx.ne3 = %d, want 1", idx.Ne[3])
	}
	if bs := int64(d.Type.BlockSize()); d.Ne[0]%bs != 0 {
		return 0, d.Ne, ShapeErr(OpSetRows, "dst.ne0 = %d is not a multiple of the %s block size %d", d.Ne[0], d.Type, bs)
	}
	return d.Type, d.Ne, nil
}

// --- concat (its math: refmath/concat.go) ---
// concat: a and b joined along dimension dim; every other dimension must
// match. Elements are copied as raw bytes (blocks for a quantized type,
// as ggml's CPU does), so any type works. Both sources may be strided
// views.

func inferConcat(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if b.Type != a.Type {
		return 0, a.Ne, ShapeErr(OpConcat, "b is %s, want a's type %s", b.Type, a.Type)
	}
	dim := p.Int("dim")
	if dim < 0 || dim >= MaxDims {
		return 0, a.Ne, &ParamError{Op: OpConcat, Param: "dim", Msg: fmt.Sprintf("%d is not a dimension (want 0 to 3)", dim)}
	}
	ne := a.Ne
	for d := 0; d < MaxDims; d++ {
		if int64(d) == dim {
			ne[d] = a.Ne[d] + b.Ne[d]
			continue
		}
		if a.Ne[d] != b.Ne[d] {
			return 0, a.Ne, ShapeErr(OpConcat, "a %s and b %s differ in ne%d (only ne%d may differ)", a.ShapeString(), b.ShapeString(), d, dim)
		}
	}
	return a.Type, ne, nil
}

// --- repeat (its math: refmath/repeat.go) ---
// repeat: ggml_repeat_4d, x tiled to shape ne; every ne[i] must be a
// multiple of x.ne[i]. Element (i0..i3) of the result is x[i0 % x.ne0,
// i1 % x.ne1, ...], copied as raw bytes: any plain type (the CPU has f32,
// f16, bf16, i16 and i32); a quantized x has no host math. x may be a
// strided view.

func inferRepeat(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]

	ne := [MaxDims]int64{1, 1, 1, 1}
	list := p.Ints("ne")
	if len(list) < 1 || len(list) > MaxDims {
		return 0, x.Ne, &ParamError{Op: OpRepeat, Param: "ne", Msg: fmt.Sprintf("has %d entries, want 1 to 4", len(list))}
	}
	copy(ne[:], list)
	for d := 0; d < MaxDims; d++ {
		if ne[d] < 0 {
			return 0, x.Ne, &ParamError{Op: OpRepeat, Param: "ne", Msg: fmt.Sprintf("negative ne%d = %d", d, ne[d])}
		}
		if x.Ne[d] == 0 || ne[d]%x.Ne[d] != 0 {
			return 0, x.Ne, ShapeErr(OpRepeat, "x %s cannot be repeated to %s: ne%d = %d is not a multiple of x.ne%d = %d",
				x.ShapeString(), ShapeString(ne), d, ne[d], d, x.Ne[d])
		}
	}
	return x.Type, ne, nil
}

// --- pad (its math: refmath/pad.go) ---
// pad: ggml_pad_ext, x surrounded by lp[i] zeros before and rp[i] zeros
// after, per dimension in ne order; the result is ne + lp + rp. f32 only
// (non-circular padding, the only kind et models); x may be strided.

func PadAmounts(p Params) (lp, rp [MaxDims]int64, err error) {
	for _, side := range []struct {
		name string
		out  *[MaxDims]int64
	}{{"lp", &lp}, {"rp", &rp}} {
		list := p.Ints(side.name)
		if len(list) > MaxDims {
			return lp, rp, &ParamError{Op: OpPad, Param: side.name, Msg: fmt.Sprintf("has %d entries, want up to 4", len(list))}
		}
		for d, v := range list {
			if v < 0 {
				return lp, rp, &ParamError{Op: OpPad, Param: side.name, Msg: fmt.Sprintf("negative padding %d in dim %d", v, d)}
			}
			side.out[d] = v
		}
	}
	return lp, rp, nil
}

func inferPad(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpPad, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	lp, rp, err := PadAmounts(p)
	if err != nil {
		return 0, x.Ne, err
	}
	var ne [MaxDims]int64
	for d := range ne {
		ne[d] = x.Ne[d] + lp[d] + rp[d]
	}
	// Circular padding wraps around x: an empty x has nothing to wrap
	// into a result that is not empty. (The result is empty when one of
	// its dims is 0; a product of the dims can overflow to 0.)
	if p.Has("circular") && p.Bool("circular") && x.NElements() == 0 && ne[0] != 0 && ne[1] != 0 && ne[2] != 0 && ne[3] != 0 {
		return 0, x.Ne, ShapeErr(OpPad, "circular padding of x %s, which has no elements", x.ShapeString())
	}
	return F32, ne, nil
}

// --- set (its math: refmath/set.go) ---
// set: ggml_set(a, b, nb1, nb2, nb3, offset): the result is a with b
// written into the view of a that has b's shape, element stride the type
// size, byte strides nb1..nb3 and a byte offset, all in a's contiguous
// layout (ggml requires a contiguous). A stride given as 0 means a's own
// contiguous stride, so {offset: 64} alone places b's rows like a's. With
// inplace the result is a itself (ggml_set_inplace; the only form ggml-et
// runs); the values are the same either way. f32 or i32, b of a's type.
// Each element of b lands at byte L = offset + i0·ts + i1·nb1 + i2·nb2 +
// i3·nb3 of a, which must be element-aligned and inside a.

// SetView gives the view's byte strides and offset.
func SetView(a *Tensor, p Params) (nb [MaxDims]int64, off int64, err error) {
	ts := int64(a.Type.TypeSize())
	cont := ContiguousStrides(a.Type, a.Ne)
	nb[0] = ts
	for i, name := range []string{"nb1", "nb2", "nb3"} {
		v := p.Int(name)
		if v < 0 || v%ts != 0 {
			return nb, 0, &ParamError{Op: OpSet, Param: name, Msg: fmt.Sprintf("%d is not a non-negative multiple of the element size %d", v, ts)}
		}
		if v == 0 {
			v = int64(cont[i+1])
		}
		nb[i+1] = v
	}
	off = p.Int("offset")
	if off < 0 || off%ts != 0 {
		return nb, 0, &ParamError{Op: OpSet, Param: "offset", Msg: fmt.Sprintf("%d is not a non-negative multiple of the element size %d", off, ts)}
	}
	return nb, off, nil
}

func inferSet(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpSet, "a", a.Type, F32, I32); err != nil {
		return 0, a.Ne, err
	}
	if b.Type != a.Type {
		return 0, a.Ne, ShapeErr(OpSet, "b is %s, want a's type %s", b.Type, a.Type)
	}
	nb, off, err := SetView(a, p)
	if err != nil {
		return 0, a.Ne, err
	}
	if b.NElements() == 0 {
		return a.Type, a.Ne, nil
	}
	last := off + nb[0]
	for d := 0; d < MaxDims; d++ {
		last += (b.Ne[d] - 1) * nb[d]
	}
	if size := a.NElements() * nb[0]; last > size {
		return 0, a.Ne, ShapeErr(OpSet, "b %s at offset %d with strides [%d, %d, %d] reaches byte %d, a %s has %d bytes",
			b.ShapeString(), off, nb[1], nb[2], nb[3], last, a.ShapeString(), size)
	}
	return a.Type, a.Ne, nil
}
