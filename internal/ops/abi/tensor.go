package abi

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// TensorSize is sizeof(struct ggml_tensor) on LP64 and on the device
// (RV64, -mabi=lp64f).
const TensorSize = 336

// MaxName is GGML_MAX_NAME: the name field's size, NUL included.
const MaxName = 64

// Byte offsets of the struct ggml_tensor fields (ggml.h; GGML_MAX_DIMS 4,
// GGML_MAX_SRC 10, GGML_MAX_OP_PARAMS 64, GGML_MAX_NAME 64). The fields
// not listed (buffer@8, flags@148, src[10]@152, view_src@232,
// view_offs@240, extra@320, padding@328) hold host pointers or host-only
// state: the kernels ignore them and et writes zeros.
const (
	offType     = 0
	offNe       = 16
	offNb       = 48
	offOp       = 80
	offOpParams = 84
	offData     = 248
	offName     = 256
)

// NumOpParams is GGML_MAX_OP_PARAMS / sizeof(int32_t).
const NumOpParams = 16

// TensorDesc is what a kernel can see of a device ggml_tensor.
type TensorDesc struct {
	Type     ops.Type
	Ne       [ops.MaxDims]int64
	Nb       [ops.MaxDims]uint64 // byte strides; nb[0] is the block size for quantized types
	Op       int32               // the ggml op value (manifest), e.g. GGML_OP_ADD for an el_map dst
	OpParams [NumOpParams]int32
	Data     uint64 // device address of element 0 (view offset included); 0 = absent
	Name     string // at most MaxName-1 bytes are kept, as ggml_set_name does
}

// Absent reports whether the tensor is an absent optional tensor (a zero
// block: data == NULL).
func (t TensorDesc) Absent() bool { return t.Data == 0 }

// EncodeTensor writes t as a device ggml_tensor with the default manifest.
func EncodeTensor(dst []byte, t TensorDesc) error { return Default().EncodeTensor(dst, t) }

// DecodeTensor reads a device ggml_tensor with the default manifest.
func DecodeTensor(b []byte) (TensorDesc, error) { return Default().DecodeTensor(b) }

// EncodeTensor writes t into dst[:TensorSize] as the 336-byte struct
// ggml_tensor the kernels read. Host pointer fields, flags and padding are
// zero. A name longer than MaxName-1 bytes is truncated, as ggml does.
func (m *Manifest) EncodeTensor(dst []byte, t TensorDesc) error {
	if len(dst) < TensorSize {
		return fmt.Errorf("tensor buffer is %d bytes, want %d", len(dst), TensorSize)
	}
	tv, ok := m.TypeValue(t.Type)
	if !ok {
		return fmt.Errorf("type %s has no ggml value in the ABI manifest", t.Type)
	}
	b := dst[:TensorSize]
	clear(b)
	le := binary.LittleEndian
	le.PutUint32(b[offType:], uint32(tv))
	for i := range ops.MaxDims {
		le.PutUint64(b[offNe+8*i:], uint64(t.Ne[i]))
		le.PutUint64(b[offNb+8*i:], t.Nb[i])
	}
	le.PutUint32(b[offOp:], uint32(t.Op))
	for i, p := range t.OpParams {
		le.PutUint32(b[offOpParams+4*i:], uint32(p))
	}
	le.PutUint64(b[offData:], t.Data)
	name := t.Name
	if len(name) > MaxName-1 {
		name = name[:MaxName-1]
	}
	copy(b[offName:offName+MaxName-1], name)
	return nil
}

// DecodeTensor reads the first TensorSize bytes of b as a device
// ggml_tensor. An all-zero block decodes to the zero TensorDesc (absent).
// Host pointer fields are ignored. The type must be one the manifest
// knows, and every ne must be >= 0.
func (m *Manifest) DecodeTensor(b []byte) (TensorDesc, error) {
	if len(b) < TensorSize {
		return TensorDesc{}, fmt.Errorf("tensor block is %d bytes, want %d", len(b), TensorSize)
	}
	b = b[:TensorSize]
	var t TensorDesc
	le := binary.LittleEndian
	t.Data = le.Uint64(b[offData:])
	tv := int32(le.Uint32(b[offType:]))
	if t.Data == 0 && isZero(b) {
		return TensorDesc{}, nil
	}
	typ, ok := m.TypeFromValue(tv)
	if !ok {
		return TensorDesc{}, fmt.Errorf("ggml type %d is not supported (ABI manifest %s)", tv, m.GGMLCommit())
	}
	t.Type = typ
	for i := range ops.MaxDims {
		t.Ne[i] = int64(le.Uint64(b[offNe+8*i:]))
		if t.Ne[i] < 0 {
			return TensorDesc{}, fmt.Errorf("ne[%d] = %d is negative", i, t.Ne[i])
		}
		t.Nb[i] = le.Uint64(b[offNb+8*i:])
	}
	t.Op = int32(le.Uint32(b[offOp:]))
	for i := range t.OpParams {
		t.OpParams[i] = int32(le.Uint32(b[offOpParams+4*i:]))
	}
	name := b[offName : offName+MaxName]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	t.Name = string(name)
	return t, nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// DescFromTensor builds the device view of host tensor x whose element 0
// lives at device address data. op is the ggml op value of the node (0 for
// a leaf) and opParams its op_params.
func DescFromTensor(x *ops.Tensor, data uint64, op int32, opParams [NumOpParams]int32) TensorDesc {
	return TensorDesc{Type: x.Type, Ne: x.Ne, Nb: x.Nb, Op: op, OpParams: opParams, Data: data, Name: x.Name}
}
