package refmath

import (
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

type rope64Params struct {
	nDims                                  int
	neox                                   bool
	base, freqScale, ext, attn, fast, slow float64
	nCtxOrig                               float64
	ff                                     []float64
}

// rope64 rotates one row in float64, from the formulas (not ggml's code):
// pair i has angle pos(i)·base^(-2i/n_dims)/ff[i], YaRN-mixed.
func rope64(row []float32, pos func(i int) float64, q rope64Params) []float32 {
	out := append([]float32(nil), row...)
	corr := func(nRot float64) float64 {
		return float64(q.nDims) * math.Log(q.nCtxOrig/(nRot*2*math.Pi)) / (2 * math.Log(q.base))
	}
	low := math.Max(0, math.Floor(corr(q.fast)))
	high := math.Min(float64(q.nDims-1), math.Ceil(corr(q.slow)))
	for i := 0; i < q.nDims/2; i++ {
		ext := pos(i) * math.Pow(q.base, -2*float64(i)/float64(q.nDims))
		if q.ff != nil {
			ext /= q.ff[i]
		}
		theta := q.freqScale * ext
		m := q.attn
		if q.ext != 0 {
			y := (float64(i) - low) / math.Max(0.001, high-low)
			mix := (1 - math.Min(1, math.Max(0, y))) * q.ext
			theta = theta*(1-mix) + ext*mix
			m *= 1 + 0.1*math.Log(1/q.freqScale)
		}
		c, s := math.Cos(theta)*m, math.Sin(theta)*m
		a, b := 2*i, 2*i+1
		if q.neox {
			a, b = i, i+q.nDims/2
		}
		x0, x1 := float64(row[a]), float64(row[b])
		out[a] = float32(x0*c - x1*s)
		out[b] = float32(x0*s + x1*c)
	}
	return out
}

func TestRopeByHand(t *testing.T) {
	// x [6, 1, 2]: two tokens at positions 0 and 1, n_dims 4, base 10000
	// (theta_scale 0.01): token 1 rotates its pairs by 1 and 0.01 rad;
	// dims 4 and 5 are copied.
	x := ops.FromF32(ops.F32, []int64{6, 1, 2}, []float32{1, 0, 1, 0, 7, 8, 1, 0, 1, 0, 7, 8})
	pos := ops.FromInts(ops.I32, []int64{2}, []int64{0, 1})
	c1, s1 := float32(math.Cos(1)), float32(math.Sin(1))
	c2, s2 := float32(math.Cos(0.01)), float32(math.Sin(0.01))
	tests := []struct {
		mode string
		want []float32
	}{
		{"normal", []float32{1, 0, 1, 0, 7, 8, c1, s1, c2, s2, 7, 8}},
		// neox pairs (x0, x2) at 1 rad and (x1, x3) at 0.01 rad.
		{"neox", []float32{1, 0, 1, 0, 7, 8, c1 - s1, 0, s1 + c1, 0, 7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			y := mustOp(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 4, "mode": tt.mode})
			opstest.CheckClose(t, y.ToF32(), tt.want, 1e-6)
		})
	}
}

func TestRopeAgainstFloat64(t *testing.T) {
	const ne0, heads, tokens = 16, 3, 4
	xs := opstest.RandVals(7, ne0*heads*tokens, -1, 1)
	x := ops.FromF32(ops.F32, []int64{ne0, heads, tokens}, xs)
	posVals := []int64{0, 3, 17, 1000}
	pos := ops.FromInts(ops.I32, []int64{tokens}, posVals)
	ffVals := []float32{1, 2, 4, 8, 16, 32}
	ff := ops.FromF32(ops.F32, []int64{6}, ffVals)
	base := rope64Params{nDims: 12, base: 10000, freqScale: 1, attn: 1, fast: 32, slow: 1}
	tests := []struct {
		name string
		raw  map[string]any
		ff   bool
		q    func(q rope64Params) rope64Params
		tol  float64
	}{
		{"normal", map[string]any{"n_dims": 12}, false, func(q rope64Params) rope64Params { return q }, 2e-4},
		{"neox", map[string]any{"n_dims": 12, "mode": "neox"}, false, func(q rope64Params) rope64Params { q.neox = true; return q }, 2e-4},
		{"neox base 500000 attn_factor", map[string]any{"n_dims": 12, "mode": "neox", "freq_base": 500000, "attn_factor": 0.5},
			false, func(q rope64Params) rope64Params { q.neox, q.base, q.attn = true, 500000, 0.5; return q }, 2e-4},
		{"freq_factors", map[string]any{"n_dims": 12, "mode": "neox"}, true, func(q rope64Params) rope64Params {
			q.neox = true
			for _, f := range ffVals {
				q.ff = append(q.ff, float64(f))
			}
			return q
		}, 2e-4},
		{"yarn", map[string]any{"n_dims": 12, "freq_scale": 0.25, "ext_factor": 1, "n_ctx_orig": 4096, "beta_fast": 32, "beta_slow": 1},
			false, func(q rope64Params) rope64Params {
				q.freqScale, q.ext, q.nCtxOrig = 0.25, 1, 4096
				return q
			}, 5e-4},
		{"yarn partial mix", map[string]any{"n_dims": 12, "mode": "neox", "freq_scale": 0.5, "ext_factor": 0.5, "n_ctx_orig": 2048, "beta_fast": 4, "beta_slow": 2},
			false, func(q rope64Params) rope64Params {
				q.neox, q.freqScale, q.ext, q.nCtxOrig, q.fast, q.slow = true, 0.5, 0.5, 2048, 4, 2
				return q
			}, 5e-4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := []*ops.Tensor{x, pos}
			if tt.ff {
				srcs = append(srcs, ff)
			}
			q := tt.q(base)
			var want []float32
			for i2 := 0; i2 < tokens; i2++ {
				for i1 := 0; i1 < heads; i1++ {
					row := xs[(i2*heads+i1)*ne0 : (i2*heads+i1+1)*ne0]
					p := float64(posVals[i2])
					want = append(want, rope64(row, func(int) float64 { return p }, q)...)
				}
			}
			y := mustOp(t, ops.OpRope, srcs, tt.raw)
			opstest.CheckClose(t, y.ToF32(), want, tt.tol)
			// The same through a strided x.
			ys := mustOp(t, ops.OpRope, append([]*ops.Tensor{reftest.PermutedCopy(t, x)}, srcs[1:]...), tt.raw)
			opstest.CheckClose(t, ys.ToF32(), y.ToF32(), 0)
		})
	}
	t.Run("f16", func(t *testing.T) {
		xh := ops.FromF32(ops.F16, []int64{ne0, heads, tokens}, xs)
		y := mustOp(t, ops.OpRope, []*ops.Tensor{xh, pos}, map[string]any{"n_dims": 12, "mode": "neox"})
		if y.Type != ops.F16 {
			t.Fatalf("type %s", y.Type)
		}
		q := base
		q.neox = true
		xr := xh.ToF32()
		var want []float32
		for i2 := 0; i2 < tokens; i2++ {
			for i1 := 0; i1 < heads; i1++ {
				p := float64(posVals[i2])
				for _, v := range rope64(xr[(i2*heads+i1)*ne0:(i2*heads+i1+1)*ne0], func(int) float64 { return p }, q) {
					want = append(want, ops.RoundF16(v))
				}
			}
		}
		opstest.CheckClose(t, y.ToF32(), want, 2e-3)
	})
}

func TestIMRope(t *testing.T) {
	// 2 tokens, 8 dims = 4 pairs, positions t, h, w, e per token.
	const ne0, tokens = 8, 2
	xs := opstest.RandVals(11, ne0*tokens, -1, 1)
	x := ops.FromF32(ops.F32, []int64{ne0, 1, tokens}, xs)
	// pos layout: [t0 t1 | h0 h1 | w0 w1 | e0 e1].
	posVals := []int64{1, 5, 2, 6, 3, 7, 4, 8}
	pos := ops.FromInts(ops.I32, []int64{4 * tokens}, posVals)
	tests := []struct {
		sections []any
		pick     []int // component (0 t, 1 h, 2 w, 3 e) of each pair
	}{
		{[]any{2, 1, 1, 0}, []int{0, 1, 2, 0}}, // sector 3: %3 == 0 and 3 < 3*2
		{[]any{1, 1, 1, 1}, []int{0, 1, 2, 3}}, // sector 3: 3 < 3*1 fails → e
		{[]any{1, 0, 1, 2}, []int{0, 3, 2, 3}}, // no h section
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			y := mustOp(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 8, "mode": "imrope", "sections": tt.sections})
			q := rope64Params{nDims: 8, neox: true, base: 10000, freqScale: 1, attn: 1, fast: 32, slow: 1}
			var want []float32
			for i2 := 0; i2 < tokens; i2++ {
				sel := func(i int) float64 { return float64(posVals[tt.pick[i]*tokens+i2]) }
				want = append(want, rope64(xs[i2*ne0:(i2+1)*ne0], sel, q)...)
			}
			opstest.CheckClose(t, y.ToF32(), want, 1e-5)
		})
	}
}

func TestMRope(t *testing.T) {
	// mrope (mode 8): consecutive sections of pairs take t, h, w, e.
	const ne0, tokens = 10, 2
	xs := opstest.RandVals(12, ne0*tokens, -1, 1)
	x := ops.FromF32(ops.F32, []int64{ne0, 1, tokens}, xs)
	posVals := []int64{1, 5, 2, 6, 3, 7, 4, 8}
	pos := ops.FromInts(ops.I32, []int64{4 * tokens}, posVals)
	tests := []struct {
		sections []any
		pick     []int
	}{
		{[]any{1, 2, 1, 0}, []int{0, 1, 1, 2}},
		{[]any{1, 1, 1, 1}, []int{0, 1, 2, 3}},
		{[]any{2, 0, 1, 0}, []int{0, 0, 2, 0}}, // sector 3 = 3 mod Σ = 3 → back to t
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			y := mustOp(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 8, "mode": "mrope", "sections": tt.sections})
			q := rope64Params{nDims: 8, neox: true, base: 10000, freqScale: 1, attn: 1, fast: 32, slow: 1}
			var want []float32
			for i2 := 0; i2 < tokens; i2++ {
				sel := func(i int) float64 { return float64(posVals[tt.pick[i]*tokens+i2]) }
				want = append(want, rope64(xs[i2*ne0:(i2+1)*ne0], sel, q)...)
			}
			opstest.CheckClose(t, y.ToF32(), want, 1e-5)
		})
	}
}

func TestVisionRope(t *testing.T) {
	// vision (mode 24): ne0 = 2·n_dims, pairs (x[i], x[i+n_dims]) for all
	// ne0/2 pairs; pair i is in sector i mod Σsections, takes t or h, and
	// its angle restarts at each section: p·base^(-2·(sector-start)/n_dims).
	const nDims, ne0, tokens = 8, 16, 2
	xs := opstest.RandVals(13, ne0*tokens, -1, 1)
	x := ops.FromF32(ops.F32, []int64{ne0, 1, tokens}, xs)
	posVals := []int64{3, 9, 20, 40, 0, 0, 0, 0}
	pos := ops.FromInts(ops.I32, []int64{4 * tokens}, posVals)
	sections := []int{2, 2, 0, 0}
	y := mustOp(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": nDims, "mode": "vision", "sections": []any{2, 2, 0, 0}})
	var want []float32
	for i2 := 0; i2 < tokens; i2++ {
		row := xs[i2*ne0 : (i2+1)*ne0]
		out := append([]float32(nil), row...)
		for i := 0; i < ne0/2; i++ {
			sector := i % (sections[0] + sections[1])
			comp, start := 0, 0
			if sector >= sections[0] {
				comp, start = 1, sections[0]
			}
			theta := float64(posVals[comp*tokens+i2]) * math.Pow(10000, -2*float64(sector-start)/nDims)
			c, s := math.Cos(theta), math.Sin(theta)
			x0, x1 := float64(row[i]), float64(row[i+nDims])
			out[i] = float32(x0*c - x1*s)
			out[i+nDims] = float32(x0*s + x1*c)
		}
		want = append(want, out...)
	}
	opstest.CheckClose(t, y.ToF32(), want, 1e-5)
}

func TestRopeOffset(t *testing.T) {
	// n_offs (ggml_rope_set_offset) moves the rotated window: dims before
	// it and after n_offs + n_dims are copied.
	const ne0, tokens = 12, 3
	xs := opstest.RandVals(14, ne0*tokens, -1, 1)
	x := ops.FromF32(ops.F32, []int64{ne0, 1, tokens}, xs)
	posVals := []int64{2, 7, 30}
	pos := ops.FromInts(ops.I32, []int64{tokens}, posVals)
	for _, neox := range []bool{false, true} {
		mode := map[bool]string{false: "normal", true: "neox"}[neox]
		t.Run(mode, func(t *testing.T) {
			y := mustOp(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 6, "mode": mode, "n_offs": 4})
			q := rope64Params{nDims: 6, neox: neox, base: 10000, freqScale: 1, attn: 1, fast: 32, slow: 1}
			var want []float32
			for i2 := 0; i2 < tokens; i2++ {
				row := xs[i2*ne0 : (i2+1)*ne0]
				p := float64(posVals[i2])
				want = append(want, row[:4]...)
				want = append(want, rope64(row[4:], func(int) float64 { return p }, q)...)
			}
			opstest.CheckClose(t, y.ToF32(), want, 1e-5)
		})
	}
}

func TestRopeErrors(t *testing.T) {
	x := ops.New(ops.F32, 8, 2, 3)
	pos := ops.New(ops.I32, 3)
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 10}, "rope: param n_dims: 10, want an even number in 2..ne0 = 8")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 3}, "param n_dims: 3")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, ops.New(ops.I32, 2)}, map[string]any{"n_dims": 8}, "pos.ne0 = 2 != x.ne2 = 3")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, ops.New(ops.F32, 3)}, map[string]any{"n_dims": 8}, "pos is f32, want i32")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 8, "mode": "imrope", "sections": []any{1, 1, 1, 1}}, "imrope: pos.ne0 = 3, want 4*x.ne2 = 12")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, ops.New(ops.I32, 12)}, map[string]any{"n_dims": 8, "mode": "imrope"}, "sections that are not all zero")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, pos, ops.New(ops.F32, 3)}, map[string]any{"n_dims": 8}, "freq_factors.ne0 = 3 < n_dims/2 = 4")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, pos}, map[string]any{"n_dims": 6, "n_offs": 4}, "param n_offs: 4, want an even number with n_offs + n_dims <= ne0 = 8")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, ops.New(ops.I32, 12)}, map[string]any{"n_dims": 2, "mode": "vision", "sections": []any{1, 1, 0, 0}}, "vision rope wants ne0/2 = 4")
	wantOpError(t, ops.OpRope, []*ops.Tensor{x, ops.New(ops.I32, 12)}, map[string]any{"n_dims": 8, "mode": "mrope", "sections": []any{0, 0, 0, 0}}, "mrope needs sections that are not all zero")
	wantOpError(t, ops.OpRope, []*ops.Tensor{ops.New(ops.Q8_0, 32, 1, 3), pos}, map[string]any{"n_dims": 8}, "x is q8_0")
}

func BenchmarkRope(b *testing.B) {
	// 4096x512 elements: 32 heads of 128, 512 tokens (llama-3 Q).
	x := ops.FromF32(ops.F32, []int64{128, 32, 512}, opstest.RandVals(1, 128*32*512, -1, 1))
	posVals := make([]int64, 512)
	for i := range posVals {
		posVals[i] = int64(i)
	}
	pos := ops.FromInts(ops.I32, []int64{512}, posVals)
	dst := ops.New(ops.F32, 128, 32, 512)
	info, _ := ops.Lookup("rope")
	p, _ := info.Normalize(map[string]any{"n_dims": 128, "mode": "neox", "freq_base": 500000})
	b.SetBytes(int64(2 * len(x.Buf)))
	b.ResetTimer()
	for b.Loop() {
		if err := Run(info, dst, []*ops.Tensor{x, pos}, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRopeLlama is ROPE neox at testcases/perf/llama3-8b.txt's shapes
// (x f32 [128, 32, n], n = 1, 7, 32) with the params ggml-et's rope_f32
// launch passes, through OpInfo.Run as the reference device calls it.
// Besides ns/op it reports cpu-ms/op (process CPU time).
func BenchmarkRopeLlama(b *testing.B) {
	info, _ := ops.Lookup("rope")
	p, err := info.Normalize(map[string]any{
		"n_dims": 128, "mode": "neox", "n_ctx_orig": 8192, "freq_base": 500000,
		"freq_scale": 1, "ext_factor": 0, "attn_factor": 1, "beta_fast": 32, "beta_slow": 1,
		"sections": []int64{0, 0, 0, 0},
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int64{1, 7, 32} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := ops.FromF32(ops.F32, []int64{128, 32, n}, opstest.RandVals(n, int(128*32*n), -1, 1))
			pv := make([]int64, n)
			for i := range pv {
				pv[i] = int64(i*37+100) % 8192
			}
			srcs := []*ops.Tensor{x, ops.FromInts(ops.I32, []int64{n}, pv)}
			dst := ops.New(ops.F32, 128, 32, n)
			cpu0 := opstest.ProcessCPUNS()
			for b.Loop() {
				if err := Run(info, dst, srcs, p); err != nil {
					b.Fatal(err)
				}
			}
			if cpu0 >= 0 {
				b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			}
		})
	}
}
