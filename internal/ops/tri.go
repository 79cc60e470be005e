package ops

import "fmt"

// tri: keep one triangle of each square matrix and zero the rest. With i0
// the column (ne0) index and i1 the row (ne1) index: lower keeps i0 < i1,
// lower_diag i0 <= i1, upper i0 > i1, upper_diag i0 >= i1
// (reference/case-format.md §1). f32 only, ne0 == ne1 (ggml_tri asserts a
// square matrix).

// TriTypes lists tri's type names (ggml_tri_type without the prefix, in
// lower case).
var TriTypes = []string{"lower", "lower_diag", "upper", "upper_diag"}

func triKeep(name string) func(i0, i1 int64) bool {
	switch name {
	case "lower":
		return func(i0, i1 int64) bool { return i0 < i1 }
	case "lower_diag":
		return func(i0, i1 int64) bool { return i0 <= i1 }
	case "upper":
		return func(i0, i1 int64) bool { return i0 > i1 }
	case "upper_diag":
		return func(i0, i1 int64) bool { return i0 >= i1 }
	}
	return nil
}

func inferTri(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpTri, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[0] != x.Ne[1] {
		return 0, x.Ne, shapeErr(OpTri, "x %s is not square (ne0 = %d, ne1 = %d)", x.ShapeString(), x.Ne[0], x.Ne[1])
	}
	if triKeep(p.Str("type")) == nil {
		return 0, x.Ne, &ParamError{Op: OpTri, Param: "type", Msg: fmt.Sprintf("unknown tri type %q", p.Str("type"))}
	}
	return F32, x.Ne, nil
}

func refTri(dst *Tensor, srcs []*Tensor, p Params) error {
	keep := triKeep(p.Str("type"))
	if keep == nil {
		return &ParamError{Op: OpTri, Param: "type", Msg: fmt.Sprintf("unknown tri type %q", p.Str("type"))}
	}
	x := srcs[0]
	n0 := x.Ne[0]
	refParallel(x.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(x.Ne, r)
			x.Row(i1, i2, i3, row)
			for i0 := range row {
				if !keep(int64(i0), i1) {
					row[i0] = 0
				}
			}
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}
