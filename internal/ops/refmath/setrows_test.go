package refmath

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestSetRows(t *testing.T) {
	base := ops.FromF32(ops.F32, []int64{2, 4}, []float32{0, 0, 1, 1, 2, 2, 3, 3})
	src := ops.FromF32(ops.F32, []int64{2, 2}, []float32{10, 11, 20, 21})
	for _, it := range []ops.Type{ops.I64, ops.I32} {
		t.Run("f32 dst "+it.String()+" idx", func(t *testing.T) {
			idx := ops.FromInts(it, []int64{2}, []int64{3, 1})
			y := mustOp(t, ops.OpSetRows, []*ops.Tensor{base, src, idx}, nil)
			opstest.CheckClose(t, y.ToF32(), []float32{0, 0, 20, 21, 2, 2, 10, 11}, 0)
			opstest.CheckClose(t, base.ToF32(), []float32{0, 0, 1, 1, 2, 2, 3, 3}, 0) // the input is not modified
		})
	}
	t.Run("f16 dst", func(t *testing.T) {
		d := ops.FromF32(ops.F16, []int64{2, 3}, []float32{1, 1, 2, 2, 3, 3})
		y := mustOp(t, ops.OpSetRows, []*ops.Tensor{d, ops.FromF32(ops.F32, []int64{2, 1}, []float32{1.0 / 3, -1}), ops.FromInts(ops.I64, []int64{1}, []int64{0})}, nil)
		if y.Type != ops.F16 {
			t.Fatalf("type %s", y.Type)
		}
		opstest.CheckClose(t, y.ToF32(), []float32{ops.RoundF16(1.0 / 3), -1, 2, 2, 3, 3}, 0)
	})
	t.Run("f16 src", func(t *testing.T) {
		// f16 rows into f16 are copied as they are, into f32 widened.
		hv := []float32{1.0 / 3, -2.5, 7, 0.1}
		hs := ops.FromF32(ops.F16, []int64{2, 2}, hv)
		want := []float32{ops.RoundF16(hv[2]), ops.RoundF16(hv[3]), 1, 1, 2, 2, ops.RoundF16(hv[0]), ops.RoundF16(hv[1])}
		idx := ops.FromInts(ops.I32, []int64{2}, []int64{3, 0})
		opstest.CheckClose(t, mustOp(t, ops.OpSetRows, []*ops.Tensor{base, hs, idx}, nil).ToF32(), want, 0)
		d16 := ops.FromF32(ops.F16, []int64{2, 4}, base.ToF32())
		y := mustOp(t, ops.OpSetRows, []*ops.Tensor{d16, hs, idx}, nil)
		if !bytes.Equal(y.Buf[12:16], hs.Buf[0:4]) || !bytes.Equal(y.Buf[0:4], hs.Buf[4:8]) {
			t.Fatalf("f16 rows are not copied bit for bit")
		}
	})
	t.Run("q8_0 dst", func(t *testing.T) {
		d := ops.FromF32(ops.Q8_0, []int64{32, 2}, make([]float32, 64))
		v := opstest.RandVals(41, 32, -1, 1)
		y := mustOp(t, ops.OpSetRows, []*ops.Tensor{d, ops.FromF32(ops.F32, []int64{32}, v), ops.FromInts(ops.I64, []int64{1}, []int64{1})}, nil)
		if want := ops.FromF32(ops.Q8_0, []int64{32}, v); !bytes.Equal(y.Buf[34:], want.Buf) || !bytes.Equal(y.Buf[:34], d.Buf[:34]) {
			t.Fatalf("q8_0 rows differ")
		}
	})
	t.Run("idx broadcast over ne2", func(t *testing.T) {
		// dst [1, 3, 2], src [1, 1, 2], idx [1, 1]: both batches use idx 2.
		d := ops.New(ops.F32, 1, 3, 2)
		s := ops.FromF32(ops.F32, []int64{1, 1, 2}, []float32{7, 8})
		y := mustOp(t, ops.OpSetRows, []*ops.Tensor{d, s, ops.FromInts(ops.I64, []int64{1, 1}, []int64{2})}, nil)
		opstest.CheckClose(t, y.ToF32(), []float32{0, 0, 7, 0, 0, 8}, 0)
		// Into f16 (the dense f16 path, (j, k) past the first) with an
		// index per batch: idx [1, 2] names row 2, then row 0.
		for _, d := range []*ops.Tensor{d, ops.New(ops.F16, 1, 3, 2)} {
			y = mustOp(t, ops.OpSetRows, []*ops.Tensor{d, s, ops.FromInts(ops.I32, []int64{1, 2}, []int64{2, 0})}, nil)
			opstest.CheckClose(t, y.ToF32(), []float32{0, 0, 7, 8, 0, 0}, 0)
		}
	})
	t.Run("in place", func(t *testing.T) {
		d := ops.FromF32(ops.F32, []int64{2, 2}, []float32{1, 2, 3, 4})
		info, _ := ops.Lookup("set_rows")
		if err := Run(info, d, []*ops.Tensor{d, ops.FromF32(ops.F32, []int64{2}, []float32{9, 9}), ops.FromInts(ops.I64, []int64{1}, []int64{0})}, ops.Params{}); err != nil {
			t.Fatal(err)
		}
		opstest.CheckClose(t, d.ToF32(), []float32{9, 9, 3, 4}, 0)
	})
	t.Run("strided src", func(t *testing.T) {
		s := ops.FromF32(ops.F32, []int64{2, 2}, []float32{10, 11, 20, 21})
		y := mustOp(t, ops.OpSetRows, []*ops.Tensor{base, reftest.PermutedCopy(t, s), ops.FromInts(ops.I64, []int64{2}, []int64{0, 2})}, nil)
		opstest.CheckClose(t, y.ToF32(), []float32{10, 11, 1, 1, 20, 21, 3, 3}, 0)
	})
	wantOpError(t, ops.OpSetRows, []*ops.Tensor{base, src, ops.FromInts(ops.I64, []int64{2}, []int64{0, 4})}, nil, "set_rows: idx[1, 0, 0] = 4 is outside dst rows 0..3")
	wantOpError(t, ops.OpSetRows, []*ops.Tensor{base, src, ops.New(ops.I64, 3)}, nil, "src.ne1 = 2 != idx.ne0 = 3")
	wantOpError(t, ops.OpSetRows, []*ops.Tensor{base, ops.New(ops.F32, 3, 2), ops.New(ops.I64, 2)}, nil, "src.ne0 = 3 != dst.ne0 = 2")
	wantOpError(t, ops.OpSetRows, []*ops.Tensor{base, ops.New(ops.I32, 2, 2), ops.New(ops.I64, 2)}, nil, "src is i32, want f32 or f16")
	wantOpError(t, ops.OpSetRows, []*ops.Tensor{base, src, ops.New(ops.F32, 2)}, nil, "idx is f32, want i64 or i32")
	wantOpError(t, ops.OpSetRows, []*ops.Tensor{ops.New(ops.F32, 2, 4, 3), ops.New(ops.F32, 2, 2, 3), ops.New(ops.I64, 2, 2)}, nil, "cannot be broadcast")
}

// TestSetRowsF16Split covers the rows converted on several goroutines
// (setRowsSplit values or more, each row named once; distinctRows by its
// bitmap and by sorting): each destination row is its source row rounded
// value by value, the others are untouched, and a row named twice keeps
// the later source row.
func TestSetRowsF16Split(t *testing.T) {
	const ne0, rows = 512, 40
	if ne0*rows < setRowsSplit {
		t.Fatalf("%d values do not reach the split at %d", ne0*rows, setRowsSplit)
	}
	for _, dstRows := range []int{64, 8192} {
		v := opstest.RandVals(7, ne0*rows, -70000, 70000) // some overflow to ±Inf
		d := ops.FromF32(ops.F16, []int64{ne0, int64(dstRows)}, opstest.RandVals(8, ne0*dstRows, -1, 1))
		idx := make([]int64, rows)
		for i := range idx {
			idx[i] = int64(i*37) % int64(dstRows)
		}
		y := mustOp(t, ops.OpSetRows, []*ops.Tensor{d, ops.FromF32(ops.F32, []int64{ne0, rows}, v), ops.FromInts(ops.I32, []int64{rows}, idx)}, nil)
		want := append([]byte(nil), d.Buf...)
		for i, r := range idx {
			for j := 0; j < ne0; j++ {
				h := ops.F32ToF16(v[i*ne0+j])
				o := 2 * (int(r)*ne0 + j)
				want[o], want[o+1] = byte(h), byte(h>>8)
			}
		}
		if !bytes.Equal(y.Buf, want) {
			t.Fatalf("%d dst rows: f16 rows converted in parallel differ from F32ToF16 value by value", dstRows)
		}
		ti := ops.FromInts(ops.I32, []int64{rows}, idx)
		if !distinctRows(ti, rows, int64(dstRows)) {
			t.Fatalf("%d dst rows: distinctRows sees a duplicate in %v", dstRows, idx)
		}
		idx[rows-1] = idx[0]
		if distinctRows(ops.FromInts(ops.I32, []int64{rows}, idx), rows, int64(dstRows)) {
			t.Fatalf("%d dst rows: distinctRows misses row %d named twice", dstRows, idx[0])
		}
		y = mustOp(t, ops.OpSetRows, []*ops.Tensor{d, ops.FromF32(ops.F32, []int64{ne0, rows}, v), ops.FromInts(ops.I32, []int64{rows}, idx)}, nil)
		for j := 0; j < ne0; j++ {
			o := 2 * (int(idx[0])*ne0 + j)
			if h := ops.F32ToF16(v[(rows-1)*ne0+j]); y.Buf[o] != byte(h) || y.Buf[o+1] != byte(h>>8) {
				t.Fatalf("%d dst rows: row %d named twice: element %d is not the later source row's", dstRows, idx[0], j)
			}
		}
	}
}

// TestBindSetRows checks set_rows' bound form (the reference device's
// replays of the KV-cache write) against F32ToF16 value by value, with
// every kernel set of this CPU (on an AVX-512 one the avx2 set too): rows
// of 1024 (one call of the AVX-512 conversion, or of F16C's without it),
// 1032 (F16C's), 40 and 3 values, i64 and i32 indices, a row named twice
// (the later wins), a NaN (in the first row only at the first call: the
// other rows then take the one-call path) and values out of the half
// range; the data read at each call (a second call after new src values
// and indices); an index outside dst failing as refSetRows does with
// nothing written; and the tensors it leaves to refSetRows (nil).
func TestBindSetRows(t *testing.T) {
	for _, set := range cpu.KernelSets {
		ks, err := Detect().Limit(set)
		if err != nil {
			continue // a set this CPU lacks
		}
		t.Run(set, func(t *testing.T) { testBindSetRows(t, &Kernels{ks}) })
	}
}

func testBindSetRows(t *testing.T, ks *Kernels) {
	for _, c := range []struct {
		ne0 int64
		idx []int64
		it  ops.Type
	}{
		{1024, []int64{5}, ops.I64},
		{1024, []int64{0, 9, 3, 7, 1, 2, 8}, ops.I64},
		{1024, []int64{4, 6, 4}, ops.I32},
		{1032, []int64{1, 8, 6, 0}, ops.I64},
		{40, []int64{2, 1}, ops.I64},
		{3, []int64{9, 0}, ops.I32},
		{setRowsSplit / 2, []int64{7, 2, 0}, ops.I64}, // past refSetRows' split: bound all the same
	} {
		const dstRows = 10
		n := int64(len(c.idx))
		d := ops.FromF32(ops.F16, []int64{c.ne0, dstRows}, opstest.RandVals(1, int(c.ne0*dstRows), -1, 1))
		s := ops.FromF32(ops.F32, []int64{c.ne0, n}, opstest.RandVals(2, int(c.ne0*n), -1, 1))
		idx := ops.FromInts(c.it, []int64{n}, c.idx)
		info, _ := ops.Lookup(string(ops.OpSetRows))
		fn := ks.Bind(info.Name)(d, []*ops.Tensor{d, s, idx}, nil)
		if fn == nil {
			t.Fatalf("ne0 %d, idx %v: no bound form for the dense in-place f16 write", c.ne0, c.idx)
		}
		for call, seed := range []int64{3, 4} {
			v := opstest.RandVals(seed, int(c.ne0*n), -70000, 70000)
			v[len(v)-1] = 3e-6 // a half subnormal
			if call == 0 {
				v[0] = math.Float32frombits(0xffd00000) // a NaN whose payload F16C keeps
			}
			copy(s.Buf, ops.FromF32(ops.F32, []int64{c.ne0, n}, v).Buf)
			if call == 1 { // new indices in the same tensor
				for i := range c.idx {
					c.idx[i] = (c.idx[i] + 1) % dstRows
				}
				copy(idx.Buf, ops.FromInts(c.it, []int64{n}, c.idx).Buf)
			}
			want := append([]byte(nil), d.Buf...)
			for i, r := range c.idx {
				for j := range c.ne0 {
					h := ops.F32ToF16(v[int64(i)*c.ne0+j])
					o := 2 * (r*c.ne0 + j)
					want[o], want[o+1] = byte(h), byte(h>>8)
				}
			}
			if err := fn(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Buf, want) {
				t.Fatalf("ne0 %d, idx %v, call %d: dst differs from F32ToF16 value by value", c.ne0, c.idx, call)
			}
		}
		before := append([]byte(nil), d.Buf...)
		copy(idx.Buf, ops.FromInts(c.it, []int64{n}, append(make([]int64, n-1), dstRows)).Buf)
		err := fn()
		if err == nil || err.Error() != fmt.Sprintf("set_rows: idx[%d, 0, 0] = %d is outside dst rows 0..%d", n-1, dstRows, dstRows-1) {
			t.Fatalf("ne0 %d: index %d outside dst: error %v", c.ne0, dstRows, err)
		}
		if !bytes.Equal(d.Buf, before) {
			t.Fatalf("ne0 %d: a failed call wrote dst", c.ne0)
		}
	}
	d := ops.New(ops.F16, 512, 64)
	idx := ops.FromInts(ops.I64, []int64{1}, []int64{0})
	for name, srcs := range map[string][]*ops.Tensor{
		"f32 dst":     {ops.New(ops.F32, 512, 64), ops.New(ops.F32, 512, 1), idx},
		"not dst":     {ops.New(ops.F16, 512, 64), ops.New(ops.F32, 512, 1), idx},
		"strided src": {d, reftest.PermutedCopy(t, ops.New(ops.F32, 512, 2)), ops.FromInts(ops.I64, []int64{2}, []int64{0, 1})},
		"batches":     {ops.New(ops.F16, 512, 64, 2), ops.New(ops.F32, 512, 1, 2), idx},
	} {
		dst := srcs[0]
		if name == "not dst" {
			dst = d
		}
		if host.Load().bindSetRows(dst, srcs, nil) != nil {
			t.Errorf("%s: a bound form, want nil (host.refSetRows)", name)
		}
	}
}
