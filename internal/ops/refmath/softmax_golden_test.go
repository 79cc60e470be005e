package refmath

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestSoftMaxMatchesGGML runs SOFT_MAX through the catalog on the cases of
// testdata/softmaxgen (rows of vector blocks only, blocks and a tail, a
// tail only; scale, an f32 mask with -Inf, ALiBi and sinks) and compares
// the results bit for bit with what ggml's CPU backend computed for them
// (testdata/softmax, from the prebuilt ../shared/ggml, the AVX-512 build;
// a native Zen 4 build writes the same bytes).
func TestSoftMaxMatchesGGML(t *testing.T) {
	cases := []struct {
		ne0, ne1, ne2  int64
		scale, maxBias float32
		sinks          bool
	}{
		{4096, 3, 2, 0.125, 0, false},
		{100, 4, 2, 0.5, 0, false},
		{8, 4, 1, 1, 0, false},
		{100, 2, 4, 0.25, 8, true},
	}
	want := opstest.ReadF32File(t, filepath.Join("testdata", "softmax", "softmax.f32"))
	s := opstest.GoldenLCG(12345)
	off := 0
	for _, c := range cases {
		x := make([]float32, c.ne0*c.ne1*c.ne2)
		for i := range x {
			x[i] = s.Next()
		}
		mask := make([]float32, c.ne0*c.ne1)
		for i := range mask {
			v := s.Next()
			mask[i] = v / 4
			if i%13 == 5 {
				mask[i] = float32(math.Inf(-1))
			}
		}
		srcs := []*ops.Tensor{ops.FromF32(ops.F32, []int64{c.ne0, c.ne1, c.ne2}, x), ops.FromF32(ops.F32, []int64{c.ne0, c.ne1}, mask)}
		if c.sinks {
			sk := make([]float32, c.ne2)
			for h := range sk {
				sk[h] = s.Next()
			}
			srcs = append(srcs, ops.FromF32(ops.F32, []int64{c.ne2}, sk))
		}
		got := mustOp(t, ops.OpSoftMax, srcs, map[string]any{"scale": c.scale, "max_bias": c.maxBias}).ToF32()
		if off+len(got) > len(want) {
			t.Fatalf("golden file has %d values, the cases need more", len(want))
		}
		bad := 0
		for i, g := range got {
			if w := want[off+i]; !opstest.SameBits(g, w) {
				if bad++; bad <= 5 {
					t.Errorf("[%d %d %d] value %d: et %g (%#08x), ggml %g (%#08x)", c.ne0, c.ne1, c.ne2, i, g,
						math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
		if bad > 0 {
			t.Fatalf("[%d %d %d]: %d of %d values differ from ggml's", c.ne0, c.ne1, c.ne2, bad, len(got))
		}
		off += len(got)
	}
	if off != len(want) {
		t.Fatalf("golden file has %d values, the cases %d", len(want), off)
	}
}
