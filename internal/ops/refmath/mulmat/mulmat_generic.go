package mulmat

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
)

// The matmul kernels (mulmat.go) exist for f32, f16, q8_0, q4_0 and q4_K
// weights. Weights of any other type with a host codec take the generic
// path: each tile of weight rows is dequantized to f32 (ggml's
// dequantize_row_*) as it is reached and multiplied by the f32 kernels,
// so no dequantized copy of the whole matrix is made. For bf16 weights
// the activations are first rounded to bf16, as ggml's CPU converts them
// to bf16, its vec_dot type; for the other quantized types ggml's CPU
// quantizes the activations to q8_0, q8_1 or q8_K and computes integer
// dot products, which this path does not copy: its results are the
// products of the dequantized weights with the f32 activations, summed
// in float32 as the f32 kernels sum.

// kernelType is the weight type whose kernels multiply weights of type t:
// t itself when it has kernels, else f32 (after dequantizing).
func kernelType(t ops.Type) ops.Type {
	switch t {
	case ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K:
		return t
	}
	return ops.F32
}

// mulMatWeightType checks that t can be the weight type of a matmul: a
// type with a host codec that is not an integer type.
func mulMatWeightType(op ops.Op, t ops.Type) error {
	if t.Integer() {
		return fmt.Errorf("%s: unsupported src0 type %s (want a float or quantized type)", op, t)
	}
	return ops.CodecError(t)
}

// dequantTile holds up to mulMatRowTile weight rows of a, dequantized to
// f32, for one goroutine of the generic path.
type dequantTile struct {
	ks   *Kernels
	a    *ops.Tensor
	k    int
	r0   int
	vals []float32
	le   []byte // big-endian hosts: vals encoded little-endian
}

func newDequantTile(ks *Kernels, a *ops.Tensor) *dequantTile {
	k := int(a.Ne[0])
	return &dequantTile{ks: ks, a: a, k: k, vals: make([]float32, mulMatRowTile*k)}
}

// load dequantizes rows r0..r1-1 of matrix (i2, i3) of a.
func (d *dequantTile) load(r0, r1, i2, i3 int) {
	d.r0 = r0
	for i := r0; i < r1; i++ {
		out := d.vals[(i-r0)*d.k : (i-r0+1)*d.k]
		if d.a.Type == ops.Q6_K && ops.HostLE && d.ks.dequantRowQ6_KVec(d.a.RowBytes(int64(i), int64(i2), int64(i3)), out) {
			continue // the same values, by vector code
		}
		d.a.Row(int64(i), int64(i2), int64(i3), out)
	}
	if !ops.HostLE {
		d.le = make([]byte, 4*len(d.vals))
		for i, v := range d.vals[:(r1-r0)*d.k] {
			binary.LittleEndian.PutUint32(d.le[4*i:], math.Float32bits(v))
		}
	}
}

// row is row i (loaded by load) as f32 bytes, as the f32 kernels take
// weight rows.
func (d *dequantTile) row(i int) []byte {
	o := (i - d.r0) * d.k
	if !ops.HostLE {
		return d.le[4*o : 4*(o+d.k)]
	}
	return ops.F32Mem(d.vals[o : o+d.k])
}
