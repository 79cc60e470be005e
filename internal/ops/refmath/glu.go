package refmath

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// GLUFunc returns the function of a glu sub-op applied to one pair
// (a, b) (nil if the name is unknown). alpha and limit are used by
// swiglu_oai only.
func GLUFunc(name string, alpha, limit float32) func(a, b float32) float32 {
	switch name {
	case "reglu":
		return func(a, b float32) float32 {
			if a > 0 {
				return a * b
			}
			return 0
		}
	case "geglu":
		return func(a, b float32) float32 {
			if a <= -geluTableLimit {
				return 0
			}
			if a >= geluTableLimit {
				return a * b
			}
			return GeluCPU(a) * b
		}
	case "swiglu":
		return func(a, b float32) float32 { return cpu.SiluF32(a) * b }
	case "swiglu_oai":
		return func(a, b float32) float32 {
			a = min(a, limit)
			b = max(min(b, limit), -limit)
			g := a / (1 + cpu.Expf32(alpha*-a))
			return g * (b + 1)
		}
	case "geglu_erf":
		return func(a, b float32) float32 { return geluErfF32(a) * b }
	case "geglu_quick":
		return func(a, b float32) float32 { return GeluQuickCPU(a) * b }
	}
	return nil
}

func (ks *Kernels) refGLU(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	f := GLUFunc(p.Str("op"), p.F32("alpha"), p.F32("limit"))
	if f == nil {
		return &ops.ParamError{Op: ops.OpGLU, Param: "op", Msg: fmt.Sprintf("unknown glu op %q", p.Str("op"))}
	}
	a := srcs[0]
	n := dst.Ne[0]
	swapped := p.Bool("swapped")
	if cpu.DenseF32Rows(srcs...) && cpu.DenseF32Rows(dst) {
		swiglu := p.Str("op") == "swiglu" // the row kernel (a flag, not an allocated method value)
		kern := func(out, x, g []float32) {
			if swiglu {
				ks.SwigluRow(out, x, g)
				return
			}
			g = g[:len(x)]
			for i := range out {
				out[i] = f(x[i], g[i])
			}
		}
		cpu.ForRowChunks(dst.NRows(), n, 4, func(r, lo, hi int64) {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			x := cpu.F32RowView(a, i1, i2, i3)
			var g []float32
			if len(srcs) > 1 {
				g = cpu.F32RowView(srcs[1], i1, i2, i3)
			} else {
				x, g = x[:n], x[n:2*n]
				if swapped {
					x, g = g, x
				}
			}
			kern(cpu.F32RowView(dst, i1, i2, i3)[lo:hi], x[lo:hi], g[lo:hi])
		})
		return nil
	}
	// ggml computes swiglu on f32 rows by its row kernel (silu.go), on f16
	// value by value.
	f32Swiglu := p.Str("op") == "swiglu" && a.Type == ops.F32 && (len(srcs) == 1 || srcs[1].Type == ops.F32)
	cpu.RefParallel(dst.NRows(), n, func(lo, hi int64) {
		ra := make([]float32, a.Ne[0])
		var rb []float32
		if len(srcs) > 1 {
			rb = make([]float32, n)
		}
		out := make([]float32, n)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			a.Row(i1, i2, i3, ra)
			x, g := ra, rb
			if rb == nil {
				x, g = ra[:n], ra[n:]
				if swapped {
					x, g = g, x
				}
			} else {
				srcs[1].Row(i1, i2, i3, rb)
			}
			if f32Swiglu {
				ks.SwigluRow(out, x[:n], g[:n])
			} else {
				for i := range out {
					out[i] = f(x[i], g[i])
				}
			}
			dst.SetRow(i1, i2, i3, out)
		}
	})
	return nil
}
