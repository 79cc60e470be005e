package plan

import (
	"github.com/ainekko/et/internal/ops"
)

// reduceRules are the rows of sum_rows, mean, cumsum and group_norm (reductions along rows; reference ggml-et-backend.md §1.2).
var reduceRules = map[ops.Op]opRule{
	"sum_rows":   {check: checkSumRows, kernel: fixed("sum_rows_f32"), fields: []string{"src0"}},
	"mean":       {check: checkMean, kernel: fixed("mean_f32"), fields: []string{"src0"}},
	"cumsum":     {check: checkCumsum, kernel: fixed("cumsum_f32"), fields: []string{"src0"}},
	"group_norm": {check: checkGroupNorm, kernel: fixed("group_norm_f32"), fields: []string{"src0"}, scalars: scalarsGroupNorm},
}

func checkSumRows(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("src0.ne0", x.Ne[0], 16)
	c.contiguous("src0", x)
}

func checkMean(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
}

func checkCumsum(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.nb0("src0", x, 4)
	c.contiguous("dst", d)
}

func checkGroupNorm(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("dst", d)
	c.nb0("src0", x, 4)
	if g := c.p().Int("n_groups"); g <= 0 {
		c.failf("n_groups <= 0 (n_groups = %d)", g)
	}
}

func scalarsGroupNorm(x *nodeCtx, b *binder) error {
	g, eps := x.p().Int("n_groups"), x.p().F32("eps")
	b.v.SetInt("n_groups", g)
	b.v.SetFloat("eps", eps)
	b.op[0] = int32(g)
	b.opF32(1, eps)
	return nil
}
