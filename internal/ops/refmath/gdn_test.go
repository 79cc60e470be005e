package refmath

import (
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// gdnCase builds gated_delta_net sources: S_v 4, H 4 value heads, H_q =
// H_k = 2 (tiled), T 3, n_seqs 2 (q/k shared across sequences when
// shareSeq).
func gdnCase(kda, shareSeq bool) []*ops.Tensor {
	const sv, h, hk, tok, n = 4, 4, 2, 3, 2
	nqk := int64(n)
	if shareSeq {
		nqk = 1
	}
	q := ops.FromF32(ops.F32, []int64{sv, hk, tok, nqk}, opstest.RandVals(41, sv*hk*tok*int(nqk), -1, 1))
	k := ops.FromF32(ops.F32, []int64{sv, hk, tok, nqk}, opstest.RandVals(42, sv*hk*tok*int(nqk), -1, 1))
	v := ops.FromF32(ops.F32, []int64{sv, h, tok, n}, opstest.RandVals(43, sv*h*tok*n, -1, 1))
	gn := int64(1)
	if kda {
		gn = sv
	}
	g := ops.FromF32(ops.F32, []int64{gn, h, tok, n}, opstest.RandVals(44, int(gn)*h*tok*n, -0.5, 0))
	beta := ops.FromF32(ops.F32, []int64{1, h, tok, n}, opstest.RandVals(45, h*tok*n, 0, 1))
	state := ops.FromF32(ops.F32, []int64{sv, sv, h, n}, opstest.RandVals(46, sv*sv*h*n, -1, 1))
	return []*ops.Tensor{q, k, v, g, beta, state}
}

// naiveGDN is gated_delta_net in float64 with the state S[i][j] =
// state(i, j, h, n), written from the delta rule rather than the CPU's
// transposed loops.
func naiveGDN(srcs []*ops.Tensor, slots int64) []float64 {
	q, k, v, g, beta, state := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	sv, h, tok, n := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	attn := sv * h * tok * n
	slot := sv * sv * h * n
	out := make([]float64, attn+slots*slot)
	for nn := int64(0); nn < n; nn++ {
		for hh := int64(0); hh < h; hh++ {
			S := make([][]float64, sv)
			for i := range S {
				S[i] = make([]float64, sv)
				for j := range S[i] {
					S[i][j] = float64(state.F32(int64(i), int64(j), hh, nn))
				}
			}
			nq, nk := nn/(n/q.Ne[3]), nn/(n/k.Ne[3])
			for t := int64(0); t < tok; t++ {
				for i := int64(0); i < sv; i++ {
					gi := float64(g.F32(0, hh, t, nn))
					if g.Ne[0] == sv {
						gi = float64(g.F32(i, hh, t, nn))
					}
					for j := range S[i] {
						S[i][j] *= math.Exp(gi)
					}
				}
				b := float64(beta.F32(0, hh, t, nn))
				delta := make([]float64, sv)
				for j := int64(0); j < sv; j++ {
					var kS float64
					for i := int64(0); i < sv; i++ {
						kS += S[i][j] * float64(k.F32(i, hh%k.Ne[1], t, nk))
					}
					delta[j] = (float64(v.F32(j, hh, t, nn)) - kS) * b
				}
				for i := int64(0); i < sv; i++ {
					for j := int64(0); j < sv; j++ {
						S[i][j] += float64(k.F32(i, hh%k.Ne[1], t, nk)) * delta[j]
					}
				}
				for j := int64(0); j < sv; j++ {
					var o float64
					for i := int64(0); i < sv; i++ {
						o += S[i][j] * float64(q.F32(i, hh%q.Ne[1], t, nq))
					}
					out[((nn*tok+t)*h+hh)*sv+j] = o / math.Sqrt(float64(sv))
				}
				if sl := tok - 1 - t; sl < slots {
					base := attn + sl*slot + (nn*h+hh)*sv*sv
					for i := int64(0); i < sv; i++ {
						for j := int64(0); j < sv; j++ {
							out[base+j*sv+i] = S[i][j]
						}
					}
				}
			}
		}
	}
	return out
}

func TestGatedDeltaNet(t *testing.T) {
	for _, kda := range []bool{false, true} {
		for _, share := range []bool{false, true} {
			for _, slots := range []int64{1, 3} {
				t.Run(fmt.Sprintf("kda=%v/shared_qk=%v/K=%d", kda, share, slots), func(t *testing.T) {
					srcs := gdnCase(kda, share)
					y := mustOp(t, ops.OpGatedDeltaNet, srcs, map[string]any{"K": slots})
					if y.Ne != [ops.MaxDims]int64{16, 3*2 + slots*4*2, 1, 1} {
						t.Fatalf("shape %s", y.ShapeString())
					}
					opstest.CheckClose(t, y.ToF32(), f32s(naiveGDN(srcs, slots)), 2e-6)
				})
			}
		}
	}
	// q and k as strided views give the same result.
	srcs := gdnCase(false, false)
	srcs[0], srcs[1] = reftest.PermutedCopy(t, srcs[0]), reftest.PermutedCopy(t, srcs[1])
	opstest.CheckClose(t, mustOp(t, ops.OpGatedDeltaNet, srcs, nil).ToF32(), mustOp(t, ops.OpGatedDeltaNet, gdnCase(false, false), nil).ToF32(), 0)

	bad := gdnCase(false, false)
	bad[3] = ops.New(ops.F32, 2, 4, 3, 2)
	wantOpError(t, ops.OpGatedDeltaNet, bad, nil, "g.ne0 = 2, want 1 or S_v = 4")
	bad = gdnCase(false, false)
	bad[4] = ops.New(ops.F32, 4, 4, 3, 2)
	wantOpError(t, ops.OpGatedDeltaNet, bad, nil, "beta [4, 4, 3, 2], want [1, 4, 3, 2]")
	bad = gdnCase(false, false)
	bad[5] = ops.New(ops.F32, 4, 4, 4, 1)
	wantOpError(t, ops.OpGatedDeltaNet, bad, nil, "state [4, 4, 4, 1], want [S_v, S_v, H, n_seqs] = [4, 4, 4, 2]")
	bad = gdnCase(false, false)
	bad[0] = ops.New(ops.F32, 8, 2, 3, 2)
	wantOpError(t, ops.OpGatedDeltaNet, bad, nil, "q.ne0 = 8 and k.ne0 = 4, want S_v = v.ne0 = 4")
	wantOpError(t, ops.OpGatedDeltaNet, gdnCase(false, false), map[string]any{"K": 0}, "param K: 0, want >= 1")
}
