// Package reftest holds helpers for the tests of the reference math's
// packages (refmath and its families mulmat and attn), which cannot
// import refmath: one op computed as refmath.Compute does with a given
// function, strided copies, flash attention cases and kernel sets.
package reftest

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// Ref is an op's reference math (refmath.RefFunc).
type Ref func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error

// Compute runs op on srcs with the raw params as refmath.Compute does
// (params normalized, ops.OpInfo.NewResult's checks and result),
// computing it with ref.
func Compute(op ops.Op, srcs []*ops.Tensor, raw map[string]any, ref Ref) (*ops.Tensor, error) {
	info, ok := ops.Lookup(string(op))
	if !ok {
		return nil, &ops.UnknownOpError{Name: string(op)}
	}
	p, err := info.Normalize(raw)
	if err != nil {
		return nil, err
	}
	dst, err := info.NewResult(srcs, p)
	if err != nil || info.View {
		return dst, err
	}
	if err := ref(dst, srcs, p); err != nil {
		return nil, err
	}
	return dst, nil
}

// Must is Compute that fails t on an error.
func Must(t testing.TB, op ops.Op, srcs []*ops.Tensor, raw map[string]any, ref Ref) *ops.Tensor {
	t.Helper()
	y, err := Compute(op, srcs, raw, ref)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return y
}

// WantError runs op and checks that it fails with an input error
// containing every fragment.
func WantError(t testing.TB, op ops.Op, srcs []*ops.Tensor, raw map[string]any, ref Ref, fragments ...string) {
	t.Helper()
	_, err := Compute(op, srcs, raw, ref)
	opstest.WantInputError(t, string(op), err, fragments...)
}

// PermutedCopy returns a non-contiguous view with the same logical
// contents as x: the data is stored transposed and viewed back through
// Transpose.
func PermutedCopy(t testing.TB, x *ops.Tensor) *ops.Tensor {
	t.Helper()
	if x.Type.BlockSize() != 1 {
		t.Fatalf("PermutedCopy needs a plain type")
	}
	stored := ops.Cont(ops.Transpose(x)) // [ne1, ne0, ...] contiguous
	v := ops.Transpose(stored)           // back to [ne0, ne1, ...], strided
	if v.IsContiguous() && x.Ne[0] > 1 && x.Ne[1] > 1 {
		t.Fatalf("PermutedCopy gave a contiguous tensor")
	}
	return v
}

// FAKernels is this CPU's kernel set with the AVX-512 flash_attn_ext
// kernels (flashAttnZ: z), the vector ones (vec) and the F16C ones (f16c)
// on or off (on only where the CPU has them).
func FAKernels(z, vec, f16c bool) cpu.Kernels {
	ks := cpu.Detect()
	ks.FAZ, ks.FA, ks.FAF16C = z && ks.FAZ, vec && ks.FA, f16c && ks.FAF16C
	return ks
}

// FACase builds flash_attn_ext sources in the layout of a llama KV cache:
// K and V are views of one [d*nhkv, nkv] f16 cache each (row stride
// d*nhkv*2 bytes, head stride d*2), q is permuted.
func FACase(qv, kv, vv []float32, d, nq, nh, nkv, nhkv int) (q, k, v *ops.Tensor) {
	view := func(vals []float32) *ops.Tensor {
		c := ops.FromF32(ops.F16, []int64{int64(d * nhkv), int64(nkv)}, vals)
		t, err := ops.View(c, []int64{int64(d), int64(nkv), int64(nhkv)}, []uint64{uint64(2 * d * nhkv), uint64(2 * d)}, 0)
		if err != nil {
			panic(err)
		}
		return t
	}
	qc := ops.FromF32(ops.F32, []int64{int64(d), int64(nh), int64(nq)}, qv)
	q, err := ops.Permute(qc, 0, 2, 1, 3)
	if err != nil {
		panic(err)
	}
	return q, view(kv), view(vv)
}

// FATestMask is an [nkv, nq] mask for the flash_attn_ext tests: causal
// over the last nq keys, every eleventh key -inf besides, every fifth
// -1.5.
func FATestMask(nq, nkv int) []float32 {
	inf := float32(math.Inf(-1))
	m := make([]float32, nkv*nq)
	for i := 0; i < nq; i++ {
		for j := 0; j < nkv; j++ {
			switch {
			case j > nkv-nq+i:
				m[i*nkv+j] = inf // causal
			case j%11 == 3:
				m[i*nkv+j] = inf
			case j%5 == 1:
				m[i*nkv+j] = -1.5
			}
		}
	}
	return m
}
