package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// matmulRules are the rows of mul_mat_id and solve_tri (the matrix ops beside mul_mat; reference ggml-et-backend.md §1.2).
var matmulRules = map[ops.Op]opRule{
	"mul_mat_id": {check: checkMulMatID, kernel: kernelMulMatID, fields: []string{"src0", "src1", "src2"}},
	"solve_tri":  {check: checkSolveTri, kernel: fixed("solve_tri_f32"), fields: []string{"a", "b"}, dst: "x"},
}

func checkMulMatID(c *checker) {
	as, b, ids, d := c.src(0), c.src(1), c.src(2), c.dst()
	c.typeIn("dst", d, ops.F32)
	c.typeIn("src0", as, ops.Q8_0, ops.Q4_0, ops.F16, ops.F32)
	c.typeIn("src1", b, ops.F32)
	c.typeIn("src2", ids, ops.I32)
	c.nb0Elem("src0", as)
	c.nb0Elem("src1", b)
	c.nb0Elem("src2", ids)
	c.nb0("dst", d, 4)
	if !stridesOrdered(d) {
		c.fail(CodeStride, "dst", "", "", "dst strides are not ordered (nb = %s)", fmtNb(d))
	}
	if as.Ne[3] != 1 {
		c.failf("src0.ne3 != 1 (ne3 = %d)", as.Ne[3])
	}
	if b.Ne[3] != 1 {
		c.failf("src1.ne3 != 1 (ne3 = %d)", b.Ne[3])
	}
	if ids.Ne[2] != 1 || ids.Ne[3] != 1 {
		c.failf("src2 is not 2-D (ne = %s)", fmtNe(ids))
	}
	if ids.Ne[1] != b.Ne[2] {
		c.failf("src2.ne1 != src1.ne2 (src2.ne1 = %d, src1.ne2 = %d)", ids.Ne[1], b.Ne[2])
	}
	if as.Ne[0] != b.Ne[0] {
		c.failf("src0.ne0 != src1.ne0 (src0.ne0 = %d, src1.ne0 = %d)", as.Ne[0], b.Ne[0])
	}
	if b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0 {
		c.failf("src2.ne0 %% src1.ne1 != 0 (src2.ne0 = %d, src1.ne1 = %d)", ids.Ne[0], b.Ne[1])
	}
}

func kernelMulMatID(x *nodeCtx) string {
	switch x.src(0).Type {
	case ops.Q8_0:
		return "mul_mat_id_Q8_0"
	case ops.Q4_0:
		return "mul_mat_id_Q4_0"
	}
	return "mul_mat_id_f32"
}

func checkSolveTri(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", a, "src1", b, "dst", d)
	if a.Ne[0] != a.Ne[1] {
		c.failf("A is not square (ne0 = %d, ne1 = %d)", a.Ne[0], a.Ne[1])
	}
	if a.Ne[1] != b.Ne[1] {
		c.failf("A.ne1 != B.ne1 (A.ne1 = %d, B.ne1 = %d)", a.Ne[1], b.Ne[1])
	}
	c.mod("B.ne0", b.Ne[0], 16)
	c.contiguous("src0", a)
	c.contiguous("src1", b)
	c.contiguous("dst", d)
	p := c.p()
	if (p.Has("left") && !p.Bool("left")) || (p.Has("lower") && !p.Bool("lower")) || p.Bool("uni") {
		c.fail(CodeMode, "left,lower,uni", fmt.Sprintf("%v,%v,%v", p.Bool("left"), p.Bool("lower"), p.Bool("uni")), "true,true,false", "only left, lower, non-unit solve_tri is implemented (left = %v, lower = %v, uni = %v)", p.Bool("left"), p.Bool("lower"), p.Bool("uni"))
	}
}
