package abi

import (
	"encoding/binary"
	"fmt"
)

// InstSize is sizeof(ggml_et_uberkernel_inst): u16 kernel_id@0,
// u16 flags@2, u32 params_offset@4, u32 params_size@8 (align 4).
const InstSize = 12

// Inst is one uberkernel instruction record.
type Inst struct {
	KernelID     uint16 // uberkernel kernel id (manifest); 0 is invalid
	Flags        uint16 // always 0
	ParamsOffset uint32 // byte offset of the params struct in the blob
	ParamsSize   uint32 // its size in bytes
}

// Launch is ggml_et_uberkernel_params, the 24-byte launch args of kernel
// uberkernel.
type Launch struct {
	NumInsts   uint32
	InstStride uint32 // InstSize
	Insts      uint64 // device address of the instruction array
	ParamsBlob uint64 // device address of the params blob
}

// Batch accumulates one uberkernel segment on the host: an instruction
// array and a params blob in which each params struct starts at a multiple
// of the manifest's param_align (64), the gaps zero-filled.
type Batch struct {
	m     *Manifest
	insts []Inst
	blob  []byte
}

// NewBatch starts an empty segment for manifest m (nil: Default()).
func NewBatch(m *Manifest) *Batch {
	if m == nil {
		m = Default()
	}
	return &Batch{m: m}
}

// Add appends a launch of kernel with its encoded params. It fails for a
// kernel the uberkernel cannot run.
func (b *Batch) Add(kernel string, params []byte) (Inst, error) {
	id, ok := b.m.UberkernelID(kernel)
	if !ok {
		return Inst{}, fmt.Errorf("kernel %s cannot be batched into the uberkernel", kernel)
	}
	align := b.m.UberkernelParamAlign()
	off := (len(b.blob) + align - 1) / align * align
	if uint64(off)+uint64(len(params)) > 1<<32-1 {
		return Inst{}, fmt.Errorf("uberkernel params blob would exceed 4 GiB")
	}
	b.blob = append(b.blob, make([]byte, off-len(b.blob))...)
	b.blob = append(b.blob, params...)
	in := Inst{KernelID: id, ParamsOffset: uint32(off), ParamsSize: uint32(len(params))}
	b.insts = append(b.insts, in)
	return in, nil
}

// Len is the number of instructions.
func (b *Batch) Len() int { return len(b.insts) }

// Insts returns the instructions.
func (b *Batch) Insts() []Inst { return append([]Inst(nil), b.insts...) }

// Blob returns the params blob.
func (b *Batch) Blob() []byte { return b.blob }

// InstBytes encodes the instruction array (Len()*InstSize bytes).
func (b *Batch) InstBytes() []byte { return EncodeInsts(b.insts) }

// Launch returns the uberkernel launch args, given the device addresses of
// the uploaded instruction array and blob.
func (b *Batch) Launch(insts, blob uint64) Launch {
	return Launch{NumInsts: uint32(len(b.insts)), InstStride: InstSize, Insts: insts, ParamsBlob: blob}
}

// Reset empties the batch for the next segment.
func (b *Batch) Reset() {
	b.insts = b.insts[:0]
	b.blob = b.blob[:0]
}

// EncodeInsts encodes instruction records, InstSize bytes each.
func EncodeInsts(insts []Inst) []byte {
	out := make([]byte, len(insts)*InstSize)
	for i, in := range insts {
		r := out[i*InstSize:]
		binary.LittleEndian.PutUint16(r[0:], in.KernelID)
		binary.LittleEndian.PutUint16(r[2:], in.Flags)
		binary.LittleEndian.PutUint32(r[4:], in.ParamsOffset)
		binary.LittleEndian.PutUint32(r[8:], in.ParamsSize)
	}
	return out
}

// DecodeInsts decodes n instruction records of stride bytes each (the
// launch's inst_stride, at least InstSize) from b.
func DecodeInsts(b []byte, n, stride uint32) ([]Inst, error) {
	if stride < InstSize {
		return nil, fmt.Errorf("uberkernel inst_stride %d is smaller than %d", stride, InstSize)
	}
	if need := uint64(n) * uint64(stride); uint64(len(b)) < need {
		return nil, fmt.Errorf("uberkernel instruction array is %d bytes, %d records of %d need %d", len(b), n, stride, need)
	}
	out := make([]Inst, n)
	for i := range out {
		r := b[uint64(i)*uint64(stride):]
		out[i] = Inst{
			KernelID:     binary.LittleEndian.Uint16(r[0:]),
			Flags:        binary.LittleEndian.Uint16(r[2:]),
			ParamsOffset: binary.LittleEndian.Uint32(r[4:]),
			ParamsSize:   binary.LittleEndian.Uint32(r[8:]),
		}
	}
	return out, nil
}

// Params returns the params struct of in from blob, checking that the
// kernel id is known, the params lie inside the blob, and the struct size
// is the one the kernel's layout expects. It returns the kernel name.
func (m *Manifest) Params(in Inst, blob []byte) (kernel string, params []byte, err error) {
	kernel, ok := m.UberkernelKernel(in.KernelID)
	if !ok {
		return "", nil, fmt.Errorf("uberkernel kernel id %d is unknown (ABI manifest %s)", in.KernelID, m.GGMLCommit())
	}
	end := uint64(in.ParamsOffset) + uint64(in.ParamsSize)
	if end > uint64(len(blob)) {
		return "", nil, fmt.Errorf("uberkernel inst %s: params [%d, %d) past the end of the %d-byte blob", kernel, in.ParamsOffset, end, len(blob))
	}
	if align := m.UberkernelParamAlign(); in.ParamsOffset%uint32(align) != 0 {
		return "", nil, fmt.Errorf("uberkernel inst %s: params offset %d is not %d-byte aligned", kernel, in.ParamsOffset, align)
	}
	if l, ok := m.LayoutFor(kernel); ok && int(in.ParamsSize) != l.Size {
		return "", nil, fmt.Errorf("uberkernel inst %s: params size %d, want %d (%s)", kernel, in.ParamsSize, l.Size, l.Name)
	}
	return kernel, blob[in.ParamsOffset:end], nil
}

// EncodeLaunch encodes the 24-byte uberkernel launch args.
func EncodeLaunch(l Launch) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[0:], l.NumInsts)
	binary.LittleEndian.PutUint32(b[4:], l.InstStride)
	binary.LittleEndian.PutUint64(b[8:], l.Insts)
	binary.LittleEndian.PutUint64(b[16:], l.ParamsBlob)
	return b
}

// DecodeLaunch decodes the 24-byte uberkernel launch args.
func DecodeLaunch(b []byte) (Launch, error) {
	if len(b) != 24 {
		return Launch{}, fmt.Errorf("uberkernel launch args are %d bytes, want 24", len(b))
	}
	return Launch{
		NumInsts:   binary.LittleEndian.Uint32(b[0:]),
		InstStride: binary.LittleEndian.Uint32(b[4:]),
		Insts:      binary.LittleEndian.Uint64(b[8:]),
		ParamsBlob: binary.LittleEndian.Uint64(b[16:]),
	}, nil
}
