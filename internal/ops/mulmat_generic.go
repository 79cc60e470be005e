package ops

import "fmt"

// The matmul kernels (mulmat.go) exist for f32, f16, q8_0, q4_0 and q4_K
// weights. Weights of any other type with a host codec take the generic
// path: they are dequantized to f32 once (ggml's dequantize_row_*) and
// multiplied as f32 weights. For bf16 weights the activations are first
// rounded to bf16, as ggml's CPU converts them to bf16, its vec_dot type;
// for the other quantized types ggml's CPU quantizes the activations to
// q8_0, q8_1 or q8_K and computes integer dot products, which this path
// does not copy: its results are the exact products of the dequantized
// weights with the f32 activations, summed in float32.

// hasMulMatKernel reports whether t has its own matmul kernel.
func hasMulMatKernel(t Type) bool {
	switch t {
	case F32, F16, Q8_0, Q4_0, Q4_K:
		return true
	}
	return false
}

// mulMatWeightType checks that a can be the weights of a matmul: a type
// with a host codec that is not an integer type.
func mulMatWeightType(op Op, t Type) error {
	if t.Integer() {
		return fmt.Errorf("%s: unsupported src0 type %s (want a float or quantized type)", op, t)
	}
	return CodecError(t)
}

// genericMulMatOperands returns a and b as the kernels take them: a
// itself when it has a kernel, else a contiguous f32 copy of its
// dequantized rows (and, for bf16 weights, b rounded to bf16).
func genericMulMatOperands(a, b *Tensor) (*Tensor, *Tensor) {
	if hasMulMatKernel(a.Type) {
		return a, b
	}
	wa := widenF32(a, nil)
	if a.Type == BF16 {
		b = widenF32(b, func(v float32) float32 { return BF16ToF32(F32ToBF16(v)) })
	}
	return wa, b
}

// widenF32 is a contiguous f32 tensor of x's shape holding x's elements
// (dequantized), each passed through round when it is not nil.
func widenF32(x *Tensor, round func(float32) float32) *Tensor {
	y := New(F32, x.Ne[:]...)
	y.Name = x.Name
	n := x.Ne[0]
	row := make([]float32, n)
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				x.Row(i1, i2, i3, row)
				if round != nil {
					for i, v := range row {
						row[i] = round(v)
					}
				}
				y.SetRow(i1, i2, i3, row)
			}
		}
	}
	return y
}
