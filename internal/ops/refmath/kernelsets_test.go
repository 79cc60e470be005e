package refmath

import (
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// TestKernelSetsMatchPortable runs the ops of a llama decoder layer (and
// MUL_MAT for every kernel type at n = 1, 2, 7, 32) with every kernel set
// this machine runs (cpu.KernelSets through Limit: on an AVX-512 host the
// AVX2 set too, forced) and with the portable code alone, bit for bit
// (NaNs need only both be NaN). A set the CPU lacks is skipped by name.
// The exceptions are the documented ones: FLASH_ATTN_EXT's vector dot
// products sum in another order, so its inputs are multiples of 1/8
// (exact partial sums); MUL_MAT's f32 kernels (f32 weights and those
// dequantized to f32) outside ggml's tinyBLAS shapes with n ≥ 4 sum
// four columns in another order in the GOEXPERIMENT=simd build
// (archsimd, Kernels.Vec), so those are compared only without it.
func TestKernelSetsMatchPortable(t *testing.T) {
	portable := &Kernels{}
	cases := kernelSetCases()
	type namedSet struct {
		name string
		ks   cpu.Kernels
	}
	var sets []namedSet
	for _, name := range cpu.KernelSets {
		ks, err := Detect().Limit(name)
		if err != nil {
			t.Logf("kernel set %s: %v (not tested here)", name, err)
			continue
		}
		sets = append(sets, namedSet{name, ks})
		if name == "native" && ks.SgemmC == 4 {
			// f16 MUL_MAT's other form of the activations than this
			// CPU's (F16Halves), which other CPUs run.
			ks.F16Halves = !ks.F16Halves
			sets = append(sets, namedSet{fmt.Sprintf("native,f16halves=%v", ks.F16Halves), ks})
		}
	}
	for _, ns := range sets {
		name, set := ns.name, &Kernels{ns.ks}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				if c.vecOrder && set.Vec {
					t.Skip("the archsimd kernels' four-column order")
				}
				got := mustOpWith(t, set, c.op, c.srcs, c.params).ToF32()
				want := mustOpWith(t, portable, c.op, c.srcs, c.params).ToF32()
				for i := range want {
					if !opstest.SameBits(got[i], want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
						t.Fatalf("element %d: %g (%#08x), portable %g (%#08x)", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			})
		}
	}
}

type kernelSetCase struct {
	name   string
	op     ops.Op
	srcs   []*ops.Tensor
	params map[string]any
	// vecOrder: the archsimd kernels sum in another order.
	vecOrder bool
}

// kernelSetCases are TestKernelSetsMatchPortable's ops: shapes that take
// each kernel's vector steps and tails.
func kernelSetCases() []kernelSetCase {
	seed := int64(0)
	x := func(ne ...int64) *ops.Tensor {
		m := int64(1)
		for _, v := range ne {
			m *= v
		}
		seed++
		return ops.FromF32(ops.F32, ne, opstest.RandVals(seed, int(m), -2, 2))
	}
	eighths := func(t ops.Type, ne ...int64) *ops.Tensor {
		v := x(ne...).ToF32()
		for i := range v {
			v[i] = float32(math.Round(float64(v[i])*8)) / 8
		}
		return ops.FromF32(t, ne, v)
	}
	var cs []kernelSetCase
	const k, m = 512, 40
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.BF16, ops.Q8_0, ops.Q4_0, ops.Q4_K, ops.Q6_K, ops.Q5_0, ops.IQ4_NL} {
		a := ops.FromF32(typ, []int64{k, m}, x(k, m).ToF32())
		for _, n := range []int64{1, 2, 7, 32} {
			// f32 and f16 at n = 32 take tinyBLAS's order.
			tiny := (typ == ops.F32 || typ == ops.F16) && n%4 == 0
			quant := typ == ops.Q8_0 || typ == ops.Q4_0 || typ == ops.Q4_K
			cs = append(cs, kernelSetCase{fmt.Sprintf("mul_mat/%s/n=%d", typ, n), ops.OpMulMat, []*ops.Tensor{a, x(k, n)}, nil, n >= 4 && !tiny && !quant})
		}
	}
	for _, typ := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		as := ops.FromF32(typ, []int64{256, 24, 6}, x(256, 24, 6).ToF32())
		ids := ops.FromInts(ops.I32, []int64{2, 3}, []int64{5, 0, 1, 5, 3, 2})
		cs = append(cs, kernelSetCase{"mul_mat_id/" + typ.String(), ops.OpMulMatID, []*ops.Tensor{as, x(256, 2, 3), ids}, nil, false})
	}
	pos := ops.FromInts(ops.I32, []int64{3}, []int64{7, 100, 4095})
	for _, n := range []int64{1, 3} {
		cs = append(cs,
			kernelSetCase{fmt.Sprintf("rms_norm/n=%d", n), ops.OpRMSNorm, []*ops.Tensor{x(4096+16, n)}, map[string]any{"eps": 1e-5}, false},
			kernelSetCase{fmt.Sprintf("norm/n=%d", n), ops.OpNorm, []*ops.Tensor{x(4096+16, n)}, map[string]any{"eps": 1e-5}, false},
			kernelSetCase{fmt.Sprintf("add/n=%d", n), ops.OpAdd, []*ops.Tensor{x(4096+13, n), x(4096+13, n)}, nil, false},
			kernelSetCase{fmt.Sprintf("mul/n=%d", n), ops.OpMul, []*ops.Tensor{x(4096+13, n), x(4096 + 13)}, nil, false},
			kernelSetCase{fmt.Sprintf("unary_silu/n=%d", n), ops.OpUnary, []*ops.Tensor{x(1024+29, n)}, map[string]any{"op": "silu"}, false},
			kernelSetCase{fmt.Sprintf("glu_swiglu/n=%d", n), ops.OpGLU, []*ops.Tensor{x(1024+29, n), x(1024+29, n)}, map[string]any{"op": "swiglu"}, false},
			kernelSetCase{fmt.Sprintf("soft_max/n=%d", n), ops.OpSoftMax, []*ops.Tensor{x(1024+3, n, 4), x(1024+3, n)}, map[string]any{"scale": 0.088388}, false},
			kernelSetCase{fmt.Sprintf("cpy_f32_f16/n=%d", n), ops.OpCpy, []*ops.Tensor{x(128+9, 8, n)}, map[string]any{"type": "f16"}, false},
			kernelSetCase{fmt.Sprintf("get_rows_q8_0/n=%d", n), ops.OpGetRows, []*ops.Tensor{ops.FromF32(ops.Q8_0, []int64{4096, 16}, x(4096, 16).ToF32()),
				ops.FromInts(ops.I32, []int64{n}, []int64{3, 15, 0}[:n])}, nil, false},
		)
	}
	// The ops split over the workers by parallel.Split at 32 rows (two
	// parts on two cores), with the rows' 32-value steps, eight-value
	// steps and tails; mul's b broadcast by rows and by repeats in ne0;
	// cpy to f16; cont of a permuted view.
	perm, err := ops.Permute(x(128, 32, 32), 0, 2, 1, 3)
	if err != nil {
		panic(err)
	}
	cs = append(cs,
		kernelSetCase{"add/n=32", ops.OpAdd, []*ops.Tensor{x(4096+13, 32), x(4096+13, 32)}, nil, false},
		kernelSetCase{"mul/n=32", ops.OpMul, []*ops.Tensor{x(4096+13, 32), x(4096 + 13)}, nil, false},
		kernelSetCase{"mul_repeat/n=32", ops.OpMul, []*ops.Tensor{x(1032, 32, 2), x(344, 1, 2)}, nil, false},
		kernelSetCase{"cpy_f32_f16/n=32", ops.OpCpy, []*ops.Tensor{x(128+9, 8, 32)}, map[string]any{"type": "f16"}, false},
		kernelSetCase{"cont/n=32", ops.OpCont, []*ops.Tensor{perm}, nil, false},
	)
	// set_rows into f16, rows of 1032 values: F16C's 32-value steps (after
	// AVX-512's on 1024 in the native set), its eight-value step.
	cs = append(cs, kernelSetCase{"set_rows_f16/n=7", ops.OpSetRows, []*ops.Tensor{ops.FromF32(ops.F16, []int64{1032, 64}, x(1032, 64).ToF32()), x(1032, 7),
		ops.FromInts(ops.I64, []int64{7}, []int64{5, 63, 0, 17, 2, 40, 9})}, nil, false})
	// silu and swiglu over edge values: the AVX2 kernel's steps with a
	// |x| over 86, an infinity or a NaN take its full method, the others
	// its fast one.
	edges := func(ne ...int64) *ops.Tensor {
		t := x(ne...)
		v := t.ToF32()
		inf, nan := float32(math.Inf(1)), float32(math.NaN())
		sp := []float32{inf, -inf, nan, 0, float32(math.Copysign(0, -1)), 1e30, -1e30, 87, -87, 87.5, -87.5,
			88.8, -88.8, 104, -104, 200, -200, 1e-40, -1e-40, math.SmallestNonzeroFloat32, math.MaxFloat32}
		for i := 0; i < len(v); i += 97 { // steps with one and steps with none
			v[i] = sp[(i/97)%len(sp)]
		}
		return ops.FromF32(ops.F32, ne, v)
	}
	cs = append(cs,
		kernelSetCase{"unary_silu/edges", ops.OpUnary, []*ops.Tensor{edges(1024+29, 3)}, map[string]any{"op": "silu"}, false},
		kernelSetCase{"glu_swiglu/edges", ops.OpGLU, []*ops.Tensor{edges(1024+29, 3), edges(1024+29, 3)}, map[string]any{"op": "swiglu"}, false})
	for _, mode := range []string{"neox", "normal"} {
		cs = append(cs, kernelSetCase{"rope_" + mode, ops.OpRope, []*ops.Tensor{x(128, 32, 3), pos}, map[string]any{"n_dims": 128, "mode": mode, "freq_base": 500000}, false})
	}
	const d, kv = 128, 300
	for _, n := range []int64{1, 5} {
		mask := make([]float32, kv*n)
		for i := range mask {
			if i%7 == 3 {
				mask[i] = float32(math.Inf(-1))
			}
		}
		cs = append(cs, kernelSetCase{fmt.Sprintf("flash_attn_ext/n=%d", n), ops.OpFlashAttnExt,
			[]*ops.Tensor{eighths(ops.F32, d, n, 8), eighths(ops.F16, d, kv, 2), ops.FromF32(ops.F16, []int64{d, kv, 2}, x(d, kv, 2).ToF32()), ops.FromF32(ops.F16, []int64{kv, n}, mask)},
			map[string]any{"scale": 0.125}, false})
	}
	return cs
}
