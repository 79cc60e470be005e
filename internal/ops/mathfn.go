package ops

import "math"

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

// refMath applies f to every element.
func refMath(f func(float32) float32) RefFunc {
	return func(dst *Tensor, srcs []*Tensor, _ Params) error {
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

func refDiv(dst *Tensor, srcs []*Tensor, _ Params) error {
	return binaryRows(dst, srcs[0], srcs[1], func(x, y float32) float32 { return x / y })
}

// refLeakyRelu is ggml_vec_leaky_relu_f32: max(x, 0) + slope·min(x, 0).
func refLeakyRelu(dst *Tensor, srcs []*Tensor, p Params) error {
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

// softplusF32 is ggml_compute_softplus_f32.
func softplusF32(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + expf32(x))))
}

// XieluOpParams gives the op_params ggml_xielu stores for its arguments
// (alpha_n, alpha_p, beta, eps): beta + softplus(alpha_n), softplus(alpha_p),
// beta, eps. The xielu op's params are those stored values.
func XieluOpParams(alphaN, alphaP, beta, eps float32) [4]float32 {
	return [4]float32{beta + softplusF32(alphaN), softplusF32(alphaP), beta, eps}
}

// refXielu is op_xielu with the stored params: x > 0: αp·x² + β·x, else
// (expm1(min(x, eps)) - x)·αn + β·x.
func refXielu(dst *Tensor, srcs []*Tensor, p Params) error {
	an, ap, beta, eps := p.F32("alpha_n"), p.F32("alpha_p"), p.F32("beta"), p.F32("eps")
	return refMath(func(x float32) float32 {
		if x > 0 {
			return ap*x*x + beta*x
		}
		return (expm1f32(min(x, eps))-x)*an + beta*x
	})(dst, srcs, p)
}

func inferSiluBack(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	dy, x := srcs[0], srcs[1]
	if err := wantTypes(OpSiluBack, "dy", dy.Type, F32, F16); err != nil {
		return 0, dy.Ne, err
	}
	if x.Type != dy.Type || x.Ne != dy.Ne {
		return 0, dy.Ne, shapeErr(OpSiluBack, "x is %s %s, want dy's %s %s", x.Type, x.ShapeString(), dy.Type, dy.ShapeString())
	}
	return dy.Type, dy.Ne, nil
}

// refSiluBack is ggml_silu_backward_f32: dy·s·(1 + x·(1 - s)), s = σ(x).
func refSiluBack(dst *Tensor, srcs []*Tensor, _ Params) error {
	dy, x := srcs[0], srcs[1]
	n0 := x.Ne[0]
	refParallel(x.NRows(), n0, func(lo, hi int64) {
		rx, rd := make([]float32, n0), make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(x.Ne, r)
			x.Row(i1, i2, i3, rx)
			dy.Row(i1, i2, i3, rd)
			for i, v := range rx {
				s := 1 / (1 + expf32(-v))
				rd[i] = rd[i] * s * (1 + v*(1-s))
			}
			dst.SetRow(i1, i2, i3, rd)
		}
	})
	return nil
}

func inferDup(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	return srcs[0].Type, srcs[0].Ne, nil
}

func refDup(dst *Tensor, srcs []*Tensor, _ Params) error {
	copyRaw(dst, srcs[0])
	return nil
}
