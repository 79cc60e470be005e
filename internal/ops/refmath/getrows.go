package refmath

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func (ks *Kernels) refGetRows(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	data, rows := srcs[0], srcs[1]
	// Check every index first, so an error leaves dst untouched.
	for k := int64(0); k < rows.Ne[2]; k++ {
		for j := int64(0); j < rows.Ne[1]; j++ {
			for i := int64(0); i < rows.Ne[0]; i++ {
				if r := rows.Int(i, j, k, 0); r < 0 || r >= data.Ne[1] {
					return &ops.ShapeError{Op: ops.OpGetRows, Msg: fmt.Sprintf("rows[%d, %d, %d] = %d is outside data rows 0..%d", i, j, k, r, data.Ne[1]-1)}
				}
			}
		}
	}
	n0 := data.Ne[0]
	if data.Type == ops.I32 {
		for r := int64(0); r < dst.NRows(); r++ {
			i, j, k := ops.RowIndex(dst.Ne, r)
			src := rows.Int(i, j, k, 0)
			for i0 := int64(0); i0 < n0; i0++ {
				dst.SetInt(i0, i, j, k, data.Int(i0, src, j, k))
			}
		}
		return nil
	}
	if cpu.DenseF32Rows(dst) && data.Nb[0] == uint64(data.Type.TypeSize()) {
		// Dequantize (or copy) each row straight into dst's memory.
		if n, cost := dst.NRows(), max(1, n0/4); cpu.RefInline(n, cost) {
			ks.getRowsDense(dst, data, rows, 0, n) // no closure to allocate
		} else {
			cpu.RefParallel(n, cost, func(lo, hi int64) { ks.getRowsDense(dst, data, rows, lo, hi) })
		}
		return nil
	}
	cpu.RefParallel(dst.NRows(), n0, func(lo, hi int64) {
		buf := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i, j, k := ops.RowIndex(dst.Ne, r)
			data.Row(rows.Int(i, j, k, 0), j, k, buf)
			dst.SetRow(i, j, k, buf)
		}
	})
	return nil
}

// getRowsDense dequantizes (or copies) the data rows that rows names into
// rows [lo, hi) of dst (f32, dense rows).
func (ks *Kernels) getRowsDense(dst, data, rows *ops.Tensor, lo, hi int64) {
	for r := lo; r < hi; r++ {
		i, j, k := ops.RowIndex(dst.Ne, r)
		src := data.RowBytes(rows.Int(i, j, k, 0), j, k)
		if data.Type == ops.Q8_0 {
			ks.DequantQ8_0Row(src, cpu.F32RowView(dst, i, j, k))
		} else {
			ops.DequantizeRow(data.Type, src, cpu.F32RowView(dst, i, j, k))
		}
	}
}
