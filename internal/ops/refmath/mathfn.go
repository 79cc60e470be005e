package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// refMath applies f to every element.
func refMath(f func(float32) float32) RefFunc {
	return func(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
		normRows(dst, srcs[0], func(y []float32) {
			for i, v := range y {
				y[i] = f(v)
			}
		})
		return nil
	}
}

func sinf32(x float32) float32 { return float32(math.Sin(float64(x))) }

func cosf32(x float32) float32 { return float32(math.Cos(float64(x))) }

func refDiv(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	return binaryRows(dst, srcs[0], srcs[1], func(x, y float32) float32 { return x / y })
}

// refLeakyRelu is ggml_vec_leaky_relu_f32: max(x, 0) + slope·min(x, 0).
func refLeakyRelu(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	ns := p.F32("negative_slope")
	return refMath(func(x float32) float32 {
		var pos, neg float32
		if x > 0 {
			pos = x
		}
		if x < 0 {
			neg = x
		}
		return pos + ns*neg
	})(dst, srcs, p)
}

// refXielu is op_xielu with the stored params: x > 0: αp·x² + β·x, else
// (expm1(min(x, eps)) - x)·αn + β·x.
func refXielu(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	an, ap, beta, eps := p.F32("alpha_n"), p.F32("alpha_p"), p.F32("beta"), p.F32("eps")
	return refMath(func(x float32) float32 {
		if x > 0 {
			return ap*x*x + beta*x
		}
		return (cpu.Expm1f32(min(x, eps))-x)*an + beta*x
	})(dst, srcs, p)
}

// refSiluBack is ggml_silu_backward_f32: dy·s·(1 + x·(1 - s)), s = σ(x).
func refSiluBack(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	dy, x := srcs[0], srcs[1]
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0, func(lo, hi int64) {
		rx, rd := make([]float32, n0), make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			x.Row(i1, i2, i3, rx)
			dy.Row(i1, i2, i3, rd)
			for i, v := range rx {
				s := 1 / (1 + cpu.Expf32(-v))
				rd[i] = rd[i] * s * (1 + v*(1-s))
			}
			dst.SetRow(i1, i2, i3, rd)
		}
	})
	return nil
}

func refDup(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	copyRaw(dst, srcs[0])
	return nil
}
