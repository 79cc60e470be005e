package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func (ks *Kernels) refAdd(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	return binaryRowsKern(dst, srcs[0], srcs[1], &ks.Kernels, (*cpu.Kernels).AddRow, func(x, y float32) float32 { return x + y })
}

func (ks *Kernels) refSub(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	return binaryRowsKern(dst, srcs[0], srcs[1], &ks.Kernels, (*cpu.Kernels).SubRow, func(x, y float32) float32 { return x - y })
}

func (ks *Kernels) refMul(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	return binaryRowsKern(dst, srcs[0], srcs[1], &ks.Kernels, (*cpu.Kernels).MulRow, func(x, y float32) float32 { return x * y })
}

// binaryRows applies f elementwise.
func binaryRows(dst, a, b *ops.Tensor, f func(x, y float32) float32) error {
	return binaryRowsKern(dst, a, b, nil, func(_ *cpu.Kernels, out, x, y []float32) {
		y = y[:len(x)]
		for i := range out {
			out[i] = f(x[i], y[i])
		}
	}, f)
}

// binaryDenseRows is kern (run with ks) on rows [lo, hi) of a and dst
// (f32, dense rows, one shape) with b repeated.
func binaryDenseRows(dst, a, b *ops.Tensor, ks *cpu.Kernels, kern rowKern, lo, hi int64) {
	ne := a.Ne
	n0, m0 := ne[0], b.Ne[0]
	for r := lo; r < hi; r++ {
		i1, i2, i3 := ops.RowIndex(ne, r)
		ra, out := cpu.F32RowView(a, i1, i2, i3), cpu.F32RowView(dst, i1, i2, i3)
		rb := cpu.F32RowView(b, i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3])
		for k := int64(0); k < n0; k += m0 {
			kern(ks, out[k:k+m0], ra[k:k+m0], rb)
		}
	}
}

// rowKern is an element-wise row kernel run with a kernel set: a method
// expression such as (*cpu.Kernels).AddRow (a static function: a method
// value would be allocated at every call).
type rowKern func(ks *cpu.Kernels, out, x, y []float32)

// binaryRowsKern applies f elementwise; kern (run with ks) is f on whole
// float32 rows (out, x, y of one length), used when a, b and dst are f32
// with dense rows (on views of their memory, no copies).
func binaryRowsKern(dst, a, b *ops.Tensor, ks *cpu.Kernels, kern rowKern, f func(x, y float32) float32) error {
	ne := a.Ne
	n0, m0 := ne[0], b.Ne[0]
	if cpu.DenseF32Rows(dst, a, b) && dst.Ne == a.Ne {
		if n, cost := a.NRows(), max(1, n0); cpu.RefInline(n, cost) {
			binaryDenseRows(dst, a, b, ks, kern, 0, n) // no closure to allocate
		} else {
			cpu.RefSplit(n, cost, func(lo, hi int64) { binaryDenseRows(dst, a, b, ks, kern, lo, hi) })
		}
		return nil
	}
	cpu.RefParallel(a.NRows(), n0, func(lo, hi int64) {
		ra := make([]float32, n0)
		rb := make([]float32, m0)
		out := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(ne, r)
			a.Row(i1, i2, i3, ra)
			b.Row(i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3], rb)
			if m0 == n0 {
				for i := range out {
					out[i] = f(ra[i], rb[i])
				}
			} else {
				for i := range out {
					out[i] = f(ra[i], rb[int64(i)%m0])
				}
			}
			dst.SetRow(i1, i2, i3, out)
		}
	})
	return nil
}
