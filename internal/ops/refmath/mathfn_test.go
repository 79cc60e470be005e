package refmath

import (
	"errors"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// f64Map applies f in float64 to every value.
func f64Map(xs []float32, f func(float64) float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(f(float64(x)))
	}
	return out
}

func TestHostElementwise(t *testing.T) {
	ne := []int64{7, 3, 2}
	n := 7 * 3 * 2
	cases := []struct {
		op     ops.Op
		lo, hi float32
		f      func(float64) float64
		raw    map[string]any
	}{
		{ops.OpSqrt, 0, 100, math.Sqrt, nil},
		{ops.OpLog, 0.01, 10, math.Log, nil},
		{ops.OpSin, -6.5, 6.5, math.Sin, nil},
		{ops.OpCos, -6.5, 6.5, math.Cos, nil},
		{ops.OpLeakyRelu, -3, 3, func(x float64) float64 {
			if x < 0 {
				return 0.25 * x
			}
			return x
		}, map[string]any{"negative_slope": 0.25}},
	}
	for _, c := range cases {
		t.Run(string(c.op), func(t *testing.T) {
			xs := opstest.RandVals(int64(len(c.op)), n, c.lo, c.hi)
			x := ops.FromF32(ops.F32, ne, xs)
			want := f64Map(xs, c.f)
			// float32 math against float64 rounded once: a few ulps.
			opstest.CheckClose(t, mustOp(t, c.op, []*ops.Tensor{x}, c.raw).ToF32(), want, 1e-6)
			opstest.CheckClose(t, mustOp(t, c.op, []*ops.Tensor{reftest.PermutedCopy(t, x)}, c.raw).ToF32(), want, 1e-6)
			// f16: the f16 input widened, the function, the result rounded
			// to f16.
			h := ops.FromF32(ops.F16, ne, xs)
			hw := f64Map(h.ToF32(), c.f)
			for i := range hw {
				hw[i] = ops.RoundF16(hw[i])
			}
			y := mustOp(t, c.op, []*ops.Tensor{h}, c.raw)
			if y.Type != ops.F16 {
				t.Fatalf("f16 input gave %s", y.Type)
			}
			opstest.CheckClose(t, y.ToF32(), hw, 1e-3)
		})
	}
}

func TestHostDiv(t *testing.T) {
	av := opstest.RandVals(1, 4*3*2, -2, 2)
	bv := opstest.RandVals(2, 4*1*2, 0.5, 3)
	a := ops.FromF32(ops.F32, []int64{4, 3, 2}, av)
	b := ops.FromF32(ops.F32, []int64{4, 1, 2}, bv)
	want := make([]float32, len(av))
	for i3 := 0; i3 < 2; i3++ {
		for i1 := 0; i1 < 3; i1++ {
			for i0 := 0; i0 < 4; i0++ {
				want[i3*12+i1*4+i0] = float32(float64(av[i3*12+i1*4+i0]) / float64(bv[i3*4+i0]))
			}
		}
	}
	opstest.CheckClose(t, mustOp(t, ops.OpDiv, []*ops.Tensor{a, b}, nil).ToF32(), want, 1e-7)
}

func TestHostXielu(t *testing.T) {
	// The stored params of ggml_xielu(x, 4, 20, 0.5, 1e-7), computed here
	// in float64: alpha_n = beta + log(1 + e^4), alpha_p = log(1 + e^20).
	an := 0.5 + math.Log1p(math.Exp(4))
	ap := math.Log1p(math.Exp(20))
	if got := ops.XieluOpParams(4, 20, 0.5, 1e-7); math.Abs(float64(got[0])-an) > 1e-6 || math.Abs(float64(got[1])-ap) > 1e-5 {
		t.Fatalf("XieluOpParams = %v, want %g, %g", got, an, ap)
	}
	xs := opstest.RandVals(3, 60, -2, 2)
	want := f64Map(xs, func(x float64) float64 {
		if x > 0 {
			return ap*x*x + 0.5*x
		}
		return (math.Expm1(math.Min(x, 1e-7))-x)*an + 0.5*x
	})
	opstest.CheckClose(t, mustOp(t, ops.OpXielu, []*ops.Tensor{ops.FromF32(ops.F32, []int64{60}, xs)}, nil).ToF32(), want, 1e-5)
}

func TestHostSiluBack(t *testing.T) {
	dy := opstest.RandVals(4, 40, -1, 1)
	xs := opstest.RandVals(5, 40, -6, 6)
	want := make([]float32, 40)
	for i := range want {
		x := float64(xs[i])
		s := 1 / (1 + math.Exp(-x))
		want[i] = float32(float64(dy[i]) * s * (1 + x*(1-s)))
	}
	got := mustOp(t, ops.OpSiluBack, []*ops.Tensor{ops.FromF32(ops.F32, []int64{8, 5}, dy), ops.FromF32(ops.F32, []int64{8, 5}, xs)}, nil)
	opstest.CheckClose(t, got.ToF32(), want, 1e-5)
}

func TestHostDup(t *testing.T) {
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.I32} {
		vals := make([]float32, 24)
		for i := range vals {
			vals[i] = float32(i*3 - 20)
		}
		x := ops.FromF32(typ, []int64{4, 3, 2}, vals)
		got := mustOp(t, ops.OpDup, []*ops.Tensor{reftest.PermutedCopy(t, x)}, nil)
		if got.Type != typ {
			t.Fatalf("%s: dup gave %s", typ, got.Type)
		}
		opstest.CheckClose(t, got.ToF32(), vals, 0)
	}
}

// TestHostNoMath: an op without reference math (no refTable entry) still infers
// its shape, and running it says NoHostMathError. Every op has host math
// today, so the test takes lightning_indexer's away.
func TestHostNoMath(t *testing.T) {
	srcs := []*ops.Tensor{ops.New(ops.F32, 8, 2, 3, 1), ops.New(ops.F16, 8, 1, 5, 1), ops.New(ops.F32, 2, 3, 1, 1), ops.New(ops.F16, 5, 3, 1, 1)}
	info, _ := ops.Lookup(string(ops.OpLightningIndexer))
	e := refTable[ops.OpLightningIndexer]
	delete(refTable, ops.OpLightningIndexer)
	defer func() { refTable[ops.OpLightningIndexer] = e }()
	p, err := info.Normalize(nil)
	if err != nil {
		t.Fatal(err)
	}
	typ, ne, err := info.Shape(srcs, p)
	if err != nil || typ != ops.F32 || ne != [ops.MaxDims]int64{5, 3, 1, 1} {
		t.Fatalf("lightning_indexer shape = %s %v, %v; want f32 [5 3 1 1]", typ, ne, err)
	}
	_, err = Compute(info, srcs, p)
	var nm *ops.NoHostMathError
	if !errors.As(err, &nm) || nm.What != "op LIGHTNING_INDEXER" {
		t.Fatalf("Compute: %v, want NoHostMathError for op LIGHTNING_INDEXER", err)
	}
	dst := ops.New(ops.F32, 5, 3, 1, 1)
	if err := Run(info, dst, srcs, p); !errors.As(err, &nm) {
		t.Fatalf("Run: %v, want NoHostMathError", err)
	}
}
