package ref

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

func TestOpKernels(t *testing.T) {
	r := newRand(2)
	f32 := func(ne ...int64) *ops.Tensor { return randTensor(r, ops.F32, ne...) }
	one := func(op ops.Op, in ...*ops.Tensor) *ops.Tensor { return refOut(t, op, in, nil) }
	x := f32(32, 3, 2)
	var cases []kcase
	for _, k := range []struct {
		kernel string
		op     ops.Op
	}{{"sqr_f32", ops.OpSqr}, {"sum_rows_f32", ops.OpSumRows}, {"mean_f32", ops.OpMean}, {"cumsum_f32", ops.OpCumsum}} {
		cases = append(cases, kcase{name: k.kernel, kernel: k.kernel, in: []kin{{"src0", x}}, want: one(k.op, x)})
	}
	vec := f32(16, 1, 2)
	cases = append(cases, kcase{name: "diag_f32", kernel: "diag_f32", in: []kin{{"src0", vec}}, want: one(ops.OpDiag, vec)})
	cases = append(cases, kcase{
		name: "clamp_f32", kernel: "clamp_f32", in: []kin{{"src0", x}},
		set:  func(v *abi.Values) { v.SetFloat("min", -0.5); v.SetFloat("max", 0.25) },
		want: refOut(t, ops.OpClamp, []*ops.Tensor{x}, map[string]any{"min": -0.5, "max": 0.25}),
	})
	gx := f32(8, 4, 6)
	cases = append(cases, kcase{
		name: "group_norm_f32", kernel: "group_norm_f32", in: []kin{{"src0", gx}},
		set:  func(v *abi.Values) { v.SetInt("n_groups", 3); v.SetFloat("eps", 1e-5) },
		want: refOut(t, ops.OpGroupNorm, []*ops.Tensor{gx}, map[string]any{"n_groups": 3, "eps": float32(1e-5)}),
	})
	ca, cb := f32(16, 3), f32(16, 2)
	cases = append(cases, kcase{
		name: "concat_f32", kernel: "concat_f32", in: []kin{{"src0", ca}, {"src1", cb}},
		set:  func(v *abi.Values) { v.SetInt("dim", 1) },
		want: refOut(t, ops.OpConcat, []*ops.Tensor{ca, cb}, map[string]any{"dim": 1}),
	})
	cases = append(cases, kcase{
		name: "repeat_f32", kernel: "repeat_f32", in: []kin{{"src0", vec}},
		want: refOut(t, ops.OpRepeat, []*ops.Tensor{vec}, map[string]any{"ne": []int64{32, 3, 2, 1}}),
	})
	pin := f32(16, 3)
	cases = append(cases, kcase{
		name: "pad_f32", kernel: "pad_f32", in: []kin{{"src0", pin}},
		set: func(v *abi.Values) {
			v.SetInt("lp[1]", 1)
			v.SetInt("rp[1]", 2)
			v.SetInt("rp[2]", 1)
		},
		want: refOut(t, ops.OpPad, []*ops.Tensor{pin}, map[string]any{"lp": []int64{0, 1, 0, 0}, "rp": []int64{0, 2, 1, 0}}),
	})
	old := f32(32, 2)
	cases = append(cases, kcase{
		name: "fill_f32", kernel: "fill_f32", dst: ops.Cont(old),
		set:  func(v *abi.Values) { v.SetFloat("c", 1.5) },
		want: refOut(t, ops.OpFill, []*ops.Tensor{old}, map[string]any{"c": 1.5}),
	})
	sa, sb := f32(32, 4), f32(32, 2)
	setP := map[string]any{"nb1": 128, "nb2": 512, "nb3": 512, "offset": 128}
	cases = append(cases, kcase{
		name: "set_f32", kernel: "set_f32", in: []kin{{"src1", sb}}, dst: ops.Cont(sa),
		set: func(v *abi.Values) {
			for k, x := range setP {
				v.SetInt(k, int64(x.(int)))
			}
		},
		want: refOut(t, ops.OpSet, []*ops.Tensor{sa, sb}, setP),
	})
	tri := make([]float32, 16)
	for i := 0; i < 4; i++ {
		for j := 0; j <= i; j++ {
			tri[i*4+j] = float32(1 + i + 2*j)
		}
	}
	ta, tb := ops.FromF32(ops.F32, []int64{4, 4}, tri), f32(8, 4)
	cases = append(cases, kcase{
		name: "solve_tri_f32", kernel: "solve_tri_f32", in: []kin{{"a", ta}, {"b", tb}}, dstField: "x",
		want: one(ops.OpSolveTri, ta, tb),
	})
	ids := ops.FromInts(ops.I32, []int64{2, 3}, []int64{3, 0, 1, 1, 2, 3})
	mb := f32(64, 2, 3)
	for _, k := range []struct {
		kernel string
		typ    ops.Type
	}{{"mul_mat_id_f32", ops.F32}, {"mul_mat_id_f32", ops.F16}, {"mul_mat_id_Q8_0", ops.Q8_0}, {"mul_mat_id_Q4_0", ops.Q4_0}} {
		as := randTensor(r, k.typ, 64, 16, 4)
		cases = append(cases, kcase{
			name: k.kernel + "/" + k.typ.String(), kernel: k.kernel, in: []kin{{"src0", as}, {"src1", mb}, {"src2", ids}},
			want: one(ops.OpMulMatID, as, mb, ids),
		})
	}
	sx, sc := f32(3+5, 8, 2), f32(4, 8)
	cases = append(cases, kcase{
		name: "ssm_conv_f32", kernel: "ssm_conv_f32", in: []kin{{"src0", sx}, {"src1", sc}}, want: one(ops.OpSSMConv, sx, sc),
	})
	st, sxs, dt, A := f32(16, 4, 2, 2), f32(4, 2, 3, 2), f32(2, 3, 2), f32(16, 2)
	B, C := f32(16, 1, 3, 2), f32(16, 1, 3, 2)
	sids := ops.FromInts(ops.I32, []int64{2}, []int64{1, 0})
	scan := []*ops.Tensor{st, sxs, dt, A, B, C, sids}
	var scanIn []kin
	for i, s := range scan {
		scanIn = append(scanIn, kin{"src" + string(rune('0'+i)), s})
	}
	cases = append(cases, kcase{
		name: "ssm_scan_f32", kernel: "ssm_scan_f32", in: scanIn,
		set:  func(v *abi.Values) { v.SetInt("K", 2) },
		want: refOut(t, ops.OpSSMScan, scan, map[string]any{"K": 2}),
	})
	kern, img := f32(3, 3, 2, 4), f32(8, 7, 2, 1)
	cases = append(cases,
		kcase{
			name: "im2col", kernel: "im2col", in: []kin{{"src0", kern}, {"src1", img}},
			opParams: [abi.NumOpParams]int32{2, 1, 1, 0, 1, 2, 1},
			want: refOut(t, ops.OpIm2col, []*ops.Tensor{kern, img},
				map[string]any{"s0": 2, "s1": 1, "p0": 1, "p1": 0, "d0": 1, "d1": 2, "is_2d": true, "dst_type": "f16"}),
		})
	ck, cin := f32(3, 3, 16, 16), f32(6, 5, 16, 1)
	cases = append(cases, kcase{
		name: "conv_2d_f32_me", kernel: "conv_2d_f32_me", in: []kin{{"src0", ck}, {"src1", cin}},
		opParams: [abi.NumOpParams]int32{1, 2, 1, 1, 1, 1},
		want: refOut(t, ops.OpConv2D, []*ops.Tensor{ck, cin},
			map[string]any{"s0": 1, "s1": 2, "p0": 1, "p1": 1, "d0": 1, "d1": 1}),
	})
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}
