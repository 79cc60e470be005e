package refmath

import (
	"bytes"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestConcat(t *testing.T) {
	a := ops.FromF32(ops.F32, []int64{2, 2}, []float32{1, 2, 3, 4})
	b := ops.FromF32(ops.F32, []int64{2, 2}, []float32{5, 6, 7, 8})
	c := ops.FromF32(ops.F32, []int64{1, 2}, []float32{9, 10})
	tests := []struct {
		name string
		a, b *ops.Tensor
		dim  int
		ne   [ops.MaxDims]int64
		want []float32
	}{
		{"dim 0", a, c, 0, [ops.MaxDims]int64{3, 2, 1, 1}, []float32{1, 2, 9, 3, 4, 10}},
		{"dim 1", a, b, 1, [ops.MaxDims]int64{2, 4, 1, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{"dim 2", a, b, 2, [ops.MaxDims]int64{2, 2, 2, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{"dim 3", a, b, 3, [ops.MaxDims]int64{2, 2, 1, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{"strided", reftest.PermutedCopy(t, a), b, 1, [ops.MaxDims]int64{2, 4, 1, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := mustOp(t, ops.OpConcat, []*ops.Tensor{tt.a, tt.b}, map[string]any{"dim": tt.dim})
			if y.Ne != tt.ne {
				t.Fatalf("shape %s, want %s", y.ShapeString(), ops.ShapeString(tt.ne))
			}
			opstest.CheckClose(t, y.ToF32(), tt.want, 0)
		})
	}
	// i32 is copied bit-exactly (values beyond float32's 24-bit mantissa).
	ia := ops.FromInts(ops.I32, []int64{1}, []int64{16777217})
	ib := ops.FromInts(ops.I32, []int64{1}, []int64{-16777219})
	y := mustOp(t, ops.OpConcat, []*ops.Tensor{ia, ib}, nil)
	if y.Int(0, 0, 0, 0) != 16777217 || y.Int(1, 0, 0, 0) != -16777219 {
		t.Errorf("i32 concat = %d, %d", y.Int(0, 0, 0, 0), y.Int(1, 0, 0, 0))
	}
	wantOpError(t, ops.OpConcat, []*ops.Tensor{a, c}, map[string]any{"dim": 1}, "concat: a [2, 2, 1, 1] and b [1, 2, 1, 1] differ in ne0")
	wantOpError(t, ops.OpConcat, []*ops.Tensor{a, ops.New(ops.F16, 2, 2)}, nil, "b is f16, want a's type f32")
	wantOpError(t, ops.OpConcat, []*ops.Tensor{a, b}, map[string]any{"dim": 4}, "param dim: 4 is not a dimension")
	// Quantized types are concatenated block by block: the result's rows
	// are the sources' blocks, so they dequantize to the sources' values.
	for _, qt := range []ops.Type{ops.Q8_0, ops.Q4_1, ops.Q5_K} {
		bs := int64(qt.BlockSize())
		qa := ops.FromF32(qt, []int64{2 * bs, 3}, opstest.RandVals(41, int(6*bs), -1, 1))
		qb := ops.FromF32(qt, []int64{bs, 3}, opstest.RandVals(42, int(3*bs), -1, 1))
		y := mustOp(t, ops.OpConcat, []*ops.Tensor{qa, qb}, map[string]any{"dim": 0})
		if y.Ne != [ops.MaxDims]int64{3 * bs, 3, 1, 1} {
			t.Fatalf("%s: shape %s", qt, y.ShapeString())
		}
		for r := int64(0); r < 3; r++ {
			want := string(qa.RowBytes(r, 0, 0)) + string(qb.RowBytes(r, 0, 0))
			if string(y.RowBytes(r, 0, 0)) != want {
				t.Errorf("%s dim 0: row %d is not a's blocks then b's", qt, r)
			}
		}
		y = mustOp(t, ops.OpConcat, []*ops.Tensor{qa, qa}, map[string]any{"dim": 1})
		for r := int64(0); r < 6; r++ {
			if string(y.RowBytes(r, 0, 0)) != string(qa.RowBytes(r%3, 0, 0)) {
				t.Errorf("%s dim 1: row %d differs from a's row %d", qt, r, r%3)
			}
		}
	}
	// Quantized: blocks are copied as they are, in dim 0 and in dim 1.
	qa := ops.FromF32(ops.Q8_0, []int64{64, 2}, opstest.RandVals(31, 128, -1, 1))
	qb := ops.FromF32(ops.Q8_0, []int64{32, 2}, opstest.RandVals(32, 64, -1, 1))
	y0 := mustOp(t, ops.OpConcat, []*ops.Tensor{qa, qb}, map[string]any{"dim": 0})
	for r := 0; r < 2; r++ {
		row := y0.Buf[r*102 : (r+1)*102] // 3 blocks of 34 bytes
		if !bytes.Equal(row[:68], qa.Buf[r*68:(r+1)*68]) || !bytes.Equal(row[68:], qb.Buf[r*34:(r+1)*34]) {
			t.Fatalf("q8_0 concat dim 0: row %d differs", r)
		}
	}
	qc := ops.FromF32(ops.Q8_0, []int64{64, 1}, opstest.RandVals(33, 64, -1, 1))
	y1 := mustOp(t, ops.OpConcat, []*ops.Tensor{qa, qc}, map[string]any{"dim": 1})
	if !bytes.Equal(y1.Buf[:136], qa.Buf) || !bytes.Equal(y1.Buf[136:], qc.Buf) {
		t.Fatalf("q8_0 concat dim 1 differs")
	}
	wantOpError(t, ops.OpConcat, []*ops.Tensor{ops.New(ops.Q8_0, 32), ops.New(ops.Q4_0, 32)}, nil, "b is q4_0, want a's type q8_0")
}
