package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// Tensor-layout predicates with ggml's exact semantics (ggml.c). They
// differ from ops.Tensor.IsContiguous in one way that matters for
// supports_op: a dimension of size 1 may have any stride.

// isContiguousN is ggml_is_contiguous_n: the tensor is dense from
// dimension n+1 up; dimensions 1..n may have gaps after them. n = 0 is
// ggml_is_contiguous, n = 1 is ggml_is_contiguous_1.
func isContiguousN(t *ops.Tensor, n int) bool {
	next := uint64(t.Type.TypeSize())
	bs := int64(t.Type.BlockSize())
	if t.Ne[0] != bs && t.Nb[0] != next {
		return false
	}
	next *= uint64(t.Ne[0] / bs)
	for i := 1; i < ops.MaxDims; i++ {
		if t.Ne[i] == 1 {
			continue
		}
		if i > n {
			if t.Nb[i] != next {
				return false
			}
			next *= uint64(t.Ne[i])
		} else {
			next = uint64(t.Ne[i]) * t.Nb[i]
		}
	}
	return true
}

// isContiguous is ggml_is_contiguous.
func isContiguous(t *ops.Tensor) bool { return isContiguousN(t, 0) }

// isContiguous1 is ggml_is_contiguous_1 (rows dense, gaps between rows allowed).
func isContiguous1(t *ops.Tensor) bool { return isContiguousN(t, 1) }

// isContiguousRows is ggml_is_contiguous_rows: the elements of a row are dense.
func isContiguousRows(t *ops.Tensor) bool {
	return t.Ne[0] == int64(t.Type.BlockSize()) || t.Nb[0] == uint64(t.Type.TypeSize())
}

// stridesOrdered reports whether nb[d] <= nb[d+1] wherever ne[d] > 1 and
// ne[d+1] > 1 (no transposed dimensions).
func stridesOrdered(t *ops.Tensor) bool {
	for d := 0; d+1 < ops.MaxDims; d++ {
		if t.Ne[d] > 1 && t.Ne[d+1] > 1 && t.Nb[d] > t.Nb[d+1] {
			return false
		}
	}
	return true
}

func fmtNe(t *ops.Tensor) string { return t.ShapeString() }

func fmtNb(t *ops.Tensor) string {
	return fmt.Sprintf("[%d, %d, %d, %d]", t.Nb[0], t.Nb[1], t.Nb[2], t.Nb[3])
}

func typeList(ts []ops.Type) string {
	s := "{"
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s + "}"
}
