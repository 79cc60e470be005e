package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestHostAcc(t *testing.T) {
	// a [6, 4, 2]; b [3, 2, 2] added at element offset 1 of a view with
	// a's row and plane strides.
	av := opstest.RandVals(15, 6*4*2, -1, 1)
	bv := opstest.RandVals(16, 3*2*2, -1, 1)
	a := ops.FromF32(ops.F32, []int64{6, 4, 2}, av)
	b := ops.FromF32(ops.F32, []int64{3, 2, 2}, bv)
	want := append([]float32(nil), av...)
	for i2 := 0; i2 < 2; i2++ {
		for i1 := 0; i1 < 2; i1++ {
			for i0 := 0; i0 < 3; i0++ {
				j := 1 + i0 + i1*6 + i2*24
				want[j] = float32(float64(want[j]) + float64(bv[i0+i1*3+i2*6]))
			}
		}
	}
	got := mustOp(t, ops.OpAcc, []*ops.Tensor{a, b}, map[string]any{"offset": 4})
	opstest.CheckClose(t, got.ToF32(), want, 1e-7)
	wantOpError(t, ops.OpAcc, []*ops.Tensor{a, b}, map[string]any{"offset": 4 * 46}, "past a's")
}

func TestHostAddID(t *testing.T) {
	av := opstest.RandVals(17, 4*2*3, -1, 1) // a [4, 2 used, 3 tokens]
	bv := opstest.RandVals(18, 4*5, -1, 1)   // b [4, 5 experts]
	ids := []int64{4, 0, 1, 1, 3, 2}         // [2, 3]
	want := make([]float32, len(av))
	for tok := 0; tok < 3; tok++ {
		for u := 0; u < 2; u++ {
			e := ids[tok*2+u]
			for i := 0; i < 4; i++ {
				want[(tok*2+u)*4+i] = float32(float64(av[(tok*2+u)*4+i]) + float64(bv[int(e)*4+i]))
			}
		}
	}
	got := mustOp(t, ops.OpAddID, []*ops.Tensor{ops.FromF32(ops.F32, []int64{4, 2, 3}, av), ops.FromF32(ops.F32, []int64{4, 5}, bv), ops.FromInts(ops.I32, []int64{2, 3}, ids)}, nil)
	opstest.CheckClose(t, got.ToF32(), want, 1e-7)
}

func TestHostArange(t *testing.T) {
	got := mustOp(t, ops.OpArange, nil, map[string]any{"start": 1.5, "stop": 4.0, "step": 0.5})
	opstest.CheckClose(t, got.ToF32(), []float32{1.5, 2, 2.5, 3, 3.5}, 0)
	wantOpError(t, ops.OpArange, nil, map[string]any{"start": 2.0, "stop": 1.0}, "greater than start")
}

func TestHostTimestepEmbedding(t *testing.T) {
	ts := []float32{0, 3, 250.5}
	const dim, mp = 7, 10000
	got := mustOp(t, ops.OpTimestepEmbedding, []*ops.Tensor{ops.FromF32(ops.F32, []int64{3}, ts)}, map[string]any{"dim": dim, "max_period": mp})
	if got.Ne != [ops.MaxDims]int64{dim, 3, 1, 1} {
		t.Fatalf("shape %v", got.Ne)
	}
	want := make([]float32, dim*3)
	for i, tv := range ts {
		for j := 0; j < dim/2; j++ {
			arg := float64(tv) * math.Exp(-math.Log(mp)*float64(j)/float64(dim/2))
			want[i*dim+j] = float32(math.Cos(arg))
			want[i*dim+j+dim/2] = float32(math.Sin(arg))
		}
	}
	opstest.CheckClose(t, got.ToF32(), want, 1e-4)
	// An empty x with ne0 > 0 has no timesteps to read (FuzzCatalog
	// found the index panic: testdata/fuzz/FuzzCatalog/2de4ecc87c3d0faa).
	wantOpError(t, ops.OpTimestepEmbedding, []*ops.Tensor{ops.New(ops.F32, 3, 0, 3, 0)}, map[string]any{"dim": dim, "max_period": mp}, "no elements")
	if got := mustOp(t, ops.OpTimestepEmbedding, []*ops.Tensor{ops.New(ops.F32, 0, 2)}, map[string]any{"dim": dim, "max_period": mp}); got.NElements() != 0 {
		t.Errorf("x [0 2]: %d elements, want 0", got.NElements())
	}
}

func TestHostOutProd(t *testing.T) {
	const m, n, k = 5, 3, 4
	// a [m, k, 1, 2], b [n, k, 2, 2]: a broadcast over dim 2.
	av := opstest.RandVals(19, m*k*2, -1, 1)
	bv := opstest.RandVals(20, n*k*4, -1, 1)
	a := ops.FromF32(ops.F32, []int64{m, k, 1, 2}, av)
	b := ops.FromF32(ops.F32, []int64{n, k, 2, 2}, bv)
	want := make([]float32, m*n*4)
	for i3 := 0; i3 < 2; i3++ {
		for i2 := 0; i2 < 2; i2++ {
			for j := 0; j < n; j++ {
				for i := 0; i < m; i++ {
					var s float64
					for kk := 0; kk < k; kk++ {
						s += float64(av[(i3*k+kk)*m+i]) * float64(bv[((i3*2+i2)*k+kk)*n+j])
					}
					want[((i3*2+i2)*n+j)*m+i] = float32(s)
				}
			}
		}
	}
	got := mustOp(t, ops.OpOutProd, []*ops.Tensor{a, b}, nil)
	if got.Ne != [ops.MaxDims]int64{m, n, 2, 2} {
		t.Fatalf("shape %v", got.Ne)
	}
	opstest.CheckClose(t, got.ToF32(), want, 1e-6)
	// b as the transpose of a [k, n, ...] tensor gives the same result.
	bt := ops.Transpose(ops.Cont(ops.Transpose(b)))
	opstest.CheckClose(t, mustOp(t, ops.OpOutProd, []*ops.Tensor{a, bt}, nil).ToF32(), want, 1e-6)
	// An a with ne2 = 0 broadcasts to nothing (FuzzCatalog found the
	// division by zero: testdata/fuzz/FuzzCatalog/9d8a1fa69fbc5fc1).
	wantOpError(t, ops.OpOutProd, []*ops.Tensor{ops.New(ops.F32, m, k, 0, 1), ops.New(ops.F32, n, k, 0, 1)}, nil, "a.ne2 = 0")
}

// TestHostGatedLinearAttn: a float64 gated linear attention with the state
// as S[h][key i][value j]: S = g_i·S + k_i·v_j, y_j = Σ_i S·q_i·scale.
func TestHostGatedLinearAttn(t *testing.T) {
	const S, H, T, nSeqs = 4, 2, 6, 2
	const scale = 0.5
	kv, vv := opstest.RandVals(50, S*H*T, -1, 1), opstest.RandVals(51, S*H*T, -1, 1)
	qv, gv := opstest.RandVals(52, S*H*T, -1, 1), opstest.RandVals(53, S*H*T, 0, 1)
	sv := opstest.RandVals(54, S*S*H*nSeqs, -1, 1)
	at := func(x []float32, t, h, i int) float64 { return float64(x[(t*H+h)*S+i]) }
	want := make([]float32, S*H*(T+S*nSeqs))
	for s := 0; s < nSeqs; s++ {
		var st [H][S][S]float64
		for h := 0; h < H; h++ {
			for i := 0; i < S; i++ {
				for j := 0; j < S; j++ {
					st[h][i][j] = float64(sv[s*S*S*H+h*S*S+i*S+j])
				}
			}
		}
		for t := s * T / nSeqs; t < (s+1)*T/nSeqs; t++ {
			for h := 0; h < H; h++ {
				for j := 0; j < S; j++ {
					var y float64
					for i := 0; i < S; i++ {
						st[h][i][j] = at(vv, t, h, j)*at(kv, t, h, i) + st[h][i][j]*at(gv, t, h, i)
						y += st[h][i][j] * at(qv, t, h, i) * scale
					}
					want[t*S*H+h*S+j] = float32(y)
				}
			}
		}
		for h := 0; h < H; h++ {
			for i := 0; i < S; i++ {
				for j := 0; j < S; j++ {
					want[T*S*H+s*S*S*H+h*S*S+i*S+j] = float32(st[h][i][j])
				}
			}
		}
	}
	ne := []int64{S, H, T}
	srcs := []*ops.Tensor{ops.FromF32(ops.F32, ne, kv), ops.FromF32(ops.F32, ne, vv), ops.FromF32(ops.F32, ne, qv), ops.FromF32(ops.F32, ne, gv), ops.FromF32(ops.F32, []int64{S * S * H, nSeqs}, sv)}
	got := mustOp(t, ops.OpGatedLinearAttn, srcs, map[string]any{"scale": scale})
	// A state of no sequences splits no tokens (FuzzCatalog found the
	// division by zero: testdata/fuzz/FuzzCatalog/2d58abc28ed181a6).
	wantOpError(t, ops.OpGatedLinearAttn, append(srcs[:4:4], ops.New(ops.F32, S*S*H, 0)), map[string]any{"scale": scale}, "no sequences")
	if got.Ne != [ops.MaxDims]int64{S * H, T + S*nSeqs, 1, 1} {
		t.Fatalf("shape %v", got.Ne)
	}
	opstest.CheckClose(t, got.ToF32(), want, 1e-5)
}

func TestHostLightningIndexer(t *testing.T) {
	const E, nH, nT, nS, nKV, nM = 8, 3, 2, 2, 5, 1
	qv := opstest.RandVals(60, E*nH*nT*nS, -1, 1)
	kv := opstest.RandVals(61, E*nKV*nS, -1, 1)
	wv := opstest.RandVals(62, nH*nT*nS, -1, 1)
	mv := opstest.RandVals(63, nKV*nT*nM, -1, 0)
	mask := ops.FromF32(ops.F16, []int64{nKV, nT, 1, nM}, mv)
	mf := mask.ToF32()
	want := make([]float32, nKV*nT*nS)
	for s := 0; s < nS; s++ {
		for tk := 0; tk < nT; tk++ {
			for j := 0; j < nKV; j++ {
				var score float64
				for h := 0; h < nH; h++ {
					var dot float64
					for i := 0; i < E; i++ {
						dot += float64(qv[((s*nT+tk)*nH+h)*E+i]) * float64(kv[(s*nKV+j)*E+i])
					}
					score += math.Max(dot, 0) * float64(wv[(s*nT+tk)*nH+h])
				}
				want[(s*nT+tk)*nKV+j] = float32(score + float64(mf[tk*nKV+j]))
			}
		}
	}
	srcs := []*ops.Tensor{ops.FromF32(ops.F32, []int64{E, nH, nT, nS}, qv), ops.FromF32(ops.F32, []int64{E, 1, nKV, nS}, kv),
		ops.FromF32(ops.F32, []int64{nH, nT, 1, nS}, wv), mask}
	opstest.CheckClose(t, mustOp(t, ops.OpLightningIndexer, srcs, nil).ToF32(), want, 1e-5)
}

// TestHostDSV4HC: the hyper-connection ops against float64: pre is a
// weighted sum over the hc copies, post mixes them back, comb is a
// softmax followed by Sinkhorn normalisation.
func TestHostDSV4HC(t *testing.T) {
	const nE, hc, nT = 5, 4, 3
	xv := opstest.RandVals(64, nE*hc*nT, -1, 1)
	wv := opstest.RandVals(65, hc*nT, 0, 1)
	want := make([]float32, nE*nT)
	for tk := 0; tk < nT; tk++ {
		for i := 0; i < nE; i++ {
			var s float64
			for h := 0; h < hc; h++ {
				s += float64(xv[(tk*hc+h)*nE+i]) * float64(wv[tk*hc+h])
			}
			want[tk*nE+i] = float32(s)
		}
	}
	got := mustOp(t, ops.OpDSV4HCPre, []*ops.Tensor{ops.FromF32(ops.F32, []int64{nE, hc, nT}, xv), ops.FromF32(ops.F32, []int64{hc, nT}, wv)}, nil)
	opstest.CheckClose(t, got.ToF32(), want, 1e-6)

	x2 := opstest.RandVals(66, nE*nT, -1, 1)
	pv := opstest.RandVals(67, hc*nT, 0, 2)
	cv := opstest.RandVals(68, hc*hc*nT, 0, 1)
	want = make([]float32, nE*hc*nT)
	for tk := 0; tk < nT; tk++ {
		for d := 0; d < hc; d++ {
			for i := 0; i < nE; i++ {
				s := float64(x2[tk*nE+i]) * float64(pv[tk*hc+d])
				for src := 0; src < hc; src++ {
					s += float64(xv[(tk*hc+src)*nE+i]) * float64(cv[(tk*hc+src)*hc+d])
				}
				want[(tk*hc+d)*nE+i] = float32(s)
			}
		}
	}
	got = mustOp(t, ops.OpDSV4HCPost, []*ops.Tensor{ops.FromF32(ops.F32, []int64{nE, nT}, x2), ops.FromF32(ops.F32, []int64{nE, hc, nT}, xv),
		ops.FromF32(ops.F32, []int64{hc, nT}, pv), ops.FromF32(ops.F32, []int64{hc, hc, nT}, cv)}, nil)
	opstest.CheckClose(t, got.ToF32(), want, 1e-6)

	const eps, nIter = 1e-6, 3
	mixes := opstest.RandVals(69, 24*nT, -2, 2)
	scale := []float32{0.3, -0.2, 0.4}
	base := opstest.RandVals(70, 24, -0.25, 0.25)
	want = make([]float32, hc*hc*nT)
	for tk := 0; tk < nT; tk++ {
		var c [hc][hc]float64 // c[src][dst]
		for s := 0; s < hc; s++ {
			var z float64
			for d := 0; d < hc; d++ {
				c[s][d] = math.Exp(float64(mixes[tk*24+8+d+hc*s])*float64(scale[2]) + float64(base[8+d+hc*s]))
				z += c[s][d]
			}
			for d := 0; d < hc; d++ {
				c[s][d] = c[s][d]/z + eps
			}
		}
		cols := func() {
			for d := 0; d < hc; d++ {
				z := eps
				for s := 0; s < hc; s++ {
					z += c[s][d]
				}
				for s := 0; s < hc; s++ {
					c[s][d] /= z
				}
			}
		}
		rows := func() {
			for s := 0; s < hc; s++ {
				z := eps
				for d := 0; d < hc; d++ {
					z += c[s][d]
				}
				for d := 0; d < hc; d++ {
					c[s][d] /= z
				}
			}
		}
		cols()
		for i := 1; i < nIter; i++ {
			rows()
			cols()
		}
		for s := 0; s < hc; s++ {
			for d := 0; d < hc; d++ {
				want[(tk*hc+s)*hc+d] = float32(c[s][d])
			}
		}
	}
	got = mustOp(t, ops.OpDSV4HCComb, []*ops.Tensor{ops.FromF32(ops.F32, []int64{24, nT}, mixes), ops.FromF32(ops.F32, []int64{3}, scale), ops.FromF32(ops.F32, []int64{24}, base)},
		map[string]any{"eps": eps, "n_iter": nIter})
	opstest.CheckClose(t, got.ToF32(), want, 1e-5)
}
