package ops

import (
	"fmt"
)

// MaxDims is ggml's GGML_MAX_DIMS.
const MaxDims = 4

// Tensor is a ggml tensor on the host: a type, a shape in ggml order
// (Ne[0] is the innermost, contiguous dimension), byte strides Nb and a
// byte buffer. Views share Buf with their source and differ in Offs, Ne
// and Nb, exactly as ggml views do; Offs is the byte offset of element 0.
type Tensor struct {
	Name string
	Type Type
	Ne   [MaxDims]int64
	Nb   [MaxDims]uint64
	Buf  []byte
	Offs uint64
	// DataLen is, for a tensor without data (Buf nil: NewShape, or a
	// view of one), the length its memory will have once data is bound
	// to it; see BufLen. Planning works on such tensors, so that a plan
	// of a 64 GiB case takes no more memory than one of 64 bytes.
	DataLen uint64
}

// New allocates a zeroed contiguous tensor. ne may have 1 to 4 entries;
// missing trailing dimensions are 1.
func New(t Type, ne ...int64) *Tensor {
	x := NewShape(t, ne...)
	x.Buf, x.DataLen = make([]byte, x.DataLen), 0
	return x
}

// NewShape is New without the data: a contiguous tensor of type t and
// shape ne whose Buf is nil and whose BufLen is the bytes its data will
// take. A run binds data to it (sets Buf) once the memory is admitted.
func NewShape(t Type, ne ...int64) *Tensor {
	x := &Tensor{Type: t}
	for i := range x.Ne {
		x.Ne[i] = 1
	}
	copy(x.Ne[:], ne)
	x.Nb = ContiguousStrides(t, x.Ne)
	x.DataLen = x.Nb[3] * uint64(x.Ne[3])
	return x
}

// BufLen is the length of the memory the tensor is a part of: len(Buf),
// or DataLen for a tensor that has no data yet.
func (x *Tensor) BufLen() uint64 {
	if x.Buf == nil {
		return x.DataLen
	}
	return uint64(len(x.Buf))
}

// ContiguousStrides gives ggml's nb for a contiguous tensor of type t:
// nb[0] = type size, nb[1] = nb[0]*ne[0]/block size, nb[i] = nb[i-1]*ne[i-1].
func ContiguousStrides(t Type, ne [MaxDims]int64) [MaxDims]uint64 {
	var nb [MaxDims]uint64
	nb[0] = uint64(t.TypeSize())
	nb[1] = nb[0] * uint64(ne[0]/int64(t.BlockSize()))
	for i := 2; i < MaxDims; i++ {
		nb[i] = nb[i-1] * uint64(ne[i-1])
	}
	return nb
}

// NElements is the number of elements.
func (x *Tensor) NElements() int64 { return x.Ne[0] * x.Ne[1] * x.Ne[2] * x.Ne[3] }

// NRows is the number of rows (ne1*ne2*ne3).
func (x *Tensor) NRows() int64 { return x.Ne[1] * x.Ne[2] * x.Ne[3] }

// NBytes is ggml_nbytes: the span of bytes the tensor touches.
func (x *Tensor) NBytes() uint64 {
	if x.NElements() == 0 {
		return 0
	}
	bs := int64(x.Type.BlockSize())
	n := uint64(x.Type.TypeSize())
	if bs == 1 {
		for i := 0; i < MaxDims; i++ {
			n += uint64(x.Ne[i]-1) * x.Nb[i]
		}
		return n
	}
	n = uint64(x.Ne[0]/bs) * x.Nb[0]
	for i := 1; i < MaxDims; i++ {
		n += uint64(x.Ne[i]-1) * x.Nb[i]
	}
	return n
}

// IsContiguous reports whether the tensor's elements are dense in ggml order.
func (x *Tensor) IsContiguous() bool {
	return x.Nb == ContiguousStrides(x.Type, x.Ne)
}

// ShapeString formats ne as ggml prints it: [4096, 7, 1, 1].
func (x *Tensor) ShapeString() string {
	return fmt.Sprintf("[%d, %d, %d, %d]", x.Ne[0], x.Ne[1], x.Ne[2], x.Ne[3])
}
