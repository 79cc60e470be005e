package ops

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
		return 0, b.Ne, shapeErr(OpSolveTri, "a %s is not square", a.ShapeString())
	}
	if b.Ne[1] != a.Ne[1] {
		return 0, b.Ne, shapeErr(OpSolveTri, "b.ne1 = %d != a.ne1 = %d (b is [k, n], a is [n, n])", b.Ne[1], a.Ne[1])
	}
	if a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3] {
		return 0, b.Ne, shapeErr(OpSolveTri, "batch dims differ: a %s, b %s", a.ShapeString(), b.ShapeString())
	}
	return F32, b.Ne, nil
}

func refSolveTri(dst *Tensor, srcs []*Tensor, _ Params) error {
	a, b := srcs[0], srcs[1]
	n, k := a.Ne[0], b.Ne[0]
	nb := b.Ne[2] * b.Ne[3]
	refParallel(nb, n*n, func(lo, hi int64) {
		am := make([]float32, n*n)
		bm := make([]float32, k*n)
		x := make([]float32, k*n)
		for w := lo; w < hi; w++ {
			i2, i3 := w%b.Ne[2], w/b.Ne[2]
			for i := int64(0); i < n; i++ {
				a.Row(i, i2, i3, am[i*n:(i+1)*n])
				b.Row(i, i2, i3, bm[i*k:(i+1)*k])
			}
			for c := int64(0); c < k; c++ {
				for i := int64(0); i < n; i++ {
					var sum float32
					for t := int64(0); t < i; t++ {
						sum += am[i*n+t] * x[t*k+c]
					}
					x[i*k+c] = (bm[i*k+c] - sum) / am[i*n+i]
				}
			}
			for i := int64(0); i < n; i++ {
				dst.SetRow(i, i2, i3, x[i*k:(i+1)*k])
			}
		}
	})
	return nil
}
