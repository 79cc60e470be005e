package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func (ks *Kernels) refRMSNorm(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	eps := p.F32("eps")
	rmsScale := func(sum float64, n int) float32 {
		mean := float32(sum / float64(n))
		return 1 / sqrtf32(mean+eps)
	}
	if normRowsF32(dst, srcs[0], srcs[0].Ne[0]/4, func(y, x []float32) {
		ks.ScaleInto(y, x, rmsScale(ks.SumSqRow(x), len(x)))
	}) {
		return nil
	}
	normRows(dst, srcs[0], func(y []float32) {
		ks.ScaleInto(y, y, rmsScale(cpu.SumSqScalar(y), len(y)))
	})
	return nil
}

func (ks *Kernels) refNorm(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	eps := p.F32("eps")
	scale := func(y []float32, center float64) {
		variance := float32(center / float64(len(y)))
		ks.ScaleInto(y, y, 1/sqrtf32(variance+eps))
	}
	if normRowsF32(dst, srcs[0], srcs[0].Ne[0]/4, func(y, x []float32) {
		mean := float32(ks.SumRow(x) / float64(len(x)))
		scale(y, ks.CenterSumSqRow(y, x, mean))
	}) {
		return nil
	}
	normRows(dst, srcs[0], func(y []float32) {
		mean := float32(cpu.SumScalar(y) / float64(len(y)))
		scale(y, cpu.CenterSumSqScalar(y, y, mean))
	})
	return nil
}

func (ks *Kernels) refL2Norm(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	eps := p.F32("eps")
	l2Scale := func(sum float64) float32 { return 1 / max(sqrtf32(float32(sum)), eps) }
	if normRowsF32(dst, srcs[0], srcs[0].Ne[0]/4, func(y, x []float32) {
		ks.ScaleInto(y, x, l2Scale(ks.SumSqRow(x)))
	}) {
		return nil
	}
	normRows(dst, srcs[0], func(y []float32) {
		ks.ScaleInto(y, y, l2Scale(cpu.SumSqScalar(y)))
	})
	return nil
}

// normRowsF32 runs f(y, x) on every row x of x and y of dst, both views of
// the tensors' memory (y may be x's memory when dst is x), and reports
// whether it did: it needs f32 rows with dense elements in both (see
// f32RowView). A row costs cost of refParallel's work units (about
// ne0/4 for the vectorised kernels: they run several elements per step).
func normRowsF32(dst, x *ops.Tensor, cost int64, f func(y, x []float32)) bool {
	if !cpu.DenseF32Rows(dst, x) || dst.Ne != x.Ne {
		return false
	}
	cpu.RefParallel(x.NRows(), max(1, cost), func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			f(cpu.F32RowView(dst, i1, i2, i3), cpu.F32RowView(x, i1, i2, i3))
		}
	})
	return true
}

// normRows runs f on a copy of every row of x and stores it in dst.
func normRows(dst, x *ops.Tensor, f func(y []float32)) {
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0, func(lo, hi int64) {
		y := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			x.Row(i1, i2, i3, y)
			f(y)
			dst.SetRow(i1, i2, i3, y)
		}
	})
}

// sqrtf32 is C's sqrtf (sqrt is correctly rounded, so going through
// float64 gives the same float32).
func sqrtf32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

func scaleRow(y []float32, s float32) {
	for i := range y {
		y[i] *= s
	}
}
