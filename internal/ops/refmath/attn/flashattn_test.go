package attn

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// attn64 is plain float64 attention over row-major slices in ggml order,
// written from the definition: out[:, h, i, b] = Σ_j softmax_j(s_j)·v_j
// with s_j = cap(q·k_j·scale) + slope_h·mask[j, i]; a sink (sinks[h],
// when sinks is not nil) is one more logit in the softmax with no value.
func attn64(q, k, v, mask []float32, dk, dv, nq, nh, nkv, nhkv int, scale, softcap float64, slopes []float64, sinks ...float32) []float32 {
	out := make([]float32, dv*nh*nq)
	for h := 0; h < nh; h++ {
		hk := h / (nh / nhkv)
		for i := 0; i < nq; i++ {
			s := make([]float64, nkv)
			m := math.Inf(-1)
			for j := range s {
				dot := 0.0
				for d := 0; d < dk; d++ {
					dot += float64(q[(h*nq+i)*dk+d]) * float64(k[(hk*nkv+j)*dk+d])
				}
				x := dot * scale
				if softcap != 0 {
					x = softcap * math.Tanh(x/softcap)
				}
				if mask != nil {
					x += slopes[h] * float64(mask[i*nkv+j])
				}
				s[j] = x
				m = math.Max(m, x)
			}
			sum := 0.0
			if sinks != nil {
				m = math.Max(m, float64(sinks[h]))
				sum = math.Exp(float64(sinks[h]) - m)
			}
			for j := range s {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			for d := 0; d < dv; d++ {
				acc := 0.0
				for j := range s {
					acc += s[j] * float64(v[(hk*nkv+j)*dv+d])
				}
				out[(i*nh+h)*dv+d] = float32(acc / sum)
			}
		}
	}
	return out
}

func TestFlashAttnLayout(t *testing.T) {
	// One key: the output of query i, head h is v of kv head h/2, placed
	// at dst[:, h, i] (the permuted layout).
	q := ops.FromF32(ops.F32, []int64{2, 3, 4}, opstest.RandVals(51, 2*3*4, -1, 1))
	k := ops.FromF32(ops.F16, []int64{2, 1, 2}, []float32{1, 2, 3, 4})
	v := ops.FromF32(ops.F16, []int64{3, 1, 2}, []float32{1, 2, 3, 10, 20, 30})
	y := mustOp(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, v}, map[string]any{"scale": 1})
	if y.Ne != [4]int64{3, 4, 3, 1} {
		t.Fatalf("shape %s, want [3, 4, 3, 1]", y.ShapeString())
	}
	var want []float32
	for i := 0; i < 3; i++ {
		want = append(want, 1, 2, 3, 1, 2, 3, 10, 20, 30, 10, 20, 30)
	}
	opstest.CheckClose(t, y.ToF32(), want, 0)
}

func TestFlashAttn(t *testing.T) {
	const dk, dv, nq, nh, nkv, nhkv = 32, 16, 3, 4, 5, 2
	qv := opstest.RandVals(52, dk*nq*nh, -1, 1)
	kv := opstest.RandVals(53, dk*nkv*nhkv, -1, 1)
	vv := opstest.RandVals(54, dv*nkv*nhkv, -1, 1)
	inf := float32(math.Inf(-1))
	maskVals := []float32{
		0, 0, inf, inf, inf,
		0, -1, 0, inf, inf,
		0, 0, 0, -2, 0,
		9, 9, 9, 9, 9, // padding row, unused
	}
	q := ops.FromF32(ops.F32, []int64{dk, nq, nh}, qv)
	mask := ops.FromF32(ops.F16, []int64{nkv, 4}, maskVals)
	ones := []float64{1, 1, 1, 1}
	alibi := []float64{math.Pow(2, -4), math.Pow(2, -8), math.Pow(2, -12), math.Pow(2, -16)} // max_bias 16, 4 heads
	tests := []struct {
		name    string
		kvType  ops.Type
		mask    bool
		sinks   bool
		raw     map[string]any
		softcap float64
		slopes  []float64
		maxNMSE float64
	}{
		{"f16 no mask", ops.F16, false, false, map[string]any{"scale": 0.25}, 0, ones, 1e-5},
		{"f16 mask", ops.F16, true, false, map[string]any{"scale": 0.25}, 0, ones, 1e-5},
		{"f16 alibi", ops.F16, true, false, map[string]any{"scale": 0.25, "max_bias": 16}, 0, alibi, 1e-5},
		{"f16 softcap", ops.F16, true, false, map[string]any{"scale": 0.25, "logit_softcap": 2}, 2, ones, 1e-5},
		{"f32 kv", ops.F32, true, false, map[string]any{"scale": 0.25}, 0, ones, 1e-11},
		{"f16 mask sinks", ops.F16, true, true, map[string]any{"scale": 0.25}, 0, ones, 1e-5},
		{"f32 sinks no mask", ops.F32, false, true, map[string]any{"scale": 0.25, "sinks": true}, 0, ones, 1e-11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := ops.FromF32(tt.kvType, []int64{dk, nkv, nhkv}, kv)
			v := ops.FromF32(tt.kvType, []int64{dv, nkv, nhkv}, vv)
			srcs := []*ops.Tensor{q, k, v}
			var m, sk []float32
			if tt.mask {
				srcs = append(srcs, mask)
				m = maskVals
			}
			if tt.sinks {
				// Sinks above and below the row maxima: both branches.
				sk = []float32{-3, 4, 0.5, -0.25}
				srcs = append(srcs, ops.FromF32(ops.F32, []int64{nh}, sk))
			}
			y := mustOp(t, ops.OpFlashAttnExt, srcs, tt.raw)
			want := attn64(qv, k.ToF32(), v.ToF32(), m, dk, dv, nq, nh, nkv, nhkv, 0.25, tt.softcap, tt.slopes, sk...)
			if y.Ne != [4]int64{dv, nh, nq, 1} {
				t.Fatalf("shape %s", y.ShapeString())
			}
			if e := ops.NMSE(y.ToF32(), want); !(e <= tt.maxNMSE) {
				t.Fatalf("NMSE %g > %g\n got %v\nwant %v", e, tt.maxNMSE, y.ToF32()[:8], want[:8])
			}
			// A strided q gives the same bytes.
			ys := mustOp(t, ops.OpFlashAttnExt, append([]*ops.Tensor{reftest.PermutedCopy(t, q)}, srcs[1:]...), tt.raw)
			opstest.CheckClose(t, ys.ToF32(), y.ToF32(), 0)
		})
	}
	t.Run("fully masked row is zero", func(t *testing.T) {
		k := ops.FromF32(ops.F16, []int64{dk, nkv, nhkv}, kv)
		v := ops.FromF32(ops.F16, []int64{dv, nkv, nhkv}, vv)
		allInf := make([]float32, nkv*nq)
		for i := range allInf {
			allInf[i] = inf
		}
		y := mustOp(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, v, ops.FromF32(ops.F32, []int64{nkv, nq}, allInf)}, map[string]any{"scale": 1})
		for i, x := range y.ToF32() {
			if x != 0 {
				t.Fatalf("element %d = %g, want 0", i, x)
			}
		}
	})
}

func TestFlashAttnErrors(t *testing.T) {
	q := ops.New(ops.F32, 32, 3, 4)
	k := ops.New(ops.F16, 32, 5, 2)
	v := ops.New(ops.F16, 16, 5, 2)
	p := map[string]any{"scale": 1}
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, ops.New(ops.F16, 16, 5, 2), v}, p, "flash_attn_ext: k.ne0 = 16 != q.ne0 = 32 (d_k)")
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, ops.New(ops.F16, 16, 4, 2)}, p, "v.ne1 = 4 != k.ne1 = 5 (n_kv)")
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, ops.New(ops.F16, 32, 5, 3), ops.New(ops.F16, 16, 5, 3)}, p, "k.ne2 = 3 does not divide q.ne2 = 4")
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, v, ops.New(ops.F16, 4, 3)}, p, "mask.ne0 = 4 != n_kv = 5")
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, v, ops.New(ops.F16, 5, 2)}, p, "mask.ne1 = 2 < n_q = 3")
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, ops.New(ops.I32, 32, 5, 2), v}, p, "k is i32, want a float or quantized type")
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, v, ops.New(ops.F16, 5, 3), ops.New(ops.F32, 3)}, p, "sinks is [3, 1, 1, 1], want [4]")
	// Quantized K/V plan (ggml accepts them) but have no host math.
	if _, err := reftest.Compute(ops.OpFlashAttnExt, []*ops.Tensor{q, ops.New(ops.Q8_0, 32, 5, 2), ops.New(ops.Q8_0, 32, 5, 2)}, p, host.RefFlashAttn); err == nil || !errors.As(err, new(*ops.NoHostMathError)) {
		t.Errorf("q8_0 K/V: error %v, want a NoHostMathError", err)
	}
	wantOpError(t, ops.OpFlashAttnExt, []*ops.Tensor{q, k, v}, nil, "param scale: required")
	info, _ := ops.Lookup("flash_attn_ext")
	if c := info.Cost(nil, []*ops.Tensor{q, k, v}, nil); c.Flops != 2*3*4*5*(32+16) {
		t.Errorf("flops = %d", c.Flops)
	}
}

// faKernels is this CPU's kernel set with the AVX-512 flash_attn_ext
// kernels (flashAttnZ: z), the vector ones (vec) and the F16C ones (f16c)
// on or off (on only where the CPU has them).
func faKernels(z, vec, f16c bool) *Kernels {
	return &Kernels{reftest.FAKernels(z, vec, f16c)}
}

// scalarFA is this CPU's kernel set with RefFlashAttn's scalar loop
// alone.
func scalarFA() *Kernels { return faKernels(false, false, false) }

// headMajor reorders cache values [nkv][nhkv][d] to [nhkv][nkv][d] and q
// [nq][nh][d] to [nh][nq][d], the layouts attn64 reads.
func headMajor(x []float32, d, n1, n2 int) []float32 {
	out := make([]float32, len(x))
	for i := 0; i < n1; i++ {
		for h := 0; h < n2; h++ {
			copy(out[(h*n1+i)*d:(h*n1+i+1)*d], x[(i*n2+h)*d:(i*n2+h+1)*d])
		}
	}
	return out
}

// TestFlashAttnF16C: the F16C kernels (flashattn_amd64.go, where the CPU
// has them) against an independent float64 attention and against the
// scalar loop, as TestFlashAttnVec does the vector ones: within rounding
// where the dot products' order differs, bit for bit where every partial
// sum of the dot products is exact (q and k multiples of 1/8), with
// random V and with V values that drive the f16 accumulators through
// zeros, subnormals, overflow and infinities; d = 68 takes the scalar
// tails of both passes.
func TestFlashAttnF16C(t *testing.T) {
	if !host.FAF16C {
		t.Skip("no F16C on this CPU or architecture")
	}
	testFlashAttnPath(t, "F16C", []int{64, 68}, faKernels(false, false, true))
}

// TestFlashAttnZ is TestFlashAttnF16C for the AVX-512 kernels
// (flashAttnZ), at d = 64 and 96 (d a multiple of 32; 96 is three of the
// V pass's column blocks).
func TestFlashAttnZ(t *testing.T) {
	if !host.FAZ {
		t.Skip("no AVX-512 on this CPU or architecture")
	}
	testFlashAttnPath(t, "AVX-512", []int{64, 96}, faKernels(true, false, false))
}

// TestFlashAttnZChunks: flashAttnZ over more keys than one V chunk
// (faChunkZ) and with a last tile of one row (three query heads a K/V
// head, three positions: tiles of 4, 4, 1), bit for bit against the
// scalar loop with exact dot products, without a mask and with
// faTestMask's (keys masked out for some rows only: the per-row updates).
func TestFlashAttnZChunks(t *testing.T) {
	if !host.FAZ {
		t.Skip("no AVX-512 on this CPU or architecture")
	}
	const d, nq, nh, nhkv = 32, 3, 6, 2
	nkv := faChunkZ + 45
	exact := func(seed int64, n int) []float32 {
		x := opstest.RandVals(seed, n, -1, 1)
		for i := range x {
			x[i] = float32(math.Round(float64(x[i])*8)) / 8
		}
		return x
	}
	q, k, v := reftest.FACase(exact(61, d*nh*nq), exact(62, d*nhkv*nkv), opstest.RandVals(63, d*nhkv*nkv, -1, 1), d, nq, nh, nkv, nhkv)
	raw := map[string]any{"scale": 0.125}
	for _, srcs := range [][]*ops.Tensor{{q, k, v}, {q, k, v, ops.FromF32(ops.F16, []int64{int64(nkv), nq}, reftest.FATestMask(nq, nkv))}} {
		var got, scalar *ops.Tensor
		got = mustOpWith(t, faKernels(true, false, false), ops.OpFlashAttnExt, srcs, raw)
		scalar = mustOpWith(t, scalarFA(), ops.OpFlashAttnExt, srcs, raw)
		g, w := got.ToF32(), scalar.ToF32()
		for i := range g {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				t.Fatalf("%d sources, element %d: AVX-512 %g, scalar %g", len(srcs), i, g[i], w[i])
			}
		}
	}
}

// testFlashAttnPath checks the flash_attn_ext path that ks runs against
// the scalar loop and float64 math (see TestFlashAttnF16C).
func testFlashAttnPath(t *testing.T, path string, ds []int, ks *Kernels) {
	const nq, nh, nhkv, nkv = 3, 8, 2, 77
	maskVals := reftest.FATestMask(nq, nkv)
	// A mask that rises along the keys makes most of them a new maximum,
	// so that the accumulator is rescaled (rounded twice) at most keys.
	riseVals := make([]float32, nkv*nq)
	for i := range riseVals {
		riseVals[i] = float32(i%nkv) / 4
	}
	sinkVals := []float32{-3, 4, 0.5, -0.25, 9, -9, 0, 1}
	ones := make([]float64, nh)
	for i := range ones {
		ones[i] = 1
	}
	cfgs := []struct {
		name          string
		hasMask       bool
		mask          ops.Type
		rise          bool
		sinks         bool
		softcap, bias float64
	}{
		{"no mask", false, ops.F16, false, false, 0, 0},
		{"f16 mask", true, ops.F16, false, false, 0, 0},
		{"f32 mask sinks", true, ops.F32, false, true, 0, 0},
		{"softcap", true, ops.F16, false, false, 3, 0},
		{"alibi", true, ops.F16, false, false, 0, 8},
		{"rising f32 mask", true, ops.F32, true, false, 0, 0},
	}
	for _, d := range ds {
		for _, data := range []string{"random", "exact dots", "exact dots, hard V"} {
			exact := data != "random"
			qv := opstest.RandVals(81, d*nh*nq, -1, 1)
			kv := opstest.RandVals(82, d*nhkv*nkv, -1, 1)
			vv := opstest.RandVals(83, d*nhkv*nkv, -1, 1)
			if exact {
				for _, x := range [][]float32{qv, kv} {
					for i := range x {
						x[i] = float32(math.Round(float64(x[i])*8)) / 8
					}
				}
			}
			if data == "exact dots, hard V" {
				faHardV(vv, d, true)
			}
			q, k, v := reftest.FACase(qv, kv, vv, d, nq, nh, nkv, nhkv)
			for _, c := range cfgs {
				t.Run(fmt.Sprintf("d=%d/%s/%s", d, data, c.name), func(t *testing.T) {
					raw := map[string]any{"scale": 0.125, "logit_softcap": c.softcap, "max_bias": c.bias}
					srcs := []*ops.Tensor{q, k, v}
					var m, sk []float32
					if c.hasMask {
						m = maskVals
						if c.rise {
							m = riseVals
						}
						srcs = append(srcs, ops.FromF32(c.mask, []int64{nkv, nq}, m))
					}
					if c.sinks {
						sk = sinkVals
						srcs = append(srcs, ops.FromF32(ops.F32, []int64{nh}, sinkVals))
					}
					var got, scalar *ops.Tensor
					got = mustOpWith(t, ks, ops.OpFlashAttnExt, srcs, raw)
					scalar = mustOpWith(t, scalarFA(), ops.OpFlashAttnExt, srcs, raw)
					g, w := got.ToF32(), scalar.ToF32()
					if exact {
						for i := range g {
							if math.Float32bits(g[i]) != math.Float32bits(w[i]) && !(g[i] != g[i] && w[i] != w[i]) {
								t.Fatalf("element %d: %s %g, scalar %g", i, path, g[i], w[i])
							}
						}
						return
					}
					if e := ops.NMSE(g, w); !(e <= 1e-6) {
						t.Errorf("%s vs scalar: NMSE %g > 1e-6", path, e)
					}
					if c.bias != 0 {
						return // attn64 takes the slopes; the scalar loop is the check here
					}
					want := attn64(headMajor(qv, d, nq, nh), k.ToF32(), v.ToF32(), m, d, d, nq, nh, nkv, nhkv, 0.125, c.softcap, ones, sk...)
					if e := ops.NMSE(g, want); !(e <= 1e-5) {
						t.Errorf("%s vs float64: NMSE %g > 1e-5", path, e)
					}
				})
			}
		}
	}
}

// TestFlashAttnF16CBroadcast: K and V heads broadcast differently (two K
// heads, four V heads), which flashAttnF16C runs a row at a time, against
// the scalar loop.
func TestFlashAttnF16CBroadcast(t *testing.T) {
	if !host.FAF16C {
		t.Skip("no F16C on this CPU or architecture")
	}
	const d, nq, nh, nkv = 64, 2, 8, 21
	qv := opstest.RandVals(91, d*nh*nq, -1, 1)
	q, k, _ := reftest.FACase(qv, opstest.RandVals(92, d*2*nkv, -1, 1), opstest.RandVals(93, d*2*nkv, -1, 1), d, nq, nh, nkv, 2)
	_, _, v := reftest.FACase(qv, opstest.RandVals(94, d*4*nkv, -1, 1), opstest.RandVals(95, d*4*nkv, -1, 1), d, nq, nh, nkv, 4)
	raw := map[string]any{"scale": 0.125}
	var got, scalar *ops.Tensor
	got = mustOpWith(t, faKernels(false, false, true), ops.OpFlashAttnExt, []*ops.Tensor{q, k, v}, raw)
	scalar = mustOpWith(t, scalarFA(), ops.OpFlashAttnExt, []*ops.Tensor{q, k, v}, raw)
	if e := ops.NMSE(got.ToF32(), scalar.ToF32()); !(e <= 1e-6) {
		t.Errorf("F16C vs scalar: NMSE %g > 1e-6", e)
	}
}

// faHardV sets V values (rows of d) that drive f16 accumulators through
// cancellation, subnormals, overflow and infinity: ±0.25, subnormal
// halves, 60000, and +inf in lane 5 (and the last lane, when last).
func faHardV(vv []float32, d int, last bool) {
	for i := range vv {
		switch i % 7 {
		case 0:
			vv[i] = 0.25
		case 1:
			vv[i] = -0.25
		case 2:
			vv[i] = 3e-6 * vv[i] // subnormal halves
		case 3:
			vv[i] = 60000
		}
		if i%d == 5 || last && i%d == d-1 {
			vv[i] = float32(math.Inf(1))
		}
	}
}
