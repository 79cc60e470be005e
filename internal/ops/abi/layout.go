package abi

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Kind is the C type of a params-struct field.
type Kind uint8

// The field kinds. Tensor is a whole 336-byte ggml_tensor copy; Ptr is a raw
// device address (a C pointer on the device, 8 bytes).
const (
	KindTensor Kind = iota + 1
	KindPtr
	KindBool
	KindU16
	KindI32
	KindU32
	KindF32
	KindI64
	KindU64
)

var kindInfo = [...]struct {
	name string
	size int
}{
	KindTensor: {"tensor", TensorSize},
	KindPtr:    {"ptr", 8},
	KindBool:   {"bool", 1},
	KindU16:    {"u16", 2},
	KindI32:    {"i32", 4},
	KindU32:    {"u32", 4},
	KindF32:    {"f32", 4},
	KindI64:    {"i64", 8},
	KindU64:    {"u64", 8},
}

func (k Kind) valid() bool { return k >= KindTensor && k <= KindU64 }

// String is the kind's short name (tensor, f32, i32 ...).
func (k Kind) String() string {
	if !k.valid() {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindInfo[k].name
}

// Size is the field's size in bytes.
func (k Kind) Size() int {
	if !k.valid() {
		return 0
	}
	return kindInfo[k].size
}

// class tells which map of Values holds a kind.
func (k Kind) class() valueClass {
	switch k {
	case KindTensor:
		return classTensor
	case KindF32:
		return classFloat
	case KindBool, KindI32, KindI64:
		return classInt
	default:
		return classUint
	}
}

type valueClass uint8

const (
	classTensor valueClass = iota
	classInt
	classUint
	classFloat
)

func (c valueClass) String() string {
	return [...]string{"Tensors", "Ints", "Uints", "Floats"}[c]
}

// Field is one member of a params struct. Array members (int32 sections[4])
// are one Field per element, named "sections[0]" ... "sections[3]".
type Field struct {
	Name   string
	Kind   Kind
	Offset int // bytes from the start of the struct
	// Optional marks a tensor that may be absent (passed as a zero block,
	// data == NULL): ROPE freq factors, SOFT_MAX mask and sinks, the GLU
	// second source, the FLASH_ATTN mask, the Q8_0 bias.
	Optional bool
}

// End is the offset just past the field.
func (f Field) End() int { return f.Offset + f.Kind.Size() }

// Layout is the byte layout of one kernel params struct: an ordered field
// list and the C sizeof (trailing padding included).
type Layout struct {
	Name   string // the params-struct name of reference/ggml-et-backend.md §2.3 (rope, mm_q8 ...)
	Doc    string // what the struct is for
	Fields []Field
	Size   int // sizeof in bytes
}

// Field finds a field by name.
func (l *Layout) Field(name string) (Field, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// check validates the table itself: fields inside Size, aligned, in order
// and not overlapping.
func (l *Layout) check() error {
	end := 0
	for _, f := range l.Fields {
		if !f.Kind.valid() {
			return fmt.Errorf("layout %s: field %s: invalid kind", l.Name, f.Name)
		}
		align := f.Kind.Size()
		if f.Kind == KindTensor {
			align = 8
		}
		if f.Offset%align != 0 {
			return fmt.Errorf("layout %s: field %s at %d is not %d-byte aligned", l.Name, f.Name, f.Offset, align)
		}
		if f.Offset < end {
			return fmt.Errorf("layout %s: field %s at %d overlaps the previous field (ends at %d)", l.Name, f.Name, f.Offset, end)
		}
		if f.Optional && f.Kind != KindTensor {
			return fmt.Errorf("layout %s: field %s: only tensors can be optional", l.Name, f.Name)
		}
		end = f.End()
	}
	if end > l.Size {
		return fmt.Errorf("layout %s: fields end at %d, past the size %d", l.Name, end, l.Size)
	}
	return nil
}

// Values are the contents of a params struct, by field name. Tensor fields
// go in Tensors (a missing optional tensor is encoded as a zero block), f32
// in Floats, signed integers and bool (0 or 1) in Ints, unsigned integers
// and device pointers in Uints. A missing scalar is encoded as 0.
type Values struct {
	Tensors map[string]TensorDesc
	Ints    map[string]int64
	Uints   map[string]uint64
	Floats  map[string]float32
}

// SetTensor sets a tensor field.
func (v *Values) SetTensor(name string, t TensorDesc) {
	if v.Tensors == nil {
		v.Tensors = map[string]TensorDesc{}
	}
	v.Tensors[name] = t
}

// SetInt sets a signed integer or bool field.
func (v *Values) SetInt(name string, x int64) {
	if v.Ints == nil {
		v.Ints = map[string]int64{}
	}
	v.Ints[name] = x
}

// SetUint sets an unsigned integer or pointer field.
func (v *Values) SetUint(name string, x uint64) {
	if v.Uints == nil {
		v.Uints = map[string]uint64{}
	}
	v.Uints[name] = x
}

// SetFloat sets an f32 field.
func (v *Values) SetFloat(name string, x float32) {
	if v.Floats == nil {
		v.Floats = map[string]float32{}
	}
	v.Floats[name] = x
}

// Tensor returns a tensor field; ok is false when it is absent.
func (v Values) Tensor(name string) (TensorDesc, bool) {
	t, ok := v.Tensors[name]
	return t, ok
}

// Int returns a signed integer field (0 when unset).
func (v Values) Int(name string) int64 { return v.Ints[name] }

// Uint returns an unsigned integer field (0 when unset).
func (v Values) Uint(name string) uint64 { return v.Uints[name] }

// Float returns an f32 field (0 when unset).
func (v Values) Float(name string) float32 { return v.Floats[name] }

// ValueError reports a value that does not fit its params struct: an
// unknown field, a value in the wrong map, an integer out of range, a
// required tensor missing.
type ValueError struct {
	Layout string
	Field  string
	Msg    string
}

func (e *ValueError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("params %s: %s", e.Layout, e.Msg)
	}
	return fmt.Sprintf("params %s: field %s: %s", e.Layout, e.Field, e.Msg)
}

// InputError marks the error as bad input (exit 2).
func (e *ValueError) InputError() {}

// Encode encodes v with the default manifest.
func (l *Layout) Encode(v Values) ([]byte, error) { return Default().Encode(l, v) }

// Decode decodes b with the default manifest.
func (l *Layout) Decode(b []byte) (Values, error) { return Default().Decode(l, b) }

// Encode builds the bytes of params struct l from v, as the host does
// before ggml_et_launch_kernel: tensor copies, trailing scalars at their
// offsets, zero padding, zero blocks for absent optional tensors.
func (m *Manifest) Encode(l *Layout, v Values) ([]byte, error) {
	if err := checkKeys(l, v); err != nil {
		return nil, err
	}
	b := make([]byte, l.Size)
	for _, f := range l.Fields {
		dst := b[f.Offset:f.End()]
		bad := func(format string, args ...any) error {
			return &ValueError{Layout: l.Name, Field: f.Name, Msg: fmt.Sprintf(format, args...)}
		}
		switch f.Kind {
		case KindTensor:
			t, ok := v.Tensors[f.Name]
			if !ok {
				if !f.Optional {
					return nil, bad("required tensor is missing")
				}
				continue
			}
			if !f.Optional && t.Data == 0 {
				return nil, bad("required tensor has no device address (data = 0)")
			}
			if err := m.EncodeTensor(dst, t); err != nil {
				return nil, bad("%v", err)
			}
		case KindF32:
			binary.LittleEndian.PutUint32(dst, math.Float32bits(v.Floats[f.Name]))
		case KindBool:
			x := v.Ints[f.Name]
			if x != 0 && x != 1 {
				return nil, bad("bool value %d is not 0 or 1", x)
			}
			dst[0] = byte(x)
		case KindI32:
			x := v.Ints[f.Name]
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, bad("value %d out of int32 range", x)
			}
			binary.LittleEndian.PutUint32(dst, uint32(int32(x)))
		case KindI64:
			binary.LittleEndian.PutUint64(dst, uint64(v.Ints[f.Name]))
		case KindU16:
			x := v.Uints[f.Name]
			if x > math.MaxUint16 {
				return nil, bad("value %d out of uint16 range", x)
			}
			binary.LittleEndian.PutUint16(dst, uint16(x))
		case KindU32:
			x := v.Uints[f.Name]
			if x > math.MaxUint32 {
				return nil, bad("value %d out of uint32 range", x)
			}
			binary.LittleEndian.PutUint32(dst, uint32(x))
		case KindU64, KindPtr:
			binary.LittleEndian.PutUint64(dst, v.Uints[f.Name])
		}
	}
	return b, nil
}

// checkKeys rejects keys that name no field of l, or a field of another
// kind (a typo must not silently encode a zero).
func checkKeys(l *Layout, v Values) error {
	check := func(c valueClass, keys []string) error {
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := l.Field(k)
			if !ok {
				return &ValueError{Layout: l.Name, Field: k, Msg: "no such field"}
			}
			if f.Kind.class() != c {
				return &ValueError{Layout: l.Name, Field: k, Msg: fmt.Sprintf("is %s, set it in %s, not %s", f.Kind, f.Kind.class(), c)}
			}
		}
		return nil
	}
	if err := check(classTensor, keysOf(v.Tensors)); err != nil {
		return err
	}
	if err := check(classInt, keysOf(v.Ints)); err != nil {
		return err
	}
	if err := check(classUint, keysOf(v.Uints)); err != nil {
		return err
	}
	return check(classFloat, keysOf(v.Floats))
}

func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Decode reads params struct l from b, as the kernel would: b must be
// exactly l.Size bytes. A tensor block whose data is 0 is absent and left
// out of Tensors; an absent required tensor is an error. Every scalar field
// is set.
func (m *Manifest) Decode(l *Layout, b []byte) (Values, error) {
	if len(b) != l.Size {
		return Values{}, fmt.Errorf("params %s: got %d bytes, want %d", l.Name, len(b), l.Size)
	}
	var v Values
	for _, f := range l.Fields {
		src := b[f.Offset:f.End()]
		switch f.Kind {
		case KindTensor:
			if binary.LittleEndian.Uint64(src[offData:]) == 0 {
				if !f.Optional {
					return Values{}, fmt.Errorf("params %s: tensor %s at offset %d: required tensor is absent (data = 0)", l.Name, f.Name, f.Offset)
				}
				continue
			}
			t, err := m.DecodeTensor(src)
			if err != nil {
				return Values{}, fmt.Errorf("params %s: tensor %s at offset %d: %w", l.Name, f.Name, f.Offset, err)
			}
			v.SetTensor(f.Name, t)
		case KindF32:
			v.SetFloat(f.Name, math.Float32frombits(binary.LittleEndian.Uint32(src)))
		case KindBool:
			if src[0] > 1 {
				return Values{}, fmt.Errorf("params %s: field %s at offset %d: bool byte %d is not 0 or 1", l.Name, f.Name, f.Offset, src[0])
			}
			v.SetInt(f.Name, int64(src[0]))
		case KindI32:
			v.SetInt(f.Name, int64(int32(binary.LittleEndian.Uint32(src))))
		case KindI64:
			v.SetInt(f.Name, int64(binary.LittleEndian.Uint64(src)))
		case KindU16:
			v.SetUint(f.Name, uint64(binary.LittleEndian.Uint16(src)))
		case KindU32:
			v.SetUint(f.Name, uint64(binary.LittleEndian.Uint32(src)))
		case KindU64, KindPtr:
			v.SetUint(f.Name, binary.LittleEndian.Uint64(src))
		}
	}
	return v, nil
}
