package ops

import (
	"fmt"
	"math"
	"slices"
)

// --- binary (its math: refmath/binary.go) ---
// add, sub and mul with ggml's repeat semantics: b is broadcast (repeated)
// over a, which needs a.ne[i] % b.ne[i] == 0 in every dimension; the
// result has a's type and shape. Element (i0..i3) of the result is
// a[i0..i3] op b[i0 % b.ne0, i1 % b.ne1, i2 % b.ne2, i3 % b.ne3]. The math
// is float32, as on the CPU.

// inferBinary gives the InferFunc of one of add, sub and mul.
func inferBinary(op Op) InferFunc {
	return func(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) { return inferBinaryOp(op, srcs) }
}

func inferBinaryOp(op Op, srcs []*Tensor) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(op, "a", a.Type, F32, F16); err != nil {
		return 0, a.Ne, err
	}
	if err := wantTypes(op, "b", b.Type, F32, F16); err != nil {
		return 0, a.Ne, err
	}
	for d := 0; d < MaxDims; d++ {
		if b.Ne[d] == 0 || a.Ne[d]%b.Ne[d] != 0 {
			return 0, a.Ne, ShapeErr(op, "b %s cannot be repeated over a %s: a.ne%d = %d is not a multiple of b.ne%d = %d",
				b.ShapeString(), a.ShapeString(), d, a.Ne[d], d, b.Ne[d])
		}
	}
	return a.Type, a.Ne, nil
}

// --- unary (its math: refmath/unary.go) ---
// unary: the elementwise functions ggml-et accepts (reference/
// ggml-et-backend.md §1.2, UNARY), with the CPU's float32 formulas. gelu
// and gelu_quick go through the CPU's 64K-entry f16 tables: the input is
// rounded to f16, the function evaluated in float32 and the result rounded
// to f16 (gelu also returns 0 for x <= -10 and x for x >= 10 without the
// table), reference/case-format.md §2. gelu_erf is exact. round rounds
// halves away from zero; softplus is x for x > 20.

// UnaryOps lists the unary sub-ops, by their ggml names in lower case.
var UnaryOps = []string{
	"abs", "sgn", "neg", "step", "tanh", "elu", "relu", "sigmoid", "gelu", "gelu_quick",
	"silu", "hardswish", "hardsigmoid", "exp", "expm1", "softplus", "gelu_erf",
	"floor", "ceil", "round", "trunc",
}

func inferUnary(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpUnary, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	if !slices.Contains(UnaryOps, p.Str("op")) {
		return 0, x.Ne, &ParamError{Op: OpUnary, Param: "op", Msg: fmt.Sprintf("unknown unary op %q", p.Str("op"))}
	}
	return x.Type, x.Ne, nil
}

// --- glu (its math: refmath/glu.go) ---
// glu: gated linear units, y = f(a)·b elementwise, with the CPU's float32
// formulas (geglu and geglu_quick through the f16 tables, as gelu and
// gelu_quick in unary.go).
//
// Two forms, as ggml builds them:
//   - single tensor [x]: n = x.ne0/2 (rounded down); a is the first n
//     elements of each row and b the next n (swapped: the other way
//     round), an odd x.ne0 leaves the last element out, as in ggml; the
//     result has ne0 = n;
//   - split [a, b] (ggml_glu_split): a and b have the same shape, which is
//     the result's; swapped does not apply.
//
// swiglu_oai (ggml_swiglu_oai, split form only) clamps first:
// a = min(a, limit), b = clamp(b, -limit, limit), y = a·σ(alpha·a)·(b + 1).

// GLUOps lists the glu sub-ops, by their ggml names in lower case.
var GLUOps = []string{"reglu", "geglu", "swiglu", "swiglu_oai", "geglu_erf", "geglu_quick"}

func inferGLU(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a := srcs[0]
	op := p.Str("op")
	if !slices.Contains(GLUOps, op) {
		return 0, a.Ne, &ParamError{Op: OpGLU, Param: "op", Msg: fmt.Sprintf("unknown glu op %q", op)}
	}
	if err := wantTypes(OpGLU, "a", a.Type, F32, F16); err != nil {
		return 0, a.Ne, err
	}
	if len(srcs) == 1 {
		if op == "swiglu_oai" {
			return 0, a.Ne, ShapeErr(OpGLU, "swiglu_oai exists only in split form [a, b]")
		}
		ne := a.Ne
		ne[0] /= 2
		return a.Type, ne, nil
	}
	b := srcs[1]
	if err := wantTypes(OpGLU, "b", b.Type, a.Type); err != nil {
		return 0, a.Ne, err
	}
	if a.Ne != b.Ne {
		return 0, a.Ne, ShapeErr(OpGLU, "split form needs a and b of the same shape, got a %s and b %s", a.ShapeString(), b.ShapeString())
	}
	if p.Bool("swapped") {
		return 0, a.Ne, &ParamError{Op: OpGLU, Param: "swapped", Msg: "applies only to the single-tensor form [x]"}
	}
	return a.Type, a.Ne, nil
}

// --- clamp (its math: refmath/clamp.go) ---
// clamp: y = MAX(MIN(x, max), min) elementwise with C's macro semantics
// (so a NaN input gives max, as on the CPU). f32 or f16 (f16 widens,
// clamps in float32, rounds back); the result has x's type and shape.

func inferClamp(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpClamp, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, x.Ne, nil
}

// --- sqr (its math: refmath/sqr.go) ---
// sqr: y = x·x elementwise, in float32 as ggml's CPU computes it. x may be
// f32 or f16 (f16 widens, squares in float32 and rounds the result back to
// f16) and may be a strided view; the result has x's type and shape.

func inferSqr(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpSqr, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, x.Ne, nil
}

// --- scale (its math: refmath/scale.go) ---
// scale: y = x*scale + bias (bias 0 for plain ggml_scale, where the CPU
// only multiplies). f32 only, as on the CPU; x may be a strided view.

func inferScale(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpScale, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return F32, x.Ne, nil
}

// --- fill (its math: refmath/fill.go) ---
// fill: every element of the result is c (rounded to f16 for an f16
// tensor); x only supplies the type and shape. f32 or f16.

func inferFill(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpFill, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, x.Ne, nil
}

// --- cumsum (its math: refmath/cumsum.go) ---
// cumsum: the running sum along ne0, y[i] = y[i-1] + x[i], accumulated in
// float32 as ggml_vec_cumsum_f32 does. f32 only; same shape.

func inferCumsum(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpCumsum, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return F32, x.Ne, nil
}

// --- diag (its math: refmath/diag.go) ---
// diag: a vector per (i2, i3) becomes a diagonal matrix: x [N, 1, ne2,
// ne3] gives [N, N, ne2, ne3] with result[i0, i1] = x[i1] when i0 == i1
// and 0 elsewhere. f32 only.

func inferDiag(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpDiag, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[1] != 1 {
		return 0, x.Ne, ShapeErr(OpDiag, "x %s has ne1 = %d, want 1 (one vector per matrix)", x.ShapeString(), x.Ne[1])
	}
	return F32, [MaxDims]int64{x.Ne[0], x.Ne[0], x.Ne[2], x.Ne[3]}, nil
}

// --- sumrows (its math: refmath/sumrows.go) ---
// sum_rows and mean reduce every row of ne0 f32 values to one value: the
// result is [1, ne1, ne2, ne3]. As on the CPU (ggml_vec_sum_f32), the sum
// is accumulated in float64 (ggml_float) and rounded to float32; mean then
// divides that float32 sum by (float) ne0.

func inferSumRows(op Op) InferFunc {
	return func(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
		x := srcs[0]
		if err := wantTypes(op, "x", x.Type, F32); err != nil {
			return 0, x.Ne, err
		}
		return F32, [MaxDims]int64{1, x.Ne[1], x.Ne[2], x.Ne[3]}, nil
	}
}

// --- norm (its math: refmath/norm.go) ---
// rms_norm, norm and l2_norm, per row of ne0 elements, as ggml's CPU
// computes them: sums in float64 (ggml_float) over float32 terms, the mean
// or variance rounded to float32, then one float32 scale factor applied to
// the row.
//   rms_norm: scale = 1/sqrtf(Σx²/n + eps), y = x*scale
//   norm:     mean = Σx/n, y = x - mean, scale = 1/sqrtf(Σy²/n + eps), y *= scale
//   l2_norm:  scale = 1/fmaxf(sqrtf(Σx²), eps), y = x*scale

// inferNorm gives the InferFunc of one of rms_norm, norm and l2_norm.
func inferNorm(op Op) InferFunc {
	return func(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
		x := srcs[0]
		if err := wantTypes(op, "x", x.Type, F32); err != nil {
			return 0, x.Ne, err
		}
		return F32, x.Ne, nil
	}
}

// --- groupnorm (its math: refmath/groupnorm.go) ---
// group_norm: the channels (ne2) of each i3 are split into n_groups groups
// of ceil(ne2/n_groups) channels (the last group may be smaller, and
// groups past the last channel are empty); each group's ne0·ne1·channels
// values are normalized together: y = (x - mean) / sqrtf(var + eps). As on
// the CPU, the sums are float64 over float32 terms, mean and variance are
// rounded to float32 and one float32 scale is applied. f32 only.

func inferGroupNorm(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpGroupNorm, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if g := p.Int("n_groups"); g <= 0 {
		return 0, x.Ne, &ParamError{Op: OpGroupNorm, Param: "n_groups", Msg: fmt.Sprintf("%d, want a positive number of groups", g)}
	}
	return F32, x.Ne, nil
}

// --- mathfn (its math: refmath/mathfn.go) ---
// Elementwise ops ggml-et does not implement, with the CPU's float32
// formulas (ggml-cpu/unary-ops.cpp, vec.h): div, sqrt, log, sin, cos,
// leaky_relu, xielu, silu_back, and dup. x may be f32 or f16 (f16 widens,
// is computed in float32 and rounded back, as the CPU's f16 paths do) and
// may be a strided view; the result has x's type and shape.

func inferMath(op Op) InferFunc {
	return func(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
		x := srcs[0]
		if err := wantTypes(op, "x", x.Type, F32, F16); err != nil {
			return 0, x.Ne, err
		}
		return x.Type, x.Ne, nil
	}
}

// softplusF32 is ggml_compute_softplus_f32.
func softplusF32(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + float32(math.Exp(float64(x))))))
}

// XieluOpParams gives the op_params ggml_xielu stores for its arguments
// (alpha_n, alpha_p, beta, eps): beta + softplus(alpha_n), softplus(alpha_p),
// beta, eps. The xielu op's params are those stored values.
func XieluOpParams(alphaN, alphaP, beta, eps float32) [4]float32 {
	return [4]float32{beta + softplusF32(alphaN), softplusF32(alphaP), beta, eps}
}

func inferSiluBack(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	dy, x := srcs[0], srcs[1]
	if err := wantTypes(OpSiluBack, "dy", dy.Type, F32, F16); err != nil {
		return 0, dy.Ne, err
	}
	if x.Type != dy.Type || x.Ne != dy.Ne {
		return 0, dy.Ne, ShapeErr(OpSiluBack, "x is %s %s, want dy's %s %s", x.Type, x.ShapeString(), dy.Type, dy.ShapeString())
	}
	return dy.Type, dy.Ne, nil
}

func inferDup(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	return srcs[0].Type, srcs[0].Ne, nil
}

// --- tri (its math: refmath/tri.go) ---
// tri: keep one triangle of each square matrix and zero the rest. With i0
// the column (ne0) index and i1 the row (ne1) index: lower keeps i0 < i1,
// lower_diag i0 <= i1, upper i0 > i1, upper_diag i0 >= i1
// (reference/case-format.md §1). f32 only, ne0 == ne1 (ggml_tri asserts a
// square matrix).

// TriTypes lists tri's type names (ggml_tri_type without the prefix, in
// lower case).
var TriTypes = []string{"lower", "lower_diag", "upper", "upper_diag"}

func TriKeep(name string) func(i0, i1 int64) bool {
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
		return 0, x.Ne, ShapeErr(OpTri, "x %s is not square (ne0 = %d, ne1 = %d)", x.ShapeString(), x.Ne[0], x.Ne[1])
	}
	if TriKeep(p.Str("type")) == nil {
		return 0, x.Ne, &ParamError{Op: OpTri, Param: "type", Msg: fmt.Sprintf("unknown tri type %q", p.Str("type"))}
	}
	return F32, x.Ne, nil
}

// --- solvetri (its math: refmath/solvetri.go) ---
// solve_tri: X with A·X = B for lower-triangular, non-unit A, per batch
// (dims 2 and 3), by forward substitution in float32 as the CPU does:
// X[i][c] = (B[i][c] - Σ_{t<i} A[i][t]·X[t][c]) / A[i][i]. A is [n, n, B2,
// B3] with A[row i1][col i0] at element (i0, i1); B and X are [k, n, B2,
// B3] (k right-hand-side columns along ne0, n rows along ne1). ggml
// implements only left = true, lower = true, uni = false; other values are
// parameter errors. f32 only; a zero on the diagonal gives ±Inf/NaN, as in
// C.

func inferSolveTri(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpSolveTri, "a", a.Type, F32); err != nil {
		return 0, b.Ne, err
	}
	if err := wantTypes(OpSolveTri, "b", b.Type, F32); err != nil {
		return 0, b.Ne, err
	}
	if !p.Bool("left") || !p.Bool("lower") || p.Bool("uni") {
		return 0, b.Ne, &ParamError{Op: OpSolveTri, Msg: "ggml implements only left=true, lower=true, uni=false"}
	}
	if a.Ne[0] != a.Ne[1] {
		return 0, b.Ne, ShapeErr(OpSolveTri, "a %s is not square", a.ShapeString())
	}
	if b.Ne[1] != a.Ne[1] {
		return 0, b.Ne, ShapeErr(OpSolveTri, "b.ne1 = %d != a.ne1 = %d (b is [k, n], a is [n, n])", b.Ne[1], a.Ne[1])
	}
	if a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3] {
		return 0, b.Ne, ShapeErr(OpSolveTri, "batch dims differ: a %s, b %s", a.ShapeString(), b.ShapeString())
	}
	return F32, b.Ne, nil
}

// --- argsort (its math: refmath/argsort.go) ---
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

func inferArgmax(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpArgmax, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[2] != 1 || x.Ne[3] != 1 {
		return 0, x.Ne, ShapeErr(OpArgmax, "x %s is not a matrix (ne2 = ne3 = 1)", x.ShapeString())
	}
	return I32, [MaxDims]int64{x.Ne[1], 1, 1, 1}, nil
}

func inferCountEqual(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpCountEqual, "a", a.Type, I32); err != nil {
		return 0, a.Ne, err
	}
	if b.Type != I32 || b.Ne != a.Ne {
		return 0, a.Ne, ShapeErr(OpCountEqual, "b is %s %s, want i32 %s", b.Type, b.ShapeString(), a.ShapeString())
	}
	return I64, [MaxDims]int64{1, 1, 1, 1}, nil
}

func inferArgsort(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpArgsort, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return I32, x.Ne, nil
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
