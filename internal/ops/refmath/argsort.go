package refmath

import (
	"math"
	"sort"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refSum(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	x := srcs[0]
	row := make([]float32, x.Ne[0])
	var sum64 float64
	var sum32 float32
	for r := int64(0); r < x.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(x.Ne, r)
		x.Row(i1, i2, i3, row)
		if x.Type == ops.F16 {
			var rs float32
			for _, v := range row {
				rs += v
			}
			sum32 += rs
			continue
		}
		var rs float64
		for _, v := range row {
			rs += float64(v)
		}
		sum64 += rs
	}
	if x.Type == ops.F16 {
		dst.SetF32(0, 0, 0, 0, sum32)
	} else {
		dst.SetF32(0, 0, 0, 0, float32(sum64))
	}
	return nil
}

func refArgmax(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	x := srcs[0]
	row := make([]float32, x.Ne[0])
	for i1 := int64(0); i1 < x.Ne[1]; i1++ {
		x.Row(i1, 0, 0, row)
		best := float32(math.Inf(-1))
		idx := 0
		for i, v := range row {
			best = max32C(best, v)
			if best == v {
				idx = i
			}
		}
		dst.SetInt(i1, 0, 0, 0, int64(idx))
	}
	return nil
}

// max32C is C's MAX(a, b) macro: ((a) > (b) ? (a) : (b)).
func max32C(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

func refCountEqual(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	a, b := srcs[0], srcs[1]
	var n int64
	a.ForEach(func(i0, i1, i2, i3 int64) {
		if a.Int(i0, i1, i2, i3) == b.Int(i0, i1, i2, i3) {
			n++
		}
	})
	dst.SetInt(0, 0, 0, 0, n)
	return nil
}

// sortedRows calls fn with each row of x and the indices 0..ne0-1 of it
// stably sorted by less.
func sortedRows(dst, x *ops.Tensor, less func(row []float32, a, b int32) bool, fn func(i1, i2, i3 int64, idx []int32)) {
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0*8, func(lo, hi int64) {
		row := make([]float32, n0)
		idx := make([]int32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			x.Row(i1, i2, i3, row)
			for i := range idx {
				idx[i] = int32(i)
			}
			sort.SliceStable(idx, func(i, j int) bool { return less(row, idx[i], idx[j]) })
			fn(i1, i2, i3, idx)
		}
	})
}

func refArgsort(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	desc := p.Str("order") == "desc"
	less := func(row []float32, a, b int32) bool {
		if desc {
			return row[a] > row[b]
		}
		return row[a] < row[b]
	}
	sortedRows(dst, srcs[0], less, func(i1, i2, i3 int64, idx []int32) {
		for i, v := range idx {
			dst.SetInt(int64(i), i1, i2, i3, int64(v))
		}
	})
	return nil
}

func refTopK(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k := p.Int("k")
	less := func(row []float32, a, b int32) bool { return row[a] > row[b] }
	sortedRows(dst, srcs[0], less, func(i1, i2, i3 int64, idx []int32) {
		top := append([]int32(nil), idx[:k]...)
		if k > 1 {
			top[0], top[1] = top[1], top[0]
		}
		for i, v := range top {
			dst.SetInt(int64(i), i1, i2, i3, int64(v))
		}
	})
	return nil
}
