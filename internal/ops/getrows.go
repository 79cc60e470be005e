package ops

import "fmt"

// get_rows (ggml_get_rows): data [ne0, ne1, ne2, ne3] of any float or
// quantized type, rows i32 [n, ne2, ne3]; the result is f32
// [ne0, n, ne2, ne3] with dst[:, i, j, k] = data[:, rows[i, j, k], j, k],
// dequantized. An index outside 0..ne1-1 is an error.

func inferGetRows(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	data, rows := srcs[0], srcs[1]
	var ne [MaxDims]int64
	if data.Type == I64 {
		return 0, ne, shapeErr(OpGetRows, "data is %s, want f32, f16, i32 or a quantized type", data.Type)
	}
	if err := wantTypes(OpGetRows, "rows", rows.Type, I32); err != nil {
		return 0, ne, err
	}
	if rows.Ne[3] != 1 {
		return 0, ne, shapeErr(OpGetRows, "rows.ne3 = %d, want 1", rows.Ne[3])
	}
	if rows.Ne[1] != data.Ne[2] || rows.Ne[2] != data.Ne[3] {
		return 0, ne, shapeErr(OpGetRows, "rows %s does not match data %s: want rows.ne1 = data.ne2 and rows.ne2 = data.ne3",
			rows.ShapeString(), data.ShapeString())
	}
	t := F32
	if data.Type == I32 {
		t = I32 // ggml_get_rows keeps i32 data i32
	}
	return t, [MaxDims]int64{data.Ne[0], rows.Ne[0], rows.Ne[1], rows.Ne[2]}, nil
}

func refGetRows(dst *Tensor, srcs []*Tensor, _ Params) error {
	data, rows := srcs[0], srcs[1]
	// Check every index first, so an error leaves dst untouched.
	for k := int64(0); k < rows.Ne[2]; k++ {
		for j := int64(0); j < rows.Ne[1]; j++ {
			for i := int64(0); i < rows.Ne[0]; i++ {
				if r := rows.Int(i, j, k, 0); r < 0 || r >= data.Ne[1] {
					return &ShapeError{Op: OpGetRows, Msg: fmt.Sprintf("rows[%d, %d, %d] = %d is outside data rows 0..%d", i, j, k, r, data.Ne[1]-1)}
				}
			}
		}
	}
	n0 := data.Ne[0]
	if data.Type == I32 {
		for r := int64(0); r < dst.NRows(); r++ {
			i, j, k := rowIndex(dst.Ne, r)
			src := rows.Int(i, j, k, 0)
			for i0 := int64(0); i0 < n0; i0++ {
				dst.SetInt(i0, i, j, k, data.Int(i0, src, j, k))
			}
		}
		return nil
	}
	if denseF32Rows(dst) && data.Nb[0] == uint64(data.Type.TypeSize()) {
		// Dequantize (or copy) each row straight into dst's memory.
		if n, cost := dst.NRows(), max(1, n0/4); refInline(n, cost) {
			getRowsDense(dst, data, rows, 0, n) // no closure to allocate
		} else {
			refParallel(n, cost, func(lo, hi int64) { getRowsDense(dst, data, rows, lo, hi) })
		}
		return nil
	}
	refParallel(dst.NRows(), n0, func(lo, hi int64) {
		buf := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i, j, k := rowIndex(dst.Ne, r)
			data.Row(rows.Int(i, j, k, 0), j, k, buf)
			dst.SetRow(i, j, k, buf)
		}
	})
	return nil
}

// getRowsDense dequantizes (or copies) the data rows that rows names into
// rows [lo, hi) of dst (f32, dense rows).
func getRowsDense(dst, data, rows *Tensor, lo, hi int64) {
	for r := lo; r < hi; r++ {
		i, j, k := rowIndex(dst.Ne, r)
		src := data.RowBytes(rows.Int(i, j, k, 0), j, k)
		if data.Type == Q8_0 {
			dequantQ8_0Row(src, f32RowView(dst, i, j, k))
		} else {
			DequantizeRow(data.Type, src, f32RowView(dst, i, j, k))
		}
	}
}
