package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/attn"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// softmax64 is an independent float64 softmax with optional sink logit.
func softmax64(w []float64, sink *float64) []float32 {
	m := math.Inf(-1)
	for _, v := range w {
		m = math.Max(m, v)
	}
	if sink != nil {
		m = math.Max(m, *sink)
	}
	sum := 0.0
	for _, v := range w {
		sum += math.Exp(v - m)
	}
	if sink != nil {
		sum += math.Exp(*sink - m)
	}
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = float32(math.Exp(v-m) / sum)
	}
	return out
}

func TestSoftMax(t *testing.T) {
	inf := float32(math.Inf(-1))
	t.Run("plain", func(t *testing.T) {
		x := ops.FromF32(ops.F32, []int64{3, 1}, []float32{1, 2, 3})
		e := []float64{math.Exp(-2), math.Exp(-1), 1}
		s := e[0] + e[1] + e[2]
		opstest.CheckClose(t, mustOp(t, ops.OpSoftMax, []*ops.Tensor{x}, nil).ToF32(),
			[]float32{float32(e[0] / s), float32(e[1] / s), float32(e[2] / s)}, 1e-6)
	})
	t.Run("uniform with sink", func(t *testing.T) {
		x := ops.FromF32(ops.F32, []int64{2, 1, 1}, []float32{0, 0})
		sinks := ops.FromF32(ops.F32, []int64{1}, []float32{float32(math.Log(2))})
		mask := ops.FromF32(ops.F32, []int64{2, 1}, []float32{0, 0})
		opstest.CheckClose(t, mustOp(t, ops.OpSoftMax, []*ops.Tensor{x, mask, sinks}, nil).ToF32(), []float32{0.25, 0.25}, 1e-6)
	})

	// x [3, 2, 3 heads, 2], mask f16 [3, 2] broadcast over heads and
	// batches, scale 0.5, ALiBi max_bias 8: n_head_log2 = 2, m0 = 1/16,
	// m1 = 1/4, slopes 1/16, 1/256, 1/4.
	xs := opstest.RandVals(3, 3*2*3*2, -2, 2)
	x := ops.FromF32(ops.F32, []int64{3, 2, 3, 2}, xs)
	maskVals := []float32{0, -1, inf, 2, 0, -3}
	mask := ops.FromF32(ops.F16, []int64{3, 2}, maskVals)
	sinkVals := []float32{0.5, -1, 2}
	sinks := ops.FromF32(ops.F32, []int64{3}, sinkVals)
	slopes := []float64{1.0 / 16, 1.0 / 256, 1.0 / 4}
	expect := func(scale float64, useMask, alibi, useSinks bool) []float32 {
		var out []float32
		for i3 := 0; i3 < 2; i3++ {
			for h := 0; h < 3; h++ {
				for i1 := 0; i1 < 2; i1++ {
					w := make([]float64, 3)
					for i0 := range w {
						w[i0] = float64(xs[((i3*3+h)*2+i1)*3+i0]) * scale
						if useMask {
							s := 1.0
							if alibi {
								s = slopes[h]
							}
							w[i0] += s * float64(maskVals[i1*3+i0])
						}
					}
					var sink *float64
					if useSinks {
						v := float64(sinkVals[h])
						sink = &v
					}
					out = append(out, softmax64(w, sink)...)
				}
			}
		}
		return out
	}
	tests := []struct {
		name string
		srcs []*ops.Tensor
		raw  map[string]any
		want []float32
	}{
		{"scale", []*ops.Tensor{x}, map[string]any{"scale": 0.5}, expect(0.5, false, false, false)},
		{"mask", []*ops.Tensor{x, mask}, map[string]any{"scale": 0.5}, expect(0.5, true, false, false)},
		{"alibi", []*ops.Tensor{x, mask}, map[string]any{"scale": 0.5, "max_bias": 8}, expect(0.5, true, true, false)},
		{"alibi and sinks", []*ops.Tensor{x, mask, sinks}, map[string]any{"scale": 0.5, "max_bias": 8}, expect(0.5, true, true, true)},
		{"sinks without a mask", []*ops.Tensor{x, sinks}, map[string]any{"scale": 0.5, "sinks": true}, expect(0.5, false, false, true)},
		{"max_bias without a mask", []*ops.Tensor{x, sinks}, map[string]any{"scale": 0.5, "max_bias": 8, "sinks": true}, expect(0.5, false, false, true)},
		{"f32 mask with padding rows", []*ops.Tensor{x, ops.FromF32(ops.F32, []int64{3, 4}, append(append([]float32{}, maskVals...), 9, 9, 9, 9, 9, 9))}, map[string]any{"scale": 0.5}, expect(0.5, true, false, false)},
		{"strided x", []*ops.Tensor{reftest.PermutedCopy(t, x), mask}, map[string]any{"scale": 0.5}, expect(0.5, true, false, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opstest.CheckClose(t, mustOp(t, ops.OpSoftMax, tt.srcs, tt.raw).ToF32(), tt.want, 2e-6)
		})
	}
	t.Run("per-head mask", func(t *testing.T) {
		// mask [3, 2, 3]: one mask per head, broadcast over the batches.
		m := ops.FromF32(ops.F32, []int64{3, 2, 3}, append(append(append([]float32{}, maskVals...), maskVals...), maskVals...))
		opstest.CheckClose(t, mustOp(t, ops.OpSoftMax, []*ops.Tensor{x, m}, map[string]any{"scale": 0.5}).ToF32(), expect(0.5, true, false, false), 2e-6)
	})
}

func TestAlibiSlopes(t *testing.T) {
	// 8 heads, max_bias 8: the classic 2^-1, 2^-2, ..., 2^-8.
	s := attn.AlibiSlopes(8, 8)
	for h := int64(0); h < 8; h++ {
		if got, want := s(h), float32(math.Pow(2, -float64(h+1))); got != want {
			t.Errorf("slope(%d) = %g, want %g", h, got, want)
		}
	}
	// 12 heads: log2 part 8 (m0 = 2^-1), then m1 = 2^-0.5 to odd powers.
	s = attn.AlibiSlopes(8, 12)
	for h, want := range map[int64]float64{0: 0.5, 7: 1.0 / 256, 8: math.Pow(2, -0.5), 9: math.Pow(2, -1.5), 11: math.Pow(2, -3.5)} {
		if got := s(h); math.Abs(float64(got)-want) > 1e-6*want {
			t.Errorf("12 heads: slope(%d) = %g, want %g", h, got, want)
		}
	}
	if attn.AlibiSlopes(0, 12)(5) != 1 {
		t.Errorf("max_bias 0 must give slope 1")
	}
}

func TestSoftMaxErrors(t *testing.T) {
	x := ops.New(ops.F32, 4, 3, 2)
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{x, ops.New(ops.F32, 5, 3)}, nil, "soft_max: mask.ne0 = 5 != x.ne0 = 4")
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{x, ops.New(ops.F32, 4, 2)}, nil, "mask.ne1 = 2 < x.ne1 = 3")
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{x, ops.New(ops.F32, 4, 3, 3)}, nil, "mask.ne2 = 3 does not divide x.ne2 = 2")
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{x, ops.New(ops.I32, 4, 3)}, nil, "mask is i32, want f32 or f16")
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{x, ops.New(ops.F32, 4, 3), ops.New(ops.F32, 3)}, nil, "sinks is [3, 1, 1, 1], want [2] (one per head, x.ne2)")
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{ops.New(ops.F16, 4)}, nil, "x is f16, want f32")
}

func BenchmarkSoftMax(b *testing.B) {
	x := ops.FromF32(ops.F32, []int64{4096, 512}, opstest.RandVals(1, 4096*512, -4, 4))
	mask := ops.FromF32(ops.F16, []int64{4096, 512}, opstest.RandVals(2, 4096*512, -1, 0))
	dst := ops.New(ops.F32, 4096, 512)
	info, _ := ops.Lookup("soft_max")
	p, _ := info.Normalize(map[string]any{"scale": 0.125})
	b.SetBytes(int64(2*len(x.Buf) + len(mask.Buf)))
	b.ResetTimer()
	for b.Loop() {
		if err := Run(info, dst, []*ops.Tensor{x, mask}, p); err != nil {
			b.Fatal(err)
		}
	}
}
