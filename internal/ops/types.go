package ops

import "fmt"

// Type is a tensor element type. Its values are et's own; the ggml enum
// values (which change between ggml versions) live in the ABI manifest
// (package ops/abi).
type Type uint8

// The element types et supports.
const (
	F32 Type = iota
	F16
	Q4_0
	Q8_0
	Q4_K
	I32
	I64
	numTypes
)

type typeTraits struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block (ggml_type_size, nb[0] of a contiguous tensor)
	quantized bool
}

var traits = [numTypes]typeTraits{
	F32:  {"f32", 1, 4, false},
	F16:  {"f16", 1, 2, false},
	Q4_0: {"q4_0", 32, 18, true},
	Q8_0: {"q8_0", 32, 34, true},
	Q4_K: {"q4_K", 256, 144, true},
	I32:  {"i32", 1, 4, false},
	I64:  {"i64", 1, 8, false},
}

// Types lists every supported type.
var Types = []Type{F32, F16, Q4_0, Q8_0, Q4_K, I32, I64}

func (t Type) valid() bool { return t < numTypes }

// String is the type's name as ggml prints it in lower case (f32, q8_0, q4_K).
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

// Quantized reports whether the type is block-quantized.
func (t Type) Quantized() bool { return traits[t].quantized }

// RowSize is the size in bytes of n elements (n must be a multiple of the
// block size).
func (t Type) RowSize(n int64) uint64 {
	return uint64(n/int64(traits[t].blockSize)) * uint64(traits[t].typeSize)
}

// ParseType accepts a type name in any case (f32, F16, q8_0, Q4_K, i32).
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if equalFold(traits[t].name, s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want f32, f16, q8_0, q4_0, q4_K, i32 or i64)", s)
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
