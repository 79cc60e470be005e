package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// elementwiseRules are the rows of sqr, clamp, fill, diag and tri (one source, element by element; reference ggml-et-backend.md §1.2).
var elementwiseRules = map[ops.Op]opRule{
	"sqr":   {check: checkSqr, kernel: fixed("sqr_f32"), fields: []string{"src0"}},
	"clamp": {check: checkClamp, kernel: fixed("clamp_f32"), fields: []string{"src0"}, scalars: scalarsClamp},
	"fill":  {check: checkFill, kernel: fixed("fill_f32"), fields: []string{""}, scalars: scalarsFill},
	"diag":  {check: checkDiag, kernel: fixed("diag_f32"), fields: []string{"src0"}},
	"tri":   {check: checkTri, kernel: fixed("tri_f32"), fields: []string{"src0"}, scalars: scalarsTri},
}

func checkSqr(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("ne0", x.Ne[0], 16)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
}

func checkClamp(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
}

func scalarsClamp(x *nodeCtx, b *binder) error {
	lo, hi := x.p().F32("min"), x.p().F32("max")
	b.v.SetFloat("min", lo)
	b.v.SetFloat("max", hi)
	b.opF32(0, lo)
	b.opF32(1, hi)
	return nil
}

func checkFill(c *checker) {
	d := c.dst()
	c.f32("dst", d)
	c.contiguous("dst", d)
	c.mod("ne0", d.Ne[0], 16)
}

func scalarsFill(x *nodeCtx, b *binder) error {
	v := x.p().F32("c")
	b.v.SetFloat("c", v)
	b.opF32(0, v)
	return nil
}

func checkDiag(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("ne0", d.Ne[0], 16)
	if d.Ne[0] != d.Ne[1] {
		c.failf("dst.ne0 != dst.ne1 (ne0 = %d, ne1 = %d)", d.Ne[0], d.Ne[1])
	}
	if x.Ne[1] != 1 {
		c.failf("src0.ne1 != 1 (ne1 = %d)", x.Ne[1])
	}
	c.contiguous("src0", x)
	c.contiguous("dst", d)
}

func checkTri(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
	if name := c.p().Str("type"); name != "" {
		if _, ok := c.m.TriValue(name); !ok {
			c.failf("tri type %s has no value in the ABI manifest (no tri_types entry)", name)
		}
	}
}

// scalarsTri: tri_type = op_params[0], the ggml_tri_type value.
func scalarsTri(x *nodeCtx, b *binder) error {
	name := x.p().Str("type")
	v, ok := x.m.TriValue(name)
	if !ok {
		return fmt.Errorf("tri type %s has no value in the ABI manifest", name)
	}
	b.v.SetInt("tri_type", int64(v))
	b.op[0] = v
	return nil
}
