//go:build goexperiment.simd && amd64

package attn

import (
	"math"
	"simd/archsimd"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// TestFlashAttnVec: the AVX2 kernels (where the CPU has them) against an
// independent float64 attention, and against the scalar loop: within
// rounding where the dot products' order differs, and bit for bit where
// the dot products are exact in any order (small dyadic q and k), with V
// values that drive the f16 accumulators through zeros, subnormals and
// overflow (the lanes the vector code hands to scalar code).
func TestFlashAttnVec(t *testing.T) {
	if !host.FA {
		t.Skip("no AVX2/FMA on this CPU")
	}
	const d, nq, nh, nhkv, nkv = 64, 3, 8, 2, 77
	maskVals := reftest.FATestMask(nq, nkv)
	ones := make([]float64, nh)
	for i := range ones {
		ones[i] = 1
	}
	type cfg struct {
		name    string
		hasMask bool
		mask    ops.Type
		sinks   bool
		raw     map[string]any
		softcap float64
	}
	cfgs := []cfg{
		{"no mask", false, ops.F16, false, map[string]any{"scale": 0.125}, 0},
		{"f16 mask", true, ops.F16, false, map[string]any{"scale": 0.125}, 0},
		{"f32 mask sinks", true, ops.F32, true, map[string]any{"scale": 0.125}, 0},
		{"softcap", true, ops.F16, false, map[string]any{"scale": 0.125, "logit_softcap": 3}, 3},
	}
	run := func(t *testing.T, c cfg, q, k, v *ops.Tensor) (vec, scalar *ops.Tensor) {
		srcs := []*ops.Tensor{q, k, v}
		if c.hasMask {
			srcs = append(srcs, ops.FromF32(c.mask, []int64{nkv, nq}, maskVals))
		}
		if c.sinks {
			srcs = append(srcs, ops.FromF32(ops.F32, []int64{nh}, []float32{-3, 4, 0.5, -0.25, 9, -9, 0, 1}))
		}
		vec = mustOpWith(t, faKernels(false, true, false), ops.OpFlashAttnExt, srcs, c.raw)
		scalar = mustOpWith(t, scalarFA(), ops.OpFlashAttnExt, srcs, c.raw)
		return vec, scalar
	}
	t.Run("random", func(t *testing.T) {
		qv := opstest.RandVals(71, d*nh*nq, -1, 1)
		kv := opstest.RandVals(72, d*nhkv*nkv, -1, 1)
		vv := opstest.RandVals(73, d*nhkv*nkv, -1, 1)
		q, k, v := reftest.FACase(qv, kv, vv, d, nq, nh, nkv, nhkv)
		for _, c := range cfgs {
			t.Run(c.name, func(t *testing.T) {
				vec, scalar := run(t, c, q, k, v)
				var m []float32
				if c.hasMask {
					m = maskVals
				}
				var sk []float32
				if c.sinks {
					sk = []float32{-3, 4, 0.5, -0.25, 9, -9, 0, 1}
				}
				// k.ToF32() of the view is [nhkv][nkv][d], as attn64 reads it.
				want := attn64(headMajor(qv, d, nq, nh), k.ToF32(), v.ToF32(), m, d, d, nq, nh, nkv, nhkv, 0.125, c.softcap, ones, sk...)
				if e := ops.NMSE(vec.ToF32(), want); !(e <= 1e-5) {
					t.Errorf("vector vs float64: NMSE %g > 1e-5", e)
				}
				if e := ops.NMSE(vec.ToF32(), scalar.ToF32()); !(e <= 1e-6) {
					t.Errorf("vector vs scalar: NMSE %g > 1e-6", e)
				}
			})
		}
	})
	t.Run("one query, one head per KV head", func(t *testing.T) {
		// Tiles of one row (faDots1), padded to four in the V pass.
		const nh1 = 2
		qv := opstest.RandVals(77, d*nh1, -1, 1)
		kv := opstest.RandVals(78, d*nh1*nkv, -1, 1)
		vv := opstest.RandVals(79, d*nh1*nkv, -1, 1)
		q, k, v := reftest.FACase(qv, kv, vv, d, 1, nh1, nkv, nh1)
		raw := map[string]any{"scale": 0.125}
		var vec, scalar *ops.Tensor
		vec = mustOpWith(t, faKernels(false, true, false), ops.OpFlashAttnExt, []*ops.Tensor{q, k, v}, raw)
		scalar = mustOpWith(t, scalarFA(), ops.OpFlashAttnExt, []*ops.Tensor{q, k, v}, raw)
		want := attn64(headMajor(qv, d, 1, nh1), k.ToF32(), v.ToF32(), nil, d, d, 1, nh1, nkv, nh1, 0.125, 0, ones[:nh1])
		if e := ops.NMSE(vec.ToF32(), want); !(e <= 1e-5) {
			t.Errorf("vector vs float64: NMSE %g > 1e-5", e)
		}
		if e := ops.NMSE(vec.ToF32(), scalar.ToF32()); !(e <= 1e-6) {
			t.Errorf("vector vs scalar: NMSE %g > 1e-6", e)
		}
	})
	t.Run("exact dots, hard accumulators", func(t *testing.T) {
		// q and k are multiples of 1/8 in [-1, 1]: every partial sum of
		// their products is exact in float32, so both paths get the same
		// scores. V mixes cancelling values, f16 subnormals and values
		// whose sums overflow f16.
		qv := opstest.RandVals(74, d*nh*nq, -8, 8)
		kv := opstest.RandVals(75, d*nhkv*nkv, -8, 8)
		for i := range qv {
			qv[i] = float32(math.Round(float64(qv[i]))) / 8
		}
		for i := range kv {
			kv[i] = float32(math.Round(float64(kv[i]))) / 8
		}
		vv := opstest.RandVals(76, d*nhkv*nkv, -1, 1)
		faHardV(vv, d, false)
		q, k, v := reftest.FACase(qv, kv, vv, d, nq, nh, nkv, nhkv)
		for _, c := range cfgs {
			t.Run(c.name, func(t *testing.T) {
				vec, scalar := run(t, c, q, k, v)
				g, w := vec.ToF32(), scalar.ToF32()
				for i := range g {
					if math.Float32bits(g[i]) != math.Float32bits(w[i]) && !(g[i] != g[i] && w[i] != w[i]) {
						t.Fatalf("element %d: vector %g, scalar %g", i, g[i], w[i])
					}
				}
			})
		}
	})
}

// TestRoundF16x8Max: roundF16x8Max flags exactly the lanes whose |x| is
// outside [2^-14, 65520) (the bits 0x38800000 to 0x477fefff) and gives
// RoundF16's bits in all the others, on every value near the bounds and
// a spread of others (both signs); a flag once set stays set.
func TestRoundF16x8Max(t *testing.T) {
	if !host.FA {
		t.Skip("no AVX2/FMA on this CPU")
	}
	var xs []uint32
	for _, b := range []uint32{0, 1, 0x00800000, 0x38800000, 0x38800001, 0x38fff000, 0x3f800000, 0x477fe000, 0x477ff000, 0x7f800000, 0x7fc00000} {
		for d := uint32(0); d < 1<<13; d++ {
			xs = append(xs, b+d-1<<12)
		}
	}
	for x := uint32(0); x < 0x7fffffff-1<<20; x += 1<<20 - 3 {
		xs = append(xs, x)
	}
	n := len(xs)
	for i := 0; i < n; i++ {
		xs = append(xs, xs[i]|0x80000000)
	}
	for len(xs)%8 != 0 {
		xs = append(xs, 0x3f800000)
	}
	lsb, half, hiMask := roundF16Consts()
	lo2, lim2 := normalF16Consts()
	first := archsimd.BroadcastInt32x8(math.MinInt32)
	var in, out [8]float32
	var flags [8]int32
	for i := 0; i < len(xs); i += 8 {
		for l := range in {
			in[l] = math.Float32frombits(xs[i+l])
		}
		r, w := roundF16x8Max(archsimd.LoadFloat32x8(&in), lsb, half, hiMask, lo2, first)
		r.Store(&out)
		w.Greater(lim2).ToInt32x8().Store(&flags)
		archsimd.ClearAVXUpperBits()
		for l := range in {
			a := xs[i+l] & 0x7fffffff
			bad := a < 0x38800000 || a > 0x477fefff
			if (flags[l] != 0) != bad {
				t.Fatalf("%#08x (lane %d of batch %d): flagged %v, want %v", xs[i+l], l, i/8, flags[l] != 0, bad)
			}
			if !bad && math.Float32bits(out[l]) != math.Float32bits(ops.RoundF16(in[l])) {
				t.Fatalf("%#08x: got %#08x, RoundF16 %#08x", xs[i+l], math.Float32bits(out[l]), math.Float32bits(ops.RoundF16(in[l])))
			}
		}
	}
	// A flagged lane stays flagged through later normal values.
	for l := range in {
		in[l] = 1e-6
	}
	_, w := roundF16x8Max(archsimd.LoadFloat32x8(&in), lsb, half, hiMask, lo2, first)
	for l := range in {
		in[l] = 1.5
	}
	_, w = roundF16x8Max(archsimd.LoadFloat32x8(&in), lsb, half, hiMask, lo2, w)
	w.Greater(lim2).ToInt32x8().Store(&flags)
	archsimd.ClearAVXUpperBits()
	for l, f := range flags {
		if f == 0 {
			t.Fatalf("lane %d: the flag of 1e-6 was lost", l)
		}
	}
}
