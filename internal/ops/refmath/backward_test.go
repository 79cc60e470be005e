package refmath

import (
	"errors"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestHostRepeatBack(t *testing.T) {
	ne := []int64{3, 2, 2, 1}
	full := []int64{6, 6, 2, 2}
	xs := opstest.RandVals(8, 6*6*2*2, -1, 1)
	x := ops.FromF32(ops.F32, full, xs)
	want := make([]float64, 3*2*2*1)
	for i3 := int64(0); i3 < full[3]; i3++ {
		for i2 := int64(0); i2 < full[2]; i2++ {
			for i1 := int64(0); i1 < full[1]; i1++ {
				for i0 := int64(0); i0 < full[0]; i0++ {
					d := (((i3%ne[3])*ne[2]+i2%ne[2])*ne[1]+i1%ne[1])*ne[0] + i0%ne[0]
					want[d] += float64(xs[((i3*full[2]+i2)*full[1]+i1)*full[0]+i0])
				}
			}
		}
	}
	w32 := make([]float32, len(want))
	for i, v := range want {
		w32[i] = float32(v)
	}
	got := mustOp(t, ops.OpRepeatBack, []*ops.Tensor{x}, map[string]any{"ne": ne})
	opstest.CheckClose(t, got.ToF32(), w32, 1e-6)
	wantOpError(t, ops.OpRepeatBack, []*ops.Tensor{x}, map[string]any{"ne": []int64{4, 2, 2, 1}}, "does not divide")
}

func TestHostGetRowsBack(t *testing.T) {
	g := opstest.RandVals(9, 3*4, -1, 1) // 4 grad rows of 3
	rows := []int64{2, 0, 2, 4}
	want := make([]float32, 3*5)
	for i, r := range rows {
		for j := 0; j < 3; j++ {
			want[int(r)*3+j] = float32(float64(want[int(r)*3+j]) + float64(g[i*3+j]))
		}
	}
	got := mustOp(t, ops.OpGetRowsBack, []*ops.Tensor{ops.FromF32(ops.F32, []int64{3, 4}, g), ops.FromInts(ops.I32, []int64{4}, rows)},
		map[string]any{"ne": []int64{3, 5}})
	if got.Ne != [ops.MaxDims]int64{3, 5, 1, 1} {
		t.Fatalf("shape %v", got.Ne)
	}
	opstest.CheckClose(t, got.ToF32(), want, 1e-7)
}

func TestHostRMSNormBack(t *testing.T) {
	const n = 16
	dz := opstest.RandVals(10, n*3, -10, 10)
	xs := opstest.RandVals(11, n*3, -10, 10)
	const eps = 1e-6
	want := make([]float32, n*3)
	// d/dx of y = x/√(mean(x²) + eps), applied to dz, in float64:
	// dx = (dz - x·Σ(x·dz)/(n·(mean + eps)))/√(mean + eps).
	for r := 0; r < 3; r++ {
		var sxx, sxd float64
		for i := 0; i < n; i++ {
			x := float64(xs[r*n+i])
			sxx += x * x
			sxd += x * float64(dz[r*n+i])
		}
		m := sxx/n + eps
		for i := 0; i < n; i++ {
			want[r*n+i] = float32((float64(dz[r*n+i]) - float64(xs[r*n+i])*sxd/(n*m)) / math.Sqrt(m))
		}
	}
	got := mustOp(t, ops.OpRMSNormBack, []*ops.Tensor{ops.FromF32(ops.F32, []int64{n, 3}, dz), ops.FromF32(ops.F32, []int64{n, 3}, xs)}, map[string]any{"eps": eps})
	opstest.CheckClose(t, got.ToF32(), want, 1e-5)
}

func TestHostSoftMaxBack(t *testing.T) {
	const n = 10
	dy := opstest.RandVals(12, n*2, -1, 1)
	// y: a softmax row.
	y := make([]float32, n*2)
	for r := 0; r < 2; r++ {
		xs := opstest.RandVals(int64(13+r), n, -3, 3)
		var s float64
		for _, v := range xs {
			s += math.Exp(float64(v))
		}
		for i, v := range xs {
			y[r*n+i] = float32(math.Exp(float64(v)) / s)
		}
	}
	const scale = 0.5
	want := make([]float32, n*2)
	for r := 0; r < 2; r++ {
		var dot float64
		for i := 0; i < n; i++ {
			dot += float64(y[r*n+i]) * float64(dy[r*n+i])
		}
		for i := 0; i < n; i++ {
			want[r*n+i] = float32(scale * (float64(dy[r*n+i]) - dot) * float64(y[r*n+i]))
		}
	}
	srcs := []*ops.Tensor{ops.FromF32(ops.F32, []int64{n, 2}, dy), ops.FromF32(ops.F32, []int64{n, 2}, y)}
	opstest.CheckClose(t, mustOp(t, ops.OpSoftMaxBack, srcs, map[string]any{"scale": scale}).ToF32(), want, 1e-6)
	var nm *ops.NoHostMathError
	if _, err := runOp(ops.OpSoftMaxBack, srcs, map[string]any{"max_bias": 8.0}); !errors.As(err, &nm) {
		t.Fatalf("max_bias 8: %v, want NoHostMathError", err)
	}
}

func TestHostDiagMaskInf(t *testing.T) {
	xs := opstest.RandVals(14, 5*4*2, -1, 1)
	want := append([]float32(nil), xs...)
	const nPast = 1
	for k := 0; k < 2; k++ {
		for i1 := 0; i1 < 4; i1++ {
			for i0 := 0; i0 < 5; i0++ {
				if i0 > nPast+i1 {
					want[(k*4+i1)*5+i0] = float32(math.Inf(-1))
				}
			}
		}
	}
	got := mustOp(t, ops.OpDiagMaskInf, []*ops.Tensor{ops.FromF32(ops.F32, []int64{5, 4, 2}, xs)}, map[string]any{"n_past": nPast})
	for i, g := range got.ToF32() {
		if g != want[i] {
			t.Fatalf("element %d = %g, want %g", i, g, want[i])
		}
	}
}

// TestHostRopeBack: rope_back rotates each pair by -theta, theta = pos ·
// base^(-2i/n_dims) (computed here in float64), for normal (adjacent
// pairs) and neox (i, i + n_dims/2) layouts; dims past n_dims pass
// through.
func TestHostRopeBack(t *testing.T) {
	const ne0, heads, toks, nDims = 10, 2, 3, 8
	dy := opstest.RandVals(40, ne0*heads*toks, -1, 1)
	pos := []int64{0, 7, 300}
	for _, mode := range []int64{ops.RopeNormal, ops.RopeNeox} {
		want := make([]float32, len(dy))
		for tk := 0; tk < toks; tk++ {
			for h := 0; h < heads; h++ {
				row := dy[(tk*heads+h)*ne0:][:ne0]
				out := want[(tk*heads+h)*ne0:][:ne0]
				copy(out, row)
				for i := 0; i < nDims/2; i++ {
					th := -float64(pos[tk]) * math.Pow(10000, -2*float64(i)/nDims)
					a, b := 2*i, 2*i+1
					if mode == ops.RopeNeox {
						a, b = i, i+nDims/2
					}
					x0, x1 := float64(row[a]), float64(row[b])
					out[a] = float32(x0*math.Cos(th) - x1*math.Sin(th))
					out[b] = float32(x0*math.Sin(th) + x1*math.Cos(th))
				}
			}
		}
		raw := map[string]any{"n_dims": nDims, "mode": mode}
		srcs := []*ops.Tensor{ops.FromF32(ops.F32, []int64{ne0, heads, toks}, dy), ops.FromInts(ops.I32, []int64{toks}, pos)}
		opstest.CheckClose(t, mustOp(t, ops.OpRopeBack, srcs, raw).ToF32(), want, 2e-5)
	}
	var nm *ops.NoHostMathError
	srcs := []*ops.Tensor{ops.New(ops.F32, 8, 1, 2), ops.New(ops.I32, 8)}
	if _, err := runOp(ops.OpRopeBack, srcs, map[string]any{"n_dims": 8, "mode": 8}); !errors.As(err, &nm) {
		t.Errorf("mode 8: %v, want NoHostMathError", err)
	}
}

func TestHostCrossEntropyLoss(t *testing.T) {
	const n, rows = 7, 3
	lv := opstest.RandVals(41, n*rows, -5, 5)
	yv := opstest.RandVals(42, n*rows, 0, 1)
	var loss float64
	grad := make([]float32, n*rows)
	const g = 0.75
	for r := 0; r < rows; r++ {
		var z float64
		for i := 0; i < n; i++ {
			z += math.Exp(float64(lv[r*n+i]))
		}
		for i := 0; i < n; i++ {
			p := math.Exp(float64(lv[r*n+i])) / z
			loss -= float64(yv[r*n+i]) * math.Log(p)
			grad[r*n+i] = float32((p - float64(yv[r*n+i])) * g / rows)
		}
	}
	loss /= rows
	l, y := ops.FromF32(ops.F32, []int64{n, rows}, lv), ops.FromF32(ops.F32, []int64{n, rows}, yv)
	opstest.CheckClose(t, mustOp(t, ops.OpCrossEntropyLoss, []*ops.Tensor{l, y}, nil).ToF32(), []float32{float32(loss)}, 1e-5)
	got := mustOp(t, ops.OpCrossEntropyLossBack, []*ops.Tensor{ops.FromF32(ops.F32, []int64{1}, []float32{g}), l, y}, nil)
	opstest.CheckClose(t, got.ToF32(), grad, 1e-6)
}

func TestHostOptSteps(t *testing.T) {
	const n = 12
	w, g := opstest.RandVals(43, n, -1, 1), opstest.RandVals(44, n, -1, 1)
	m, v := opstest.RandVals(45, n, -1, 1), opstest.RandVals(46, n, 0, 1)
	pa := []float32{0.01, 0.9, 0.999, 1e-8, 0.1, 1 / (1 - 0.9), 1 / (1 - 0.999)}
	want := make([]float32, n)
	for i := range want {
		a, b1, b2, eps, wd, b1h, b2h := float64(pa[0]), float64(pa[1]), float64(pa[2]), float64(pa[3]), float64(pa[4]), float64(pa[5]), float64(pa[6])
		mi := float64(m[i])*b1 + float64(g[i])*(1-b1)
		vi := float64(v[i])*b2 + float64(g[i])*float64(g[i])*(1-b2)
		want[i] = float32(float64(w[i])*(1-a*wd) - a*(mi*b1h)/(math.Sqrt(vi*b2h)+eps))
	}
	T := func(x []float32) *ops.Tensor { return ops.FromF32(ops.F32, []int64{4, 3}, x) }
	got := mustOp(t, ops.OpOptStepAdamW, []*ops.Tensor{T(w), T(g), T(m), T(v), ops.FromF32(ops.F32, []int64{7}, pa)}, nil)
	opstest.CheckClose(t, got.ToF32(), want, 1e-5)

	ps := []float32{0.05, 0.2}
	for i := range want {
		want[i] = float32(float64(w[i])*(1-0.05*0.2) - 0.05*float64(g[i]))
	}
	got = mustOp(t, ops.OpOptStepSGD, []*ops.Tensor{T(w), T(g), ops.FromF32(ops.F32, []int64{2}, ps)}, nil)
	opstest.CheckClose(t, got.ToF32(), want, 1e-6)
}
