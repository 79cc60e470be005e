package ops

import "math"

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

func refRMSNorm(dst *Tensor, srcs []*Tensor, p Params) error {
	eps := p.F32("eps")
	normRows(dst, srcs[0], func(y []float32) {
		var sum float64
		for _, v := range y {
			sum += float64(v * v)
		}
		mean := float32(sum / float64(len(y)))
		scaleRow(y, 1/sqrtf32(mean+eps))
	})
	return nil
}

func refNorm(dst *Tensor, srcs []*Tensor, p Params) error {
	eps := p.F32("eps")
	normRows(dst, srcs[0], func(y []float32) {
		var sum float64
		for _, v := range y {
			sum += float64(v)
		}
		mean := float32(sum / float64(len(y)))
		var sum2 float64
		for i, v := range y {
			d := v - mean
			y[i] = d
			sum2 += float64(d * d)
		}
		variance := float32(sum2 / float64(len(y)))
		scaleRow(y, 1/sqrtf32(variance+eps))
	})
	return nil
}

func refL2Norm(dst *Tensor, srcs []*Tensor, p Params) error {
	eps := p.F32("eps")
	normRows(dst, srcs[0], func(y []float32) {
		var sum float64
		for _, v := range y {
			sum += float64(v * v)
		}
		scaleRow(y, 1/max(sqrtf32(float32(sum)), eps))
	})
	return nil
}

// normRows runs f on a copy of every row of x and stores it in dst.
func normRows(dst, x *Tensor, f func(y []float32)) {
	n0 := x.Ne[0]
	refParallel(x.NRows(), n0, func(lo, hi int64) {
		y := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(x.Ne, r)
			x.Row(i1, i2, i3, y)
			f(y)
			dst.SetRow(i1, i2, i3, y)
		}
	})
}

func scaleRow(y []float32, s float32) {
	for i := range y {
		y[i] *= s
	}
}

// sqrtf32 is C's sqrtf (sqrt is correctly rounded, so going through
// float64 gives the same float32).
func sqrtf32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
