package attn

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// AlibiSlopes returns the ALiBi slope function of ggml for n_head heads.
func AlibiSlopes(maxBias float32, nHead int64) func(h int64) float32 {
	if maxBias <= 0 {
		return func(int64) float32 { return 1 }
	}
	nHeadLog2 := int64(1) << uint(math.Floor(math.Log2(float64(nHead))))
	m0 := cpu.Powf32(2, -maxBias/float32(nHeadLog2))
	m1 := cpu.Powf32(2, -(maxBias/2)/float32(nHeadLog2))
	return func(h int64) float32 {
		if h < nHeadLog2 {
			return cpu.Powf32(m0, float32(h+1))
		}
		return cpu.Powf32(m1, float32(2*(h-nHeadLog2)+1))
	}
}

// RefSoftMax is SOFT_MAX's reference math (srcs = x and the optional
// mask and sinks).
func (ks *Kernels) RefSoftMax(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	mask, sinks := ops.MaskSinkTensors(1, srcs, p)
	scale := p.F32("scale")
	slope := AlibiSlopes(p.F32("max_bias"), x.Ne[2])
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0, func(lo, hi int64) {
		rows := cpu.ScratchF32.Get(int(2 * n0))
		defer cpu.ScratchF32.Put(rows)
		w := rows[:n0]
		var mrow []float32
		if mask != nil {
			mrow = rows[n0:]
		}
		buf, mbuf := w, mrow
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			// A dense f32 dst row is worked on in place, and a dense
			// f32 mask row read in place: no copies through buffers.
			w = buf
			inPlace := false
			if v := cpu.F32RowView(dst, i1, i2, i3); v != nil {
				w, inPlace = v, true
			}
			// A dense f32 x row is read where it lies by the vector
			// steps (xr); otherwise, or for the scalar steps, x's row
			// is first copied into w.
			xr := cpu.F32RowView(x, i1, i2, i3)
			if xr == nil {
				x.Row(i1, i2, i3, w)
				xr = w
			}
			var s float32
			if mask != nil {
				mrow = cpu.F32RowView(mask, i1, i2%mask.Ne[2], i3%mask.Ne[3])
				if mrow == nil {
					mrow = mbuf
					mask.Row(i1, i2%mask.Ne[2], i3%mask.Ne[3], mrow)
				}
				s = slope(i2)
			}
			m, done := ks.SoftMaxPrepVec(w, xr, scale, mrow, s)
			if !done {
				copy(w, xr)
				for i := range w {
					w[i] *= scale
				}
				if mask != nil {
					for i := range w {
						w[i] += s * mrow[i]
					}
				}
				m = float32(math.Inf(-1))
				for _, v := range w {
					m = max(m, v)
				}
			}
			var sink float32
			if sinks != nil {
				sink = sinks.F32(i2, 0, 0, 0)
				m = max(m, sink)
			}
			sum := ks.softMaxExpRow(w, m)
			if sinks != nil {
				sum += float64(cpu.Expf32(sink - m))
			}
			inv := float32(1 / sum)
			if !ks.ScaleRowVec(w, inv) {
				for i := range w {
					w[i] *= inv
				}
			}
			if !inPlace {
				dst.SetRow(i1, i2, i3, w)
			}
		}
	})
	return nil
}

// softMaxExpRow sets w[i] = exp(w[i] - m) and returns the float64 sum of
// the exps, as ggml_vec_soft_max_f32 computes them in ggml's AVX-512
// build, the oracle's: the first len(w)&^15 by ggml's vector exp
// (expGGML), their sum 16 at a time (reduce16) added to the float64 sum in
// order, then the rest by expf, each added as it comes. (ggml's AVX2
// build sums 8 at a time, its portable build one by one with expf.)
func (ks *Kernels) softMaxExpRow(w []float32, m float32) float64 {
	n := len(w) &^ (cpu.SiluBlock - 1)
	var sum float64
	if n > 0 {
		sum = ks.SoftMaxExpVec(w[:n], m)
	}
	for i := n; i < len(w); i++ {
		e := cpu.Expf32(w[i] - m)
		w[i] = e
		sum += float64(e)
	}
	return sum
}
