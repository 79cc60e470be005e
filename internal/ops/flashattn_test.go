package ops

import (
	"errors"
	"math"
	"testing"
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
	q := FromF32(F32, []int64{2, 3, 4}, randVals(51, 2*3*4, -1, 1))
	k := FromF32(F16, []int64{2, 1, 2}, []float32{1, 2, 3, 4})
	v := FromF32(F16, []int64{3, 1, 2}, []float32{1, 2, 3, 10, 20, 30})
	y := mustOp(t, OpFlashAttnExt, []*Tensor{q, k, v}, map[string]any{"scale": 1})
	if y.Ne != [4]int64{3, 4, 3, 1} {
		t.Fatalf("shape %s, want [3, 4, 3, 1]", y.ShapeString())
	}
	var want []float32
	for i := 0; i < 3; i++ {
		want = append(want, 1, 2, 3, 1, 2, 3, 10, 20, 30, 10, 20, 30)
	}
	checkClose(t, y.ToF32(), want, 0)
}

func TestFlashAttn(t *testing.T) {
	const dk, dv, nq, nh, nkv, nhkv = 32, 16, 3, 4, 5, 2
	qv := randVals(52, dk*nq*nh, -1, 1)
	kv := randVals(53, dk*nkv*nhkv, -1, 1)
	vv := randVals(54, dv*nkv*nhkv, -1, 1)
	inf := float32(math.Inf(-1))
	maskVals := []float32{
		0, 0, inf, inf, inf,
		0, -1, 0, inf, inf,
		0, 0, 0, -2, 0,
		9, 9, 9, 9, 9, // padding row, unused
	}
	q := FromF32(F32, []int64{dk, nq, nh}, qv)
	mask := FromF32(F16, []int64{nkv, 4}, maskVals)
	ones := []float64{1, 1, 1, 1}
	alibi := []float64{math.Pow(2, -4), math.Pow(2, -8), math.Pow(2, -12), math.Pow(2, -16)} // max_bias 16, 4 heads
	tests := []struct {
		name    string
		kvType  Type
		mask    bool
		sinks   bool
		raw     map[string]any
		softcap float64
		slopes  []float64
		maxNMSE float64
	}{
		{"f16 no mask", F16, false, false, map[string]any{"scale": 0.25}, 0, ones, 1e-5},
		{"f16 mask", F16, true, false, map[string]any{"scale": 0.25}, 0, ones, 1e-5},
		{"f16 alibi", F16, true, false, map[string]any{"scale": 0.25, "max_bias": 16}, 0, alibi, 1e-5},
		{"f16 softcap", F16, true, false, map[string]any{"scale": 0.25, "logit_softcap": 2}, 2, ones, 1e-5},
		{"f32 kv", F32, true, false, map[string]any{"scale": 0.25}, 0, ones, 1e-11},
		{"f16 mask sinks", F16, true, true, map[string]any{"scale": 0.25}, 0, ones, 1e-5},
		{"f32 sinks no mask", F32, false, true, map[string]any{"scale": 0.25, "sinks": true}, 0, ones, 1e-11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := FromF32(tt.kvType, []int64{dk, nkv, nhkv}, kv)
			v := FromF32(tt.kvType, []int64{dv, nkv, nhkv}, vv)
			srcs := []*Tensor{q, k, v}
			var m, sk []float32
			if tt.mask {
				srcs = append(srcs, mask)
				m = maskVals
			}
			if tt.sinks {
				// Sinks above and below the row maxima: both branches.
				sk = []float32{-3, 4, 0.5, -0.25}
				srcs = append(srcs, FromF32(F32, []int64{nh}, sk))
			}
			y := mustOp(t, OpFlashAttnExt, srcs, tt.raw)
			want := attn64(qv, k.ToF32(), v.ToF32(), m, dk, dv, nq, nh, nkv, nhkv, 0.25, tt.softcap, tt.slopes, sk...)
			if y.Ne != [4]int64{dv, nh, nq, 1} {
				t.Fatalf("shape %s", y.ShapeString())
			}
			if e := NMSE(y.ToF32(), want); !(e <= tt.maxNMSE) {
				t.Fatalf("NMSE %g > %g\n got %v\nwant %v", e, tt.maxNMSE, y.ToF32()[:8], want[:8])
			}
			// A strided q gives the same bytes.
			ys := mustOp(t, OpFlashAttnExt, append([]*Tensor{permutedCopy(t, q)}, srcs[1:]...), tt.raw)
			checkClose(t, ys.ToF32(), y.ToF32(), 0)
		})
	}
	t.Run("fully masked row is zero", func(t *testing.T) {
		k := FromF32(F16, []int64{dk, nkv, nhkv}, kv)
		v := FromF32(F16, []int64{dv, nkv, nhkv}, vv)
		allInf := make([]float32, nkv*nq)
		for i := range allInf {
			allInf[i] = inf
		}
		y := mustOp(t, OpFlashAttnExt, []*Tensor{q, k, v, FromF32(F32, []int64{nkv, nq}, allInf)}, map[string]any{"scale": 1})
		for i, x := range y.ToF32() {
			if x != 0 {
				t.Fatalf("element %d = %g, want 0", i, x)
			}
		}
	})
}

func TestFlashAttnErrors(t *testing.T) {
	q := New(F32, 32, 3, 4)
	k := New(F16, 32, 5, 2)
	v := New(F16, 16, 5, 2)
	p := map[string]any{"scale": 1}
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, New(F16, 16, 5, 2), v}, p, "flash_attn_ext: k.ne0 = 16 != q.ne0 = 32 (d_k)")
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, k, New(F16, 16, 4, 2)}, p, "v.ne1 = 4 != k.ne1 = 5 (n_kv)")
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, New(F16, 32, 5, 3), New(F16, 16, 5, 3)}, p, "k.ne2 = 3 does not divide q.ne2 = 4")
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, k, v, New(F16, 4, 3)}, p, "mask.ne0 = 4 != n_kv = 5")
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, k, v, New(F16, 5, 2)}, p, "mask.ne1 = 2 < n_q = 3")
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, New(I32, 32, 5, 2), v}, p, "k is i32, want a float or quantized type")
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, k, v, New(F16, 5, 3), New(F32, 3)}, p, "sinks is [3, 1, 1, 1], want [4]")
	// Quantized K/V plan (ggml accepts them) but have no host math.
	info0, _ := Lookup("flash_attn_ext")
	np, err := info0.Normalize(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := info0.Compute([]*Tensor{q, New(Q8_0, 32, 5, 2), New(Q8_0, 32, 5, 2)}, np); err == nil || !errors.As(err, new(*NoHostMathError)) {
		t.Errorf("q8_0 K/V: error %v, want a NoHostMathError", err)
	}
	wantOpError(t, OpFlashAttnExt, []*Tensor{q, k, v}, nil, "param scale: required")
	info, _ := Lookup("flash_attn_ext")
	if c := info.Cost(nil, []*Tensor{q, k, v}, nil); c.Flops != 2*3*4*5*(32+16) {
		t.Errorf("flops = %d", c.Flops)
	}
}
