package ops

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/half"
)

// HostLE reports whether this machine is little-endian, the byte order of
// ggml tensors: then f32 rows are copied as bytes.
var HostLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// F32Mem is the memory of v as bytes.
func F32Mem(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// Quantize is QuantizeRow that returns a *NoHostMathError for a type
// with no host codec (t.HasCodec() is false) instead of panicking.
func Quantize(t Type, src []float32, dst []byte) error {
	if err := CodecError(t); err != nil {
		return err
	}
	QuantizeRow(t, src, dst)
	return nil
}

// Dequantize is DequantizeRow that returns a *NoHostMathError for a type
// with no host codec instead of panicking.
func Dequantize(t Type, src []byte, dst []float32) error {
	if err := CodecError(t); err != nil {
		return err
	}
	DequantizeRow(t, src, dst)
	return nil
}

// QuantizeRow converts len(src) floats to type t into dst (RowSize bytes):
// ggml's reference quantizer (quantize_row_*_ref) for the block types
// with a codec (see HasCodec), round-to-nearest-even for f16 and bf16, a
// widening for f64, a C cast (truncation toward zero, then wrapping to the
// width) for i8, i16, i32 and i64. len(src) must be a multiple of t's
// block size. It panics for a type without a host codec
// (see HasCodec and Quantize).
func QuantizeRow(t Type, src []float32, dst []byte) {
	switch t {
	case F32:
		if HostLE {
			copy(dst[:4*len(src)], F32Mem(src))
			return
		}
		for i, v := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case F16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], half.FromF32(v))
		}
	case I32:
		for i, v := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(int32(v)))
		}
	case I64:
		for i, v := range src {
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(int64(v)))
		}
	case I8:
		for i, v := range src {
			dst[i] = byte(int32(v))
		}
	case I16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(int32(v)))
		}
	case F64:
		for i, v := range src {
			binary.LittleEndian.PutUint64(dst[8*i:], math.Float64bits(float64(v)))
		}
	case Q8_0:
		codec.QuantizeQ8_0(src, dst)
	case Q4_0:
		codec.QuantizeQ4_0(src, dst)
	case Q4_K:
		for b := 0; b < len(src)/codec.QKK; b++ {
			codec.QuantizeBlockQ4_K(src[b*codec.QKK:(b+1)*codec.QKK], dst[b*144:(b+1)*144])
		}
	case BF16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], codec.F32ToBF16(v))
		}
	default:
		q, ok := blockQuantizers[t]
		if !ok {
			panic(fmt.Sprintf("ops.QuantizeRow: unsupported type %s", t))
		}
		bs, ts := t.BlockSize(), t.TypeSize()
		for b := 0; b < len(src)/bs; b++ {
			q(src[b*bs:(b+1)*bs], dst[b*ts:(b+1)*ts])
		}
	}
}

// DequantizeRow converts the row in src (RowSize(len(dst)) bytes) of type t
// to float32 into dst, as ggml's to_float does (f64 rounds to nearest). It
// panics for a type without a host codec (see HasCodec and Dequantize).
func DequantizeRow(t Type, src []byte, dst []float32) {
	switch t {
	case F32:
		if HostLE {
			copy(F32Mem(dst), src[:4*len(dst)])
			return
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case F16:
		tab := F16ToF32Table()
		for i := range dst {
			dst[i] = tab[binary.LittleEndian.Uint16(src[2*i:])]
		}
	case I32:
		for i := range dst {
			dst[i] = float32(int32(binary.LittleEndian.Uint32(src[4*i:])))
		}
	case I64:
		for i := range dst {
			dst[i] = float32(int64(binary.LittleEndian.Uint64(src[8*i:])))
		}
	case I8:
		for i := range dst {
			dst[i] = float32(int8(src[i]))
		}
	case I16:
		for i := range dst {
			dst[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:])))
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
		}
	case Q8_0:
		for b := 0; b < len(dst)/codec.QK8_0; b++ {
			codec.DequantizeBlockQ8_0(src[b*34:(b+1)*34], dst[b*codec.QK8_0:(b+1)*codec.QK8_0])
		}
	case Q4_0:
		for b := 0; b < len(dst)/codec.QK4_0; b++ {
			codec.DequantizeBlockQ4_0(src[b*18:(b+1)*18], dst[b*codec.QK4_0:(b+1)*codec.QK4_0])
		}
	case Q4_K:
		for b := 0; b < len(dst)/codec.QKK; b++ {
			codec.DequantizeBlockQ4_K(src[b*144:(b+1)*144], dst[b*codec.QKK:(b+1)*codec.QKK])
		}
	case BF16:
		for i := range dst {
			dst[i] = codec.BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		dq, ok := blockDequantizers[t]
		if !ok {
			panic(fmt.Sprintf("ops.DequantizeRow: unsupported type %s", t))
		}
		bs, ts := t.BlockSize(), t.TypeSize()
		for b := 0; b < len(dst)/bs; b++ {
			dq(src[b*ts:(b+1)*ts], dst[b*bs:(b+1)*bs])
		}
	}
}

// blockQuantizers and blockDequantizers hold the block codecs (package
// codec) that QuantizeRow and DequantizeRow reach through their default
// case: the types llama.cpp models ship in besides the ones they name.
var (
	blockQuantizers = map[Type]func([]float32, []byte){
		Q4_1: codec.QuantizeBlockQ4_1, Q5_0: codec.QuantizeBlockQ5_0, Q5_1: codec.QuantizeBlockQ5_1,
		Q2_K: codec.QuantizeBlockQ2_K, Q3_K: codec.QuantizeBlockQ3_K, Q5_K: codec.QuantizeBlockQ5_K, Q6_K: codec.QuantizeBlockQ6_K,
		Q1_0: codec.QuantizeBlockQ1_0, Q2_0: codec.QuantizeBlockQ2_0, TQ1_0: codec.QuantizeBlockTQ1_0,
		TQ2_0: codec.QuantizeBlockTQ2_0, MXFP4: codec.QuantizeBlockMXFP4, NVFP4: codec.QuantizeBlockNVFP4,
		IQ4_NL: func(x []float32, y []byte) { codec.QuantizeIQ4(x[:32], y[:codec.SizeIQ4_NL], -1) },
		IQ4_XS: func(x []float32, y []byte) { codec.QuantizeIQ4(x[:codec.QKK], y[:codec.SizeIQ4_XS], 7) },
	}
	blockDequantizers = map[Type]func([]byte, []float32){
		Q4_1: codec.DequantizeBlockQ4_1, Q5_0: codec.DequantizeBlockQ5_0, Q5_1: codec.DequantizeBlockQ5_1,
		Q2_K: codec.DequantizeBlockQ2_K, Q3_K: codec.DequantizeBlockQ3_K, Q5_K: codec.DequantizeBlockQ5_K, Q6_K: codec.DequantizeBlockQ6_K,
		Q1_0: codec.DequantizeBlockQ1_0, Q2_0: codec.DequantizeBlockQ2_0, TQ1_0: codec.DequantizeBlockTQ1_0,
		TQ2_0: codec.DequantizeBlockTQ2_0, MXFP4: codec.DequantizeBlockMXFP4, NVFP4: codec.DequantizeBlockNVFP4,
		IQ4_NL: codec.DequantizeBlockIQ4_NL, IQ4_XS: codec.DequantizeBlockIQ4_XS,
	}
)
