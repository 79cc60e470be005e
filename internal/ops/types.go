package ops

import (
	"fmt"
)

// Type is a tensor element type. Its values are et's own; the ggml enum
// values (which change between ggml versions) live in the ABI manifest
// (package ops/abi).
type Type uint8

// The element types: every type of ggml's enum ggml_type (ggml d99724f2).
// The first seven keep their historical values; the rest follow in the
// order of the ggml enum.
const (
	F32 Type = iota
	F16
	Q4_0
	Q8_0
	Q4_K
	I32
	I64
	Q4_1
	Q5_0
	Q5_1
	Q8_1
	Q2_K
	Q3_K
	Q5_K
	Q6_K
	Q8_K
	IQ2_XXS
	IQ2_XS
	IQ3_XXS
	IQ1_S
	IQ4_NL
	IQ3_S
	IQ2_S
	IQ4_XS
	I8
	I16
	F64
	IQ1_M
	BF16
	TQ1_0
	TQ2_0
	MXFP4
	NVFP4
	Q1_0
	Q2_0
	numTypes
)

type typeTraits struct {
	name      string
	blockSize int // elements per block (ggml_blck_size)
	typeSize  int // bytes per block (ggml_type_size, nb[0] of a contiguous tensor)
	quantized bool
	codec     bool // et has a host quantizer and dequantizer (or converter)
}

// traits are ggml-base's type_traits (src/ggml.c): type_name, blck_size,
// type_size and is_quantized, as libggml-base d99724f2 reports them.
var traits = [numTypes]typeTraits{
	F32:     {"f32", 1, 4, false, true},
	F16:     {"f16", 1, 2, false, true},
	Q4_0:    {"q4_0", 32, 18, true, true},
	Q8_0:    {"q8_0", 32, 34, true, true},
	Q4_K:    {"q4_K", 256, 144, true, true},
	I32:     {"i32", 1, 4, false, true},
	I64:     {"i64", 1, 8, false, true},
	Q4_1:    {"q4_1", 32, 20, true, true},
	Q5_0:    {"q5_0", 32, 22, true, true},
	Q5_1:    {"q5_1", 32, 24, true, true},
	Q8_1:    {"q8_1", 32, 36, true, false},
	Q2_K:    {"q2_K", 256, 84, true, true},
	Q3_K:    {"q3_K", 256, 110, true, true},
	Q5_K:    {"q5_K", 256, 176, true, true},
	Q6_K:    {"q6_K", 256, 210, true, true},
	Q8_K:    {"q8_K", 256, 292, true, false},
	IQ2_XXS: {"iq2_xxs", 256, 66, true, false},
	IQ2_XS:  {"iq2_xs", 256, 74, true, false},
	IQ3_XXS: {"iq3_xxs", 256, 98, true, false},
	IQ1_S:   {"iq1_s", 256, 50, true, false},
	IQ4_NL:  {"iq4_nl", 32, 18, true, true},
	IQ3_S:   {"iq3_s", 256, 110, true, false},
	IQ2_S:   {"iq2_s", 256, 82, true, false},
	IQ4_XS:  {"iq4_xs", 256, 136, true, true},
	I8:      {"i8", 1, 1, false, true},
	I16:     {"i16", 1, 2, false, true},
	F64:     {"f64", 1, 8, false, true},
	IQ1_M:   {"iq1_m", 256, 56, true, false},
	BF16:    {"bf16", 1, 2, false, true},
	TQ1_0:   {"tq1_0", 256, 54, true, true},
	TQ2_0:   {"tq2_0", 256, 66, true, true},
	MXFP4:   {"mxfp4", 32, 17, true, true},
	NVFP4:   {"nvfp4", 64, 36, true, true},
	Q1_0:    {"q1_0", 128, 18, true, true},
	Q2_0:    {"q2_0", 64, 18, true, true},
}

// Types lists every type, in et's order.
var Types = func() []Type {
	ts := make([]Type, numTypes)
	for i := range ts {
		ts[i] = Type(i)
	}
	return ts
}()

func (t Type) valid() bool { return t < numTypes }

// String is the type's name as ggml prints it (ggml_type_name: f32, q8_0,
// q4_K, iq2_xxs).
func (t Type) String() string {
	if !t.valid() {
		return fmt.Sprintf("type(%d)", uint8(t))
	}
	return traits[t].name
}

// BlockSize is the number of elements in one block (1 for plain types).
func (t Type) BlockSize() int { return traits[t].blockSize }

// TypeSize is the size in bytes of one block (ggml_type_size).
func (t Type) TypeSize() int { return traits[t].typeSize }

// Quantized reports whether the type is block-quantized (ggml_is_quantized).
func (t Type) Quantized() bool { return traits[t].quantized }

// Integer reports whether the type is a plain integer type (i8, i16, i32,
// i64): elements convert to and from float32 as a C cast does.
func (t Type) Integer() bool { return t == I8 || t == I16 || t == I32 || t == I64 }

// HasCodec reports whether et can convert the type to and from float32 on
// the host (QuantizeRow, DequantizeRow, Tensor.F32, Row, SetRow). For a
// type without one, Quantize and Dequantize return a *NoHostMathError and
// reference ops refuse tensors of it with that error.
func (t Type) HasCodec() bool { return t.valid() && traits[t].codec }

// CodecError is nil if t has a host codec, else a *NoHostMathError
// naming the type ("type iq2_xxs").
func CodecError(t Type) error {
	if t.HasCodec() {
		return nil
	}
	return &NoHostMathError{What: "type " + t.String()}
}

// RowSize is the size in bytes of n elements (n must be a multiple of the
// block size).
func (t Type) RowSize(n int64) uint64 {
	return uint64(n/int64(traits[t].blockSize)) * uint64(traits[t].typeSize)
}

// ParseType accepts a type name as ggml prints it, in any case (f32, F16,
// q8_0, Q4_K, bf16, iq2_xxs, mxfp4).
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if equalFold(traits[t].name, s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want a ggml type name such as f32, f16, bf16, i32, q8_0 or q4_K)", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// CodecsOf is the *NoHostMathError of the first of the destination type
// and the source types that has no host codec (ops read and write
// elements through it), or nil.
func CodecsOf(dst Type, srcs []*Tensor) error {
	if err := CodecError(dst); err != nil {
		return err
	}
	for _, s := range srcs {
		if err := CodecError(s.Type); err != nil {
			return err
		}
	}
	return nil
}
