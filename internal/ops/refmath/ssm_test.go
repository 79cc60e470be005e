package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestSSMConv(t *testing.T) {
	// d_conv 2, d_inner 2, 3 tokens, 1 sequence.
	sx := ops.FromF32(ops.F32, []int64{4, 2, 1}, []float32{1, 2, 3, 4, 10, 20, 30, 40})
	c := ops.FromF32(ops.F32, []int64{2, 2}, []float32{1, -1, 0.5, 0.5})
	y := mustOp(t, ops.OpSSMConv, []*ops.Tensor{sx, c}, nil)
	if y.Ne != [ops.MaxDims]int64{2, 3, 1, 1} {
		t.Fatalf("shape %s, want [2, 3, 1, 1]", y.ShapeString())
	}
	// dst[i, t] = sx[t, i]·c[0, i] + sx[t+1, i]·c[1, i]
	opstest.CheckClose(t, y.ToF32(), []float32{-1, 15, -1, 25, -1, 35}, 0)

	sx = ops.FromF32(ops.F32, []int64{7, 5, 3}, opstest.RandVals(9, 7*5*3, -1, 1))
	c = ops.FromF32(ops.F32, []int64{4, 5}, opstest.RandVals(10, 4*5, -1, 1))
	y = mustOp(t, ops.OpSSMConv, []*ops.Tensor{sx, c}, nil)
	var want []float32
	for s := int64(0); s < 3; s++ {
		for tok := int64(0); tok < 4; tok++ {
			for i := int64(0); i < 5; i++ {
				var v float64
				for j := int64(0); j < 4; j++ {
					v += float64(sx.F32(tok+j, i, s, 0)) * float64(c.F32(j, i, 0, 0))
				}
				want = append(want, float32(v))
			}
		}
	}
	opstest.CheckClose(t, y.ToF32(), want, 1e-6)
	wantOpError(t, ops.OpSSMConv, []*ops.Tensor{ops.New(ops.F32, 7, 4, 3), c}, nil, "sx.ne1 = 4 != c.ne1 = 5")
	wantOpError(t, ops.OpSSMConv, []*ops.Tensor{ops.New(ops.F32, 2, 5, 3), c}, nil, "shorter than the kernel")
	wantOpError(t, ops.OpSSMConv, []*ops.Tensor{ops.New(ops.F32, 7, 5, 3, 2), c}, nil, "is not 3-D")
}

// ssmCase builds ssm_scan sources: d_state 4, head_dim 3, n_head 4,
// n_group 2, n_t 3, n_seqs 2, three input states selected by ids [2, 0].
func ssmCase(mamba1 bool) []*ops.Tensor {
	const ds, hd, nh, ng, nt, ns = 4, 3, 4, 2, 3, 2
	s := ops.FromF32(ops.F32, []int64{ds, hd, nh, 3}, opstest.RandVals(11, ds*hd*nh*3, -1, 1))
	x := ops.FromF32(ops.F32, []int64{hd, nh, nt, ns}, opstest.RandVals(12, hd*nh*nt*ns, -1, 1))
	dtv := opstest.RandVals(13, nh*nt*ns, -2, 2)
	dtv[5] = 25 // softplus threshold: passes through
	dt := ops.FromF32(ops.F32, []int64{nh, nt, ns}, dtv)
	a := ops.FromF32(ops.F32, []int64{1, nh}, opstest.RandVals(14, nh, -1, -0.1))
	if mamba1 {
		a = ops.FromF32(ops.F32, []int64{ds, nh}, opstest.RandVals(14, ds*nh, -1, -0.1))
	}
	b := ops.FromF32(ops.F32, []int64{ds, ng, nt, ns}, opstest.RandVals(15, ds*ng*nt*ns, -1, 1))
	c := ops.FromF32(ops.F32, []int64{ds, ng, nt, ns}, opstest.RandVals(16, ds*ng*nt*ns, -1, 1))
	ids := ops.FromInts(ops.I32, []int64{ns}, []int64{2, 0})
	return []*ops.Tensor{s, x, dt, a, b, c, ids}
}

// naiveSSMScan is ssm_scan in float64 from the definition, with K slots.
func naiveSSMScan(srcs []*ops.Tensor, k int64) []float64 {
	s, x, dt, a, b, c, ids := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5], srcs[6]
	ds, hd, nh, ng, nt, ns := s.Ne[0], x.Ne[0], x.Ne[1], b.Ne[1], x.Ne[2], x.Ne[3]
	ny := hd * nh * nt * ns
	slot := ds * hd * nh * ns
	out := make([]float64, ny+k*slot)
	for q := int64(0); q < ns; q++ {
		for h := int64(0); h < nh; h++ {
			g := h / (nh / ng)
			st := make([]float64, ds*hd)
			for i1 := int64(0); i1 < hd; i1++ {
				for i0 := int64(0); i0 < ds; i0++ {
					st[i1*ds+i0] = float64(s.F32(i0, i1, h, ids.Int(q, 0, 0, 0)))
				}
			}
			for tok := int64(0); tok < nt; tok++ {
				d := float64(dt.F32(h, tok, q, 0))
				if d <= 20 {
					d = math.Log1p(math.Exp(d))
				}
				for i1 := int64(0); i1 < hd; i1++ {
					var y float64
					for i0 := int64(0); i0 < ds; i0++ {
						av := float64(a.F32(0, h, 0, 0))
						if a.Ne[0] != 1 {
							av = float64(a.F32(i0, h, 0, 0))
						}
						v := st[i1*ds+i0]*math.Exp(d*av) + float64(b.F32(i0, g, tok, q))*float64(x.F32(i1, h, tok, q))*d
						st[i1*ds+i0] = v
						y += v * float64(c.F32(i0, g, tok, q))
					}
					out[((q*nt+tok)*nh+h)*hd+i1] = y
				}
				if sl := nt - 1 - tok; sl < k {
					copy(out[ny+sl*slot+(q*nh+h)*ds*hd:], st)
				}
			}
		}
	}
	return out
}

func TestSSMScan(t *testing.T) {
	for _, mamba1 := range []bool{false, true} {
		for _, k := range []int64{1, 2, 4} {
			name := map[bool]string{false: "mamba2", true: "mamba1"}[mamba1]
			t.Run(name+"/K="+string(rune('0'+k)), func(t *testing.T) {
				srcs := ssmCase(mamba1)
				y := mustOp(t, ops.OpSSMScan, srcs, map[string]any{"K": k})
				want := naiveSSMScan(srcs, k)
				if y.Ne != [ops.MaxDims]int64{int64(len(want)), 1, 1, 1} {
					t.Fatalf("shape %s, want [%d, 1, 1, 1]", y.ShapeString(), len(want))
				}
				w := make([]float32, len(want))
				for i, v := range want {
					w[i] = float32(v)
				}
				opstest.CheckClose(t, y.ToF32(), w, 2e-6)
			})
		}
	}
	srcs := ssmCase(false)
	srcs[1] = reftest.PermutedCopy(t, srcs[1]) // strided x
	opstest.CheckClose(t, mustOp(t, ops.OpSSMScan, srcs, nil).ToF32(), mustOp(t, ops.OpSSMScan, ssmCase(false), nil).ToF32(), 0)

	bad := ssmCase(false)
	bad[6] = ops.FromInts(ops.I32, []int64{2}, []int64{0, 3})
	wantOpError(t, ops.OpSSMScan, bad, nil, "ids[1] = 3 is not a state (want 0 to 2)")
	bad = ssmCase(false)
	bad[2] = ops.New(ops.F32, 4, 3, 1)
	wantOpError(t, ops.OpSSMScan, bad, nil, "dt [4, 3, 1, 1], want [n_head, n_t, n_seqs] = [4, 3, 2, 1]")
	bad = ssmCase(false)
	bad[4] = ops.New(ops.F32, 4, 3, 3, 2)
	wantOpError(t, ops.OpSSMScan, bad, nil, "B [4, 3, 3, 2] and C [4, 2, 3, 2] differ")
	bad = ssmCase(false)
	bad[3] = ops.New(ops.F32, 2, 4)
	wantOpError(t, ops.OpSSMScan, bad, nil, "A [2, 4, 1, 1], want [d_state = 4 or 1, n_head = 4]")
	wantOpError(t, ops.OpSSMScan, ssmCase(false), map[string]any{"K": 0}, "param K: 0, want >= 1")
}
