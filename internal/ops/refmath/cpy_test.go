package refmath

import (
	"bytes"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestCpy(t *testing.T) {
	vals := opstest.RandVals(31, 64*3, -3, 3)
	x := ops.FromF32(ops.F32, []int64{64, 3}, vals)
	for _, typ := range []ops.Type{ops.F16, ops.Q8_0, ops.Q4_0, ops.F32} {
		t.Run("f32 to "+typ.String(), func(t *testing.T) {
			y := mustOp(t, ops.OpCpy, []*ops.Tensor{x}, map[string]any{"type": typ.String()})
			if y.Type != typ || y.Ne != x.Ne || !y.IsContiguous() {
				t.Fatalf("result %s %s", y.Type, y.ShapeString())
			}
			// Bit-exact with ggml's reference conversion of the same rows.
			if want := ops.FromF32(typ, []int64{64, 3}, vals); !bytes.Equal(y.Buf, want.Buf) {
				t.Fatalf("bytes differ from FromF32(%s)", typ)
			}
		})
	}
	t.Run("q4_K", func(t *testing.T) {
		v := opstest.RandVals(32, 256, -1, 1)
		y := mustOp(t, ops.OpCpy, []*ops.Tensor{ops.FromF32(ops.F32, []int64{256}, v)}, map[string]any{"type": "q4_K"})
		if want := ops.FromF32(ops.Q4_K, []int64{256}, v); !bytes.Equal(y.Buf, want.Buf) {
			t.Fatalf("bytes differ")
		}
	})
	t.Run("f16 to f32 is exact", func(t *testing.T) {
		h := ops.FromF32(ops.F16, []int64{64, 3}, vals)
		y := mustOp(t, ops.OpCpy, []*ops.Tensor{h}, map[string]any{"type": "f32"})
		opstest.CheckClose(t, y.ToF32(), h.ToF32(), 0)
	})
	t.Run("q8_0 to f32 dequantizes", func(t *testing.T) {
		q := ops.FromF32(ops.Q8_0, []int64{64, 3}, vals)
		opstest.CheckClose(t, mustOp(t, ops.OpCpy, []*ops.Tensor{q}, map[string]any{"type": "f32"}).ToF32(), q.ToF32(), 0)
	})
	t.Run("strided f32 to f16", func(t *testing.T) {
		small := ops.FromF32(ops.F32, []int64{2, 3}, []float32{1.0 / 3, 2, 3, 4, 5, 6})
		y := mustOp(t, ops.OpCpy, []*ops.Tensor{ops.Transpose(small)}, map[string]any{"type": "f16"})
		opstest.CheckClose(t, y.ToF32(), []float32{ops.RoundF16(1.0 / 3), 3, 5, 2, 4, 6}, 0)
	})
	t.Run("same type is a byte copy", func(t *testing.T) {
		q := ops.FromF32(ops.Q8_0, []int64{32, 4}, opstest.RandVals(33, 128, -1, 1))
		v, err := ops.View(q, []int64{32, 2}, []uint64{2 * q.Nb[1]}, q.Nb[1]) // rows 1 and 3
		if err != nil {
			t.Fatal(err)
		}
		y := mustOp(t, ops.OpCpy, []*ops.Tensor{v}, map[string]any{"type": "q8_0"})
		want := append(append([]byte{}, q.Buf[34:68]...), q.Buf[102:136]...)
		if !bytes.Equal(y.Buf, want) {
			t.Fatalf("byte copy differs")
		}
		c := mustOp(t, ops.OpCont, []*ops.Tensor{v}, nil)
		if !bytes.Equal(c.Buf, want) {
			t.Fatalf("cont differs")
		}
		i := ops.FromInts(ops.I32, []int64{3}, []int64{7, -1, 1 << 30})
		if y := mustOp(t, ops.OpCpy, []*ops.Tensor{i}, map[string]any{"type": "i32"}); !bytes.Equal(y.Buf, i.Buf) {
			t.Fatalf("i32 copy differs")
		}
	})
	wantOpError(t, ops.OpCpy, []*ops.Tensor{ops.New(ops.F32, 48)}, map[string]any{"type": "q8_0"}, "cpy: x.ne0 = 48 is not a multiple of the q8_0 block size 32")
	wantOpError(t, ops.OpCpy, []*ops.Tensor{ops.New(ops.I32, 4)}, map[string]any{"type": "f16"}, "cannot convert i32 to f16")
	wantOpError(t, ops.OpCpy, []*ops.Tensor{ops.New(ops.I16, 4)}, map[string]any{"type": "f32"}, "cannot convert i16 to f32")
	wantOpError(t, ops.OpCpy, []*ops.Tensor{ops.New(ops.F32, 4)}, nil, "param type: required")

	// f32 ↔ i32 as ggml's CPU converts them: a C cast toward zero, and
	// back exactly (to float32 rounding).
	f := ops.FromF32(ops.F32, []int64{5}, []float32{2.9, -2.9, 0.5, -0.5, 16777217})
	yi := mustOp(t, ops.OpCpy, []*ops.Tensor{f}, map[string]any{"type": "i32"})
	for j, want := range []int64{2, -2, 0, 0, 16777216} {
		if g := yi.Int(int64(j), 0, 0, 0); g != want {
			t.Errorf("f32 → i32 [%d] = %d, want %d", j, g, want)
		}
	}
	yf := mustOp(t, ops.OpCpy, []*ops.Tensor{ops.FromInts(ops.I32, []int64{2}, []int64{-7, 1<<24 + 1})}, map[string]any{"type": "f32"})
	opstest.CheckClose(t, yf.ToF32(), []float32{-7, 1 << 24}, 0)
}

func TestCpyIntoDst(t *testing.T) {
	xs := opstest.RandVals(21, 2*3*4, -150, 150)
	x := ops.FromF32(ops.F32, []int64{2, 3, 4}, xs)
	// Another shape with the same element count: a row-major reshape.
	y := mustOp(t, ops.OpCpy, []*ops.Tensor{x, ops.New(ops.F32, 4, 6)}, map[string]any{"type": "f32"})
	if y.Ne != [ops.MaxDims]int64{4, 6, 1, 1} {
		t.Fatalf("shape %s", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), xs, 0)
	// Empty x and dst of other shapes, x with rows (ne0 = 0) that dst
	// has not (FuzzCatalog found the division by zero:
	// testdata/fuzz/FuzzCatalog/a7931f597ebb2c04).
	for _, typ := range []string{"f32", "q8_0"} {
		ty, _ := ops.ParseType(typ)
		if y := mustOp(t, ops.OpCpy, []*ops.Tensor{ops.New(ty, 0, 3), ops.New(ty, 0, 0, 2)}, map[string]any{"type": typ}); y.NElements() != 0 {
			t.Errorf("%s: %d elements", typ, y.NElements())
		}
	}
	// f16 into a permuted dst: element (i0, i1, i2) of the dst view is
	// x's (i0, i1, i2), rounded to f16.
	store := ops.New(ops.F16, 2, 4, 3) // dst memory, viewed as [2, 3, 4] by permute(0, 2, 1, 3)
	dst, err := ops.Permute(store, 0, 2, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := ops.Lookup("cpy")
	p, err := info.Normalize(map[string]any{"type": "f16"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(info, dst, []*ops.Tensor{x, dst}, p); err != nil {
		t.Fatal(err)
	}
	for i2 := int64(0); i2 < 4; i2++ {
		for i1 := int64(0); i1 < 3; i1++ {
			for i0 := int64(0); i0 < 2; i0++ {
				want := ops.RoundF16(xs[(i2*3+i1)*2+i0])
				if got := store.F32(i0, i2, i1, 0); got != want {
					t.Fatalf("dst[%d,%d,%d] = %g, want %g", i0, i1, i2, got, want)
				}
			}
		}
	}
	// f32 -> i32 truncates toward zero; i32 -> f32 is exact.
	ints := mustOp(t, ops.OpCpy, []*ops.Tensor{ops.FromF32(ops.F32, []int64{4}, []float32{-2.7, -0.5, 0.5, 149.9})}, map[string]any{"type": "i32"})
	for i, want := range []int64{-2, 0, 0, 149} {
		if got := ints.Int(int64(i), 0, 0, 0); got != want {
			t.Errorf("i32[%d] = %d, want %d", i, got, want)
		}
	}
	back := mustOp(t, ops.OpCpy, []*ops.Tensor{ints, ops.New(ops.F32, 2, 2)}, map[string]any{"type": "f32"})
	opstest.CheckClose(t, back.ToF32(), []float32{-2, 0, 0, 149}, 0)
	wantOpError(t, ops.OpCpy, []*ops.Tensor{x, ops.New(ops.F32, 5, 5)}, map[string]any{"type": "f32"}, "dst [5, 5, 1, 1] has 25 elements")
	wantOpError(t, ops.OpCpy, []*ops.Tensor{x, ops.New(ops.F16, 4, 6)}, map[string]any{"type": "f32"}, "param type: f32, but dst is f16")
}
