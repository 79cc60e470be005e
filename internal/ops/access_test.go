package ops

import (
	"math"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/opstest"
)

func TestElementAccessTypes(t *testing.T) {
	tests := []struct {
		name string
		typ  Type
		in   float32
		want float32
	}{
		{"f32", F32, 1.25, 1.25},
		{"f16 rounds", F16, 0.1, 0.0999755859375},
		{"f16 overflow", F16, 70000, float32(math.Inf(1))},
		{"i32 truncates", I32, -2.75, -2},
		{"i64 truncates", I64, 3.9, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := New(tt.typ, 3, 2, 2, 2)
			x.SetF32(2, 1, 1, 1, tt.in)
			if got := x.F32(2, 1, 1, 1); got != tt.want {
				t.Errorf("F32 = %g, want %g", got, tt.want)
			}
			if got := x.F32(1, 1, 1, 1); got != 0 {
				t.Errorf("neighbour = %g, want 0", got)
			}
			last := x.ElemOffset(2, 1, 1, 1)
			if last+uint64(tt.typ.TypeSize()) != uint64(len(x.Buf)) {
				t.Errorf("last element at %d, buffer %d bytes", last, len(x.Buf))
			}
		})
	}
}

func TestIntAccess(t *testing.T) {
	for _, typ := range []Type{I32, I64} {
		t.Run(typ.String(), func(t *testing.T) {
			x := FromInts(typ, []int64{3, 2}, []int64{0, 1, -2, 3, 4, -5})
			if got := x.Int(2, 0, 0, 0); got != -2 {
				t.Errorf("Int(2,0) = %d, want -2", got)
			}
			if got := x.Int(2, 1, 0, 0); got != -5 {
				t.Errorf("Int(2,1) = %d, want -5", got)
			}
			x.SetInt(0, 1, 0, 0, 1<<40)
			want := int64(1 << 40)
			if typ == I32 {
				want = 0 // wraps as a C cast
			}
			if got := x.Int(0, 1, 0, 0); got != want {
				t.Errorf("after SetInt: %d, want %d", got, want)
			}
		})
	}
}

func TestFromF32ToF32RoundTrip(t *testing.T) {
	data := opstest.Seq(64*3*2, func(i int) float32 { return float32(i%17) - 8 })
	for _, typ := range []Type{F32, F16, I32, I64, Q8_0, Q4_0} {
		t.Run(typ.String(), func(t *testing.T) {
			x := FromF32(typ, []int64{64, 3, 2}, data)
			got := x.ToF32()
			// Small integers in [-8, 8] are exact in the plain types;
			// q8_0 loses a little to its f16 scale, q4_0 up to one step.
			for i := range data {
				tol := float32(0)
				switch typ {
				case Q8_0:
					tol = 0.04 // half a step of d = 8/127
				case Q4_0:
					tol = 1.01
				}
				if d := got[i] - data[i]; d > tol || d < -tol {
					t.Fatalf("element %d = %g, want %g", i, got[i], data[i])
				}
			}
		})
	}
}

func TestQuantizedRowAndSetF32(t *testing.T) {
	data := opstest.Seq(256*2, func(i int) float32 { return float32(math.Sin(float64(i))) })
	x := FromF32(Q4_K, []int64{256, 2}, data)
	row := make([]float32, 256)
	x.Row(1, 0, 0, row)
	ref := make([]float32, 256)
	DequantizeRow(Q4_K, x.Buf[144:288], ref)
	for i := range row {
		if row[i] != ref[i] {
			t.Fatalf("Row[%d] = %g, want %g", i, row[i], ref[i])
		}
		if got := x.F32(int64(i), 1, 0, 0); got != ref[i] {
			t.Fatalf("F32(%d,1) = %g, want %g", i, got, ref[i])
		}
	}
	y := FromF32(Q8_0, []int64{32}, opstest.Seq(32, func(i int) float32 { return float32(i) / 31 }))
	y.SetF32(5, 0, 0, 0, -1)
	if got := y.F32(5, 0, 0, 0); math.Abs(float64(got+1)) > 1e-3 {
		t.Errorf("q8_0 SetF32 then F32 = %g, want -1", got)
	}
}

func TestPermuteTransposeCont(t *testing.T) {
	// x[i0, i1, i2] = 100*i2 + 10*i1 + i0, ne = [4, 3, 2].
	x := FromF32(F32, []int64{4, 3, 2}, opstest.Seq(24, func(i int) float32 {
		return float32(100*(i/12) + 10*((i/4)%3) + i%4)
	}))
	p, err := Permute(x, 2, 0, 1, 3) // dim0 -> 2, dim1 -> 0, dim2 -> 1
	if err != nil {
		t.Fatal(err)
	}
	if p.Ne != [4]int64{3, 2, 4, 1} {
		t.Fatalf("permuted ne = %v", p.Ne)
	}
	if got := p.F32(1, 1, 3, 0); got != 113 { // i1=1, i2=1, i0=3
		t.Errorf("permuted element = %g, want 113", got)
	}
	c := Cont(p)
	if !c.IsContiguous() || c.Ne != p.Ne {
		t.Fatalf("cont not contiguous: ne %v nb %v", c.Ne, c.Nb)
	}
	if got, want := c.ToF32(), p.ToF32(); !opstest.EqualBits(got, want) {
		t.Errorf("cont data %v, want %v", got, want)
	}
	if c.ToF32()[1+3*1+6*3] != 113 {
		t.Errorf("cont layout wrong: %v", c.ToF32())
	}
	tr := Transpose(x)
	if tr.Ne != [4]int64{3, 4, 2, 1} || tr.F32(2, 1, 1, 0) != 121 {
		t.Errorf("transpose ne %v element %g", tr.Ne, tr.F32(2, 1, 1, 0))
	}
	if _, err := Permute(x, 0, 0, 1, 2); err == nil {
		t.Error("Permute with a repeated axis: no error")
	}
}

func TestViewAndReshape(t *testing.T) {
	x := FromF32(F32, []int64{4, 3, 2}, opstest.Seq(24, func(i int) float32 { return float32(i) }))
	// Column 1 of each row of plane 1: ne [1, 3], nb1 = 16, offset = plane 1 + 1 elem.
	v, err := View(x, []int64{1, 3}, []uint64{16}, 48+4)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.ToF32(); !opstest.EqualBits(got, []float32{13, 17, 21}) {
		t.Errorf("view = %v", got)
	}
	// 1-D view continues contiguously.
	v1, err := View(x, []int64{5}, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := v1.ToF32(); !opstest.EqualBits(got, []float32{2, 3, 4, 5, 6}) {
		t.Errorf("1-D view = %v", got)
	}
	r, err := Reshape(x, 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	if r.F32(1, 2, 0, 0) != 13 || r.Nb != [4]uint64{4, 24, 96, 96} {
		t.Errorf("reshape: element %g nb %v", r.F32(1, 2, 0, 0), r.Nb)
	}
	errs := []struct {
		name string
		err  error
		want string
	}{
		{"view out of bounds", second(View(x, []int64{4, 3, 2}, nil, 4)), "needs 100 bytes"},
		{"view too many strides", second(View(x, []int64{4}, []uint64{16}, 0)), "1 strides for 1 dims"},
		{"reshape count", second(Reshape(x, 5, 5)), "25 elements"},
		{"reshape non-contiguous", second(Reshape(Transpose(x), 24)), "not contiguous"},
		{"quant view block", second(View(New(Q8_0, 64), []int64{16}, nil, 0)), "block size"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", tt.err, tt.want)
			}
		})
	}
}

// TestViewOfShape checks views of a tensor without data (NewShape):
// their bounds are checked against the memory the data will have, and
// they carry that length on, as views of planned tensors must.
func TestViewOfShape(t *testing.T) {
	x := NewShape(F32, 4096, 4096, 1024) // 64 GiB, not allocated
	if x.Buf != nil || x.BufLen() != 64<<30 {
		t.Fatalf("NewShape: Buf %d bytes, BufLen %d, want no data and 64 GiB", len(x.Buf), x.BufLen())
	}
	v, err := View(x, []int64{4096, 4096}, nil, 1023*64<<20)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Reshape(v, 4096*4096)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Permute(x, 1, 0, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range []*Tensor{v, r, p} {
		if y.Buf != nil || y.BufLen() != x.BufLen() {
			t.Errorf("%s: Buf %d bytes, BufLen %d, want no data and the source's %d", y.Name, len(y.Buf), y.BufLen(), x.BufLen())
		}
	}
	if _, err := View(x, []int64{4096, 4096}, nil, 1023*64<<20+4); err == nil || !strings.Contains(err.Error(), "source buffer has 68719476736") {
		t.Errorf("view past the end: %v, want a bounds error", err)
	}
}

func TestQuantizedViewRows(t *testing.T) {
	data := opstest.Seq(64*4, func(i int) float32 { return float32(i%29)/7 - 2 })
	x := FromF32(Q8_0, []int64{64, 4}, data)
	tr := Transpose(x) // dims 0/1 swapped: ne [4, 64]; only meaningful via Cont of a re-transposed view
	back := Transpose(tr)
	if got, want := Cont(back).ToF32(), x.ToF32(); !opstest.EqualBits(got, want) {
		t.Error("double transpose of a q8_0 tensor changed its values")
	}
	v, err := View(x, []int64{32, 2}, []uint64{2 * x.Nb[1]}, 34)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float32, 32)
	v.Row(1, 0, 0, row)
	full := x.ToF32()
	if !opstest.EqualBits(row, full[2*64+32:3*64]) {
		t.Errorf("q8_0 view row = %v, want %v", row, full[2*64+32:3*64])
	}
}

func second[T any](_ T, err error) error { return err }

// Regression: strides not given continue from the last given one
// (ggml_view_2d sets nb2 = nb1*ne1 from the given nb1).
func TestViewStridesContinueFromGiven(t *testing.T) {
	x := New(F32, 64, 8)
	v, err := View(x, []int64{16, 2, 3}, []uint64{128}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Nb[1] != 128 || v.Nb[2] != 256 || v.Nb[3] != 768 {
		t.Errorf("nb = %v, want [4 128 256 768]", v.Nb)
	}
}

// Regression: with no strides given, nb1 accounts for the block size of a
// quantized type.
func TestViewQuantizedNoStrides(t *testing.T) {
	x := New(Q8_0, 64, 4)
	v, err := View(x, []int64{64, 2}, nil, uint64(x.Nb[1]))
	if err != nil {
		t.Fatal(err)
	}
	if v.Nb[1] != 68 || v.Nb[2] != 136 {
		t.Errorf("nb = %v, want nb1 68 (2 blocks of 34), nb2 136", v.Nb)
	}
}
