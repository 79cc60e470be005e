package ops

import (
	"math"
	"sort"
)

// Reductions and index ops ggml-et does not implement, as ggml's CPU
// computes them (ggml-cpu/ops.cpp, vec.h):
//
//   - sum: every element summed; f32 rows are summed in float64 and the
//     row sums added in float64 (ggml_vec_sum_f32_ggf), f16 in float32.
//   - argmax: per row of a matrix, the LAST index of the maximum
//     (ggml_vec_argmax_f32 updates the index whenever max == x[i]).
//   - count_equal: the number of equal elements of two i32 tensors, i64.
//   - argsort: the indices that sort each row, ascending or descending;
//     ties (which std::sort leaves unspecified) keep index order here.
//   - top_k: the indices of the k largest values of each row, largest
//     first (std::partial_sort with data[a] > data[b]; ties keep index
//     order here), then, as the CPU does to stress that the order is not
//     part of the result, the first two swapped. test-backend-ops compares
//     top_k results as sets.

func inferSum(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpSum, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, [MaxDims]int64{1, 1, 1, 1}, nil
}

func refSum(dst *Tensor, srcs []*Tensor, _ Params) error {
	x := srcs[0]
	row := make([]float32, x.Ne[0])
	var sum64 float64
	var sum32 float32
	for r := int64(0); r < x.NRows(); r++ {
		i1, i2, i3 := rowIndex(x.Ne, r)
		x.Row(i1, i2, i3, row)
		if x.Type == F16 {
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
	if x.Type == F16 {
		dst.SetF32(0, 0, 0, 0, sum32)
	} else {
		dst.SetF32(0, 0, 0, 0, float32(sum64))
	}
	return nil
}

func inferArgmax(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpArgmax, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[2] != 1 || x.Ne[3] != 1 {
		return 0, x.Ne, shapeErr(OpArgmax, "x %s is not a matrix (ne2 = ne3 = 1)", x.ShapeString())
	}
	return I32, [MaxDims]int64{x.Ne[1], 1, 1, 1}, nil
}

func refArgmax(dst *Tensor, srcs []*Tensor, _ Params) error {
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

func inferCountEqual(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpCountEqual, "a", a.Type, I32); err != nil {
		return 0, a.Ne, err
	}
	if b.Type != I32 || b.Ne != a.Ne {
		return 0, a.Ne, shapeErr(OpCountEqual, "b is %s %s, want i32 %s", b.Type, b.ShapeString(), a.ShapeString())
	}
	return I64, [MaxDims]int64{1, 1, 1, 1}, nil
}

func refCountEqual(dst *Tensor, srcs []*Tensor, _ Params) error {
	a, b := srcs[0], srcs[1]
	var n int64
	a.forEach(func(i0, i1, i2, i3 int64) {
		if a.Int(i0, i1, i2, i3) == b.Int(i0, i1, i2, i3) {
			n++
		}
	})
	dst.SetInt(0, 0, 0, 0, n)
	return nil
}

func inferArgsort(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpArgsort, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return I32, x.Ne, nil
}

// sortedRows calls fn with each row of x and the indices 0..ne0-1 of it
// stably sorted by less.
func sortedRows(dst, x *Tensor, less func(row []float32, a, b int32) bool, fn func(i1, i2, i3 int64, idx []int32)) {
	n0 := x.Ne[0]
	refParallel(x.NRows(), n0*8, func(lo, hi int64) {
		row := make([]float32, n0)
		idx := make([]int32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(x.Ne, r)
			x.Row(i1, i2, i3, row)
			for i := range idx {
				idx[i] = int32(i)
			}
			sort.SliceStable(idx, func(i, j int) bool { return less(row, idx[i], idx[j]) })
			fn(i1, i2, i3, idx)
		}
	})
}

func refArgsort(dst *Tensor, srcs []*Tensor, p Params) error {
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

func inferTopK(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpTopK, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	k := p.Int("k")
	if k < 1 || k > x.Ne[0] {
		return 0, x.Ne, &ParamError{Op: OpTopK, Param: "k", Msg: "must be in [1, x.ne0]"}
	}
	return I32, [MaxDims]int64{k, x.Ne[1], x.Ne[2], x.Ne[3]}, nil
}

func refTopK(dst *Tensor, srcs []*Tensor, p Params) error {
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
