package refmath

import (
	"bytes"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestGetRows(t *testing.T) {
	// data [64, 4, 2] (64 is a multiple of the q8_0/q4_0 block size), rows
	// i32 [3, 2]: batch j takes rows idx[:, j] of data[:, :, j].
	vals := opstest.RandVals(21, 64*4*2, -2, 2)
	idx := ops.FromInts(ops.I32, []int64{3, 2}, []int64{3, 0, 3, 1, 2, 0})
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0} {
		t.Run(typ.String(), func(t *testing.T) {
			data := ops.FromF32(typ, []int64{64, 4, 2}, vals)
			deq := data.ToF32() // what the rows hold after quantization
			y := mustOp(t, ops.OpGetRows, []*ops.Tensor{data, idx}, nil)
			if y.Type != ops.F32 || y.Ne != [4]int64{64, 3, 2, 1} {
				t.Fatalf("result %s %s", y.Type, y.ShapeString())
			}
			var want []float32
			for j, rows := range [][]int{{3, 0, 3}, {1, 2, 0}} {
				for _, r := range rows {
					o := (j*4 + r) * 64
					want = append(want, deq[o:o+64]...)
				}
			}
			opstest.CheckClose(t, y.ToF32(), want, 0)
		})
	}
	t.Run("q4_K", func(t *testing.T) {
		data := ops.FromF32(ops.Q4_K, []int64{256, 3}, opstest.RandVals(22, 256*3, -1, 1))
		deq := data.ToF32()
		y := mustOp(t, ops.OpGetRows, []*ops.Tensor{data, ops.FromInts(ops.I32, []int64{2}, []int64{2, 1})}, nil)
		opstest.CheckClose(t, y.ToF32(), append(append([]float32{}, deq[512:768]...), deq[256:512]...), 0)
	})
	t.Run("strided data", func(t *testing.T) {
		data := ops.FromF32(ops.F32, []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
		y := mustOp(t, ops.OpGetRows, []*ops.Tensor{reftest.PermutedCopy(t, data), ops.FromInts(ops.I32, []int64{2}, []int64{2, 0})}, nil)
		opstest.CheckClose(t, y.ToF32(), []float32{5, 6, 1, 2}, 0)
	})
	t.Run("errors leave dst untouched", func(t *testing.T) {
		data := ops.FromF32(ops.F32, []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
		info, _ := ops.Lookup("get_rows")
		dst := ops.New(ops.F32, 2, 2)
		before := append([]byte(nil), dst.Buf...)
		err := Run(info, dst, []*ops.Tensor{data, ops.FromInts(ops.I32, []int64{2}, []int64{1, 3})}, ops.Params{})
		if err == nil || err.Error() != "get_rows: rows[1, 0, 0] = 3 is outside data rows 0..2" {
			t.Fatalf("err = %v", err)
		}
		if !bytes.Equal(dst.Buf, before) {
			t.Errorf("dst was written")
		}
		wantOpError(t, ops.OpGetRows, []*ops.Tensor{data, ops.FromInts(ops.I32, []int64{1}, []int64{-1})}, nil, "rows[0, 0, 0] = -1")
	})
	wantOpError(t, ops.OpGetRows, []*ops.Tensor{ops.New(ops.F32, 4, 3), ops.New(ops.I64, 2)}, nil, "get_rows: rows is i64, want i32")
	wantOpError(t, ops.OpGetRows, []*ops.Tensor{ops.New(ops.F32, 4, 3, 2), ops.New(ops.I32, 2, 3)}, nil, "want rows.ne1 = data.ne2")
	wantOpError(t, ops.OpGetRows, []*ops.Tensor{ops.New(ops.I64, 4, 3), ops.New(ops.I32, 2)}, nil, "data is i64")
	// i32 data stays i32 (ggml_get_rows keeps the type).
	yi := mustOp(t, ops.OpGetRows, []*ops.Tensor{ops.FromInts(ops.I32, []int64{2, 3}, []int64{1, 2, 3, 4, -5, 6}), ops.FromInts(ops.I32, []int64{2}, []int64{2, 0})}, nil)
	if yi.Type != ops.I32 {
		t.Fatalf("i32 data: result type %s", yi.Type)
	}
	for i, want := range []int64{-5, 6, 1, 2} {
		if got := yi.Int(int64(i%2), int64(i/2), 0, 0); got != want {
			t.Errorf("i32 get_rows[%d] = %d, want %d", i, got, want)
		}
	}
}
