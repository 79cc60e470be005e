package ops

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/opstest"
)

// The golden files come from ggml's own ggml-quants.c (testdata/quantgen).
const (
	goldenRows = 26
	goldenCols = 256
)

var goldenTypes = []Type{BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q1_0, Q2_0, TQ1_0, TQ2_0, MXFP4, NVFP4, IQ4_NL, IQ4_XS}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "quant", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goldenF32(t *testing.T, name string) []float32 {
	return opstest.ReadF32File(t, filepath.Join("testdata", "quant", name))
}

func TestCodecsMatchGGML(t *testing.T) {
	covered := map[Type]bool{}
	for _, typ := range goldenTypes {
		covered[typ] = true
	}
	for _, typ := range Types {
		if typ.HasCodec() && (typ.Quantized() || typ == BF16) && !covered[typ] {
			t.Errorf("%s has a codec but no golden files (add it to testdata/quantgen/gen.c)", typ)
		}
	}
	x := goldenF32(t, "inputs.f32")
	if len(x) != goldenRows*goldenCols {
		t.Fatalf("inputs.f32 has %d values", len(x))
	}
	for _, typ := range goldenTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rb := int(typ.RowSize(goldenCols))
			wantQ := readGolden(t, typ.String()+".q")
			if len(wantQ) != goldenRows*rb {
				t.Fatalf("%s.q has %d bytes, want %d", typ, len(wantQ), goldenRows*rb)
			}
			got := make([]byte, rb)
			bad := 0
			for r := 0; r < goldenRows; r++ {
				QuantizeRow(typ, x[r*goldenCols:(r+1)*goldenCols], got)
				want := wantQ[r*rb : (r+1)*rb]
				for i := range got {
					if undefinedByte(typ, x[r*goldenCols:(r+1)*goldenCols], i) {
						continue
					}
					if got[i] != want[i] {
						if bad < 5 {
							blk := i / typ.TypeSize()
							t.Errorf("row %d: quantized byte %d (block %d, offset %d) = %#02x, ggml %#02x", r, i, blk, i%typ.TypeSize(), got[i], want[i])
						}
						bad++
						break
					}
				}
			}
			checkDequant(t, typ, wantQ, goldenF32(t, typ.String()+".deq"), "")
			if typ == IQ4_NL { // the quants et writes for all-tiny blocks: ±0 as well
				checkDequantValues(t, typ, x, goldenF32(t, typ.String()+".deq"))
			}
			checkDequant(t, typ, readGolden(t, typ.String()+".rnd"), goldenF32(t, typ.String()+".rnd.deq"), "random block ")
		})
	}
}

// undefinedByte reports whether byte i of a quantized row of x is one
// ggml leaves uninitialised: the quants of an iq4_nl block whose values
// are all below GROUP_MAX_EPS (its scale is 0).
func undefinedByte(typ Type, x []float32, i int) bool {
	if typ != IQ4_NL || i%codec.SizeIQ4_NL < 2 {
		return false
	}
	b := i / codec.SizeIQ4_NL
	for _, v := range x[32*b : 32*b+32] {
		if codec.Abs32(v) >= codec.GroupMaxEps {
			return false
		}
	}
	return true
}

// checkDequantValues quantizes x with et and dequantizes it: every value
// must equal (==, so ±0 alike) ggml's dequantized golden.
func checkDequantValues(t *testing.T, typ Type, x, want []float32) {
	t.Helper()
	q := make([]byte, typ.RowSize(int64(len(x))))
	QuantizeRow(typ, x, q)
	got := make([]float32, len(x))
	DequantizeRow(typ, q, got)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("value %d: et round trip %g, ggml %g", i, got[i], want[i])
		}
	}
}

func checkDequant(t *testing.T, typ Type, q []byte, want []float32, what string) {
	t.Helper()
	n := len(q) / typ.TypeSize() * typ.BlockSize()
	if n != len(want) {
		t.Fatalf("%s%d bytes hold %d values, golden has %d", what, len(q), n, len(want))
	}
	got := make([]float32, n)
	DequantizeRow(typ, q, got)
	bad := 0
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad < 5 {
				t.Errorf("%svalue %d (block %d) = %g (%#08x), ggml %g (%#08x)", what, i, i/typ.BlockSize(), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s%d of %d dequantized values differ", what, bad, n)
	}
}

// codecBits is the number of bits per quant of each block format (for
// bf16, the mantissa bits kept).
var codecBits = map[Type]int{IQ4_NL: 4, IQ4_XS: 4, Q4_0: 4, Q4_1: 4, Q5_0: 5, Q5_1: 5, Q8_0: 8, Q2_K: 2, Q3_K: 3, Q4_K: 4, Q5_K: 5, Q6_K: 6}

// roundTripBound is the relative RMS error bound of the formats whose
// levels are not an evenly spaced b-bit range: one sign bit times the mean
// |x| (q1_0), or three levels -d, 0, d with d = max |x| (q2_0 keeps a
// fourth, 2d, that uniform data never reaches; tq1_0, tq2_0): for x
// uniform in [-1, 1] both leave an error uniform over a width of 1, RMS
// 1/√12 against rms(x) = 1/√3, so 0.5. mxfp4's power-of-two scale puts
// the largest e2m1 value 6 at 2^floor(log2 max)·1.5, 0.75 for data in
// [-1, 1): magnitudes 0..0.25, 0.25..0.5 and 0.5..0.75 in steps of 1/16,
// 1/8 and 1/4, and 0.75..1 clipped to 0.75, an RMS error of 0.083, 0.144
// of rms(x); nvfp4's e4m3 scale fits max |x| to 6 and does better.
var roundTripBound = map[Type]float64{Q1_0: 0.55, Q2_0: 0.55, TQ1_0: 0.55, TQ2_0: 0.55, MXFP4: 0.16, NVFP4: 0.16}

// A round trip through a b-bit format whose scale spans the data has an
// RMS error of about one step / √12, which for data uniform in [-1, 1]
// is rms(x) / (2^b - 1); bf16 keeps 8 significant bits (relative error
// ≤ half an ulp, 2^-8, per value).
func TestCodecRoundTripError(t *testing.T) {
	const n = 64 * codec.QKK
	x := make([]float32, n)
	s := uint64(12345)
	for i := range x {
		s = s*6364136223846793005 + 1442695040888963407
		x[i] = float32(int64(s>>40)-(1<<23)) / (1 << 23)
	}
	for _, typ := range goldenTypes {
		q := make([]byte, typ.RowSize(n))
		y := make([]float32, n)
		QuantizeRow(typ, x, q)
		DequantizeRow(typ, q, y)
		var se, sx, maxRel float64
		for i := range x {
			e := float64(y[i]) - float64(x[i])
			se += e * e
			sx += float64(x[i]) * float64(x[i])
			if x[i] != 0 {
				maxRel = math.Max(maxRel, math.Abs(e/float64(x[i])))
			}
		}
		rel := math.Sqrt(se / sx)
		if typ == BF16 {
			if maxRel > 1.0/256 {
				t.Errorf("bf16: max relative error %g > 2^-8", maxRel)
			}
			continue
		}
		bound, ok := roundTripBound[typ]
		if !ok {
			bound = 1.1 / float64(int(1)<<codecBits[typ]-1)
		}
		if rel > bound || rel == 0 {
			t.Errorf("%s: relative RMS error %.4g, want in (0, %.4g]", typ, rel, bound)
		}
	}
}

// bf16 rounding, infinities and NaNs, against hand-computed bit patterns.
func TestBF16Specials(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above half
		{0x7f7fffff, 0x7f80}, // max float rounds to inf
		{0xff800000, 0xff80}, // -inf
		{0x00000001, 0x0000}, // smallest subnormal rounds to 0
		{0x80000000, 0x8000}, // -0
		{0x7fc00000, 0x7fc0}, // quiet NaN
		{0x7f800001, 0x7fc0}, // signalling NaN, payload in low bits: quieted
		{0xffa12345, 0xffe1}, // negative NaN keeps its high payload
	} {
		if got := codec.F32ToBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if got := math.Float32bits(codec.BF16ToF32(0xc0a0)); got != 0xc0a00000 {
		t.Errorf("BF16ToF32(0xc0a0) = %#08x", got)
	}
}

// FuzzCodecs feeds arbitrary bytes to a dequantizer (as blocks) and, read
// as float32 bits (NaN, inf, subnormals), to its quantizer: no panic. The
// first byte picks the type (one per exec; coverage leads the fuzzer to
// every type). (FuzzQuantizeRow checks that finite rows come back finite;
// TestCodecsMatchGGML dequantizes whole random blocks.)
func FuzzCodecs(f *testing.F) {
	var types []Type
	for _, typ := range Types {
		if typ.HasCodec() {
			types = append(types, typ)
		}
	}
	// Small seeds: the fuzzer's minimiser is quadratic in input size.
	for i := range types {
		f.Add([]byte{byte(i), 0x00, 0x3c, 0xff, 0x7b, 1, 2, 3, 4})
		f.Add([]byte{byte(i), 0xff, 0xff, 0x80, 0x7f, 0x01, 0x00, 0x80, 0xff, 0x00, 0x7c, 0x00, 0xfc, 0x01, 0x7c, 0x33, 0x55, 0xaa})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 2048 {
			return
		}
		typ := types[int(data[0])%len(types)]
		data = data[1:]
		ts, bs := typ.TypeSize(), typ.BlockSize()
		nb := len(data) / ts
		out := make([]float32, nb*bs)
		DequantizeRow(typ, data[:nb*ts], out)

		nv := len(data) / 4 / bs * bs
		in := make([]float32, nv)
		for i := range in {
			in[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		q := make([]byte, typ.RowSize(int64(nv)))
		QuantizeRow(typ, in, q)
	})
}
