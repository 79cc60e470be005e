package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// TestEltwiseLongRows runs unary and glu (split and single-tensor forms)
// on f32 rows longer than eltChunk, which are split into pieces across
// workers, and checks every element against the op's scalar function
// (silu's and swiglu's are ggml's split of a row: siluGGML on the first
// n0&^15 values, siluF32 after, see silu.go), bit for bit.
func TestEltwiseLongRows(t *testing.T) {
	const n0, rows = 2*cpu.EltChunk + 904, 3
	a := ops.FromF32(ops.F32, []int64{n0, rows}, opstest.RandVals(21, n0*rows, -9, 9))
	b := ops.FromF32(ops.F32, []int64{n0, rows}, opstest.RandVals(22, n0*rows, -3, 3))
	x2 := ops.FromF32(ops.F32, []int64{2 * n0, rows}, opstest.RandVals(23, 2*n0*rows, -9, 9))
	near := func(what string, i int, got, want float32) {
		t.Helper()
		if !opstest.SameBits(got, want) {
			t.Fatalf("%s element %d: got %g, want %g", what, i, got, want)
		}
	}
	// The scalar function of element i of a row of n0 values.
	unary := func(op string, i int) func(float32) float32 {
		if op == "silu" && i%n0 < n0&^(cpu.SiluBlock-1) {
			return cpu.SiluGGML
		}
		return UnaryFunc(op)
	}
	glu := func(op string, i int) func(a, b float32) float32 {
		if op == "swiglu" && i%n0 < n0&^(cpu.SiluBlock-1) {
			return func(a, b float32) float32 { return cpu.SiluGGML(a) * b }
		}
		return GLUFunc(op, 0, 0)
	}
	run := func(op string, srcs []*ops.Tensor, params map[string]any) []float32 {
		info, _ := ops.Lookup(op)
		p, err := info.Normalize(params)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := Compute(info, srcs, p)
		if err != nil {
			t.Fatal(err)
		}
		return dst.ToF32()
	}
	av, bv, xv := a.ToF32(), b.ToF32(), x2.ToF32()
	for _, op := range []string{"silu", "tanh", "relu"} {
		for i, g := range run("unary", []*ops.Tensor{a}, map[string]any{"op": op}) {
			near("unary "+op, i, g, unary(op, i)(av[i]))
		}
	}
	for _, op := range []string{"swiglu", "reglu"} {
		for i, g := range run("glu", []*ops.Tensor{a, b}, map[string]any{"op": op}) {
			near("glu split "+op, i, g, glu(op, i)(av[i], bv[i]))
		}
		for _, swapped := range []bool{false, true} {
			got := run("glu", []*ops.Tensor{x2}, map[string]any{"op": op, "swapped": swapped})
			for i, g := range got {
				r, c := i/n0, i%n0
				u, v := xv[r*2*n0+c], xv[r*2*n0+n0+c]
				if swapped {
					u, v = v, u
				}
				near("glu single "+op, i, g, glu(op, i)(u, v))
			}
		}
	}
}

// TestContPermuted4D copies permuted 4-D views large enough to be split
// into parallel chunks (copyRaw steps its row indices within a chunk) and
// checks every element against the view's own accessor.
func TestContPermuted4D(t *testing.T) {
	src := ops.FromF32(ops.F32, []int64{64, 6, 10, 14}, opstest.RandVals(31, 64*6*10*14, -1, 1)) // 840 rows: over refParallel's grain of 512
	info, _ := ops.Lookup("cont")
	p, err := info.Normalize(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ax := range [][4]int{{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}, {1, 0, 2, 3}} {
		v, err := ops.Permute(src, ax[0], ax[1], ax[2], ax[3])
		if err != nil {
			t.Fatal(err)
		}
		dst, err := Compute(info, []*ops.Tensor{v}, p)
		if err != nil {
			t.Fatal(err)
		}
		v.ForEach(func(i0, i1, i2, i3 int64) {
			if g, w := dst.F32(i0, i1, i2, i3), v.F32(i0, i1, i2, i3); g != w {
				t.Fatalf("axes %v element (%d, %d, %d, %d): got %g, want %g", ax, i0, i1, i2, i3, g, w)
			}
		})
	}
}

// TestRopeFastPathMatchesGeneric runs rope on dense f32 rows (ropeF32: row
// views, vector rotation and, without YaRN, vector sin/cos) and on a
// strided copy of the same values (the generic per-row path) and wants the
// same bits, for both modes, with and without freq_factors, YaRN and an
// offset window, in place too, for a launch on the calling goroutine (9
// tokens) and one split over workers (300 tokens), with positions 0,
// negative and beyond 2^29 (where the vector sin/cos declines).
func TestRopeFastPathMatchesGeneric(t *testing.T) {
	const hd, heads = 96, 4
	for _, toks := range []int64{9, 300} {
		ropeFastVsGeneric(t, hd, heads, toks)
	}
}

func ropeFastVsGeneric(t *testing.T, hd, heads, toks int64) {
	x := ops.FromF32(ops.F32, []int64{hd, heads, toks}, opstest.RandVals(51, int(hd*heads*toks), -2, 2))
	xs := reftest.PermutedCopy(t, x)
	pos := make([]int64, toks)
	for i := range pos {
		pos[i] = int64(i*977 + 3)
	}
	pos[1], pos[2], pos[3] = 0, -5000, 1<<30+7
	posT := ops.FromInts(ops.I32, []int64{toks}, pos)
	ff := ops.FromF32(ops.F32, []int64{hd / 2}, opstest.RandVals(52, int(hd/2), 0.5, 4))
	info, _ := ops.Lookup("rope")
	for _, mode := range []string{"neox", "normal"} {
		for _, c := range []map[string]any{
			{"n_dims": hd, "freq_base": 500000},
			{"n_dims": 64, "n_offs": 16, "freq_base": 10000, "freq_scale": 0.25, "attn_factor": 1.3},
			{"n_dims": hd, "freq_base": 10000, "ext_factor": 1, "freq_scale": 0.5, "n_ctx_orig": 4096},
			{"n_dims": hd, "freq_base": 10000, "ff": true},
		} {
			params := map[string]any{"mode": mode}
			srcs, srcsS := []*ops.Tensor{x, posT}, []*ops.Tensor{xs, posT}
			for k, v := range c {
				if k == "ff" {
					srcs, srcsS = append(srcs, ff), append(srcsS, ff)
					continue
				}
				params[k] = v
			}
			p, err := info.Normalize(params)
			if err != nil {
				t.Fatal(err)
			}
			fast, err := Compute(info, srcs, p)
			if err != nil {
				t.Fatal(err)
			}
			gen, err := Compute(info, srcsS, p)
			if err != nil {
				t.Fatal(err)
			}
			inPlace := ops.FromF32(ops.F32, x.Ne[:3], x.ToF32())
			if err := Run(info, inPlace, append([]*ops.Tensor{inPlace}, srcs[1:]...), p); err != nil {
				t.Fatal(err)
			}
			fv, gv, iv := fast.ToF32(), gen.ToF32(), inPlace.ToF32()
			for i := range fv {
				if !opstest.SameBits(fv[i], gv[i]) || !opstest.SameBits(iv[i], gv[i]) {
					t.Fatalf("%d tokens, %s %v element %d: fast path %g (in place %g), generic %g", toks, mode, c, i, fv[i], iv[i], gv[i])
				}
			}
		}
	}
}
