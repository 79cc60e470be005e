package plan

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
)

// layoutRules are the rows of concat, repeat, pad and set (moving data between shapes; reference ggml-et-backend.md §1.2).
var layoutRules = map[ops.Op]opRule{
	"concat": {check: checkConcat, kernel: fixed("concat_f32"), fields: []string{"src0", "src1"}, scalars: scalarsConcat},
	"repeat": {check: checkRepeat, kernel: kernelRepeat, fields: []string{"src0"}},
	"pad":    {check: checkPad, kernel: fixed("pad_f32"), fields: []string{"src0"}, scalars: scalarsPad},
	// SET runs in place: the params carry only src1 and dst (dst is ggml's
	// src0), so the result's memory must hold a before the launch.
	"set": {check: checkSet, kernel: fixed("set_f32"), fields: []string{"", "src1"}, scalars: scalarsSet},
}

// checkConcat accepts dim 0 (the fast path when both sources are aligned
// and contiguous, otherwise the stride-aware path) and dim >= 1 with
// every ne0 % 16 == 0 and both sources contiguous.
func checkConcat(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", a, "src1", b, "dst", d)
	c.contiguous("dst", d)
	if c.p().Int("dim") == 0 {
		return
	}
	c.mod("src0.ne0", a.Ne[0], 16)
	c.mod("src1.ne0", b.Ne[0], 16)
	c.mod("dst.ne0", d.Ne[0], 16)
	c.contiguous("src0", a)
	c.contiguous("src1", b)
}

func scalarsConcat(x *nodeCtx, b *binder) error {
	dim := x.p().Int("dim")
	b.v.SetInt("dim", dim)
	b.op[0] = int32(dim)
	return nil
}

// checkRepeat: a same-shape repeat is a copy (cont_f32); otherwise
// repeat_f32 needs an aligned or scalar src0.ne0, an aligned dst.ne0 and
// whole repetitions.
func checkRepeat(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
	if x.Ne == d.Ne {
		return
	}
	if x.Ne[0] != 1 && x.Ne[0]%16 != 0 {
		c.fail(CodeMultiple, "src0.ne0", fmt.Sprint(x.Ne[0]), "16", "src0.ne0 != 1 and src0.ne0 %% 16 != 0 (ne0 = %d)", x.Ne[0])
	}
	c.mod("dst.ne0", d.Ne[0], 16)
	for i := range ops.MaxDims {
		if x.Ne[i] == 0 || d.Ne[i]%x.Ne[i] != 0 {
			c.failf("dst.ne%d %% src0.ne%d != 0 (%d, %d)", i, i, d.Ne[i], x.Ne[i])
		}
	}
}

func kernelRepeat(x *nodeCtx) string {
	if x.src(0).Ne == x.dst().Ne {
		return "cont_f32"
	}
	return "repeat_f32"
}

func checkPad(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("dst", d)
	if n := d.Ne[0]; n == 0 || (n%16 != 0 && 16%n != 0) { // the crate tests the result's ne0
		c.fail(CodePadNe0, "ne0", fmt.Sprint(n), "16", "ne0 %% 16 != 0 and 16 %% ne0 != 0 (ne0 = %d)", n)
	}
	c.nb0("src0", x, 4)
	var lp0, rp0 int64 // a missing entry is 0, as ggml's zeroed op_params
	if lp := c.p().Ints("lp"); len(lp) > 0 {
		lp0 = lp[0]
	}
	if rp := c.p().Ints("rp"); len(rp) > 0 {
		rp0 = rp[0]
	}
	if lp0 != 0 || rp0 != 0 {
		c.fail(CodeNonZero, "lp0,rp0", fmt.Sprintf("%d,%d", lp0, rp0), "0", "lp0 or rp0 != 0 (lp0 = %d, rp0 = %d)", lp0, rp0)
	}
	if c.p().Bool("circular") {
		c.fail(CodeMode, "circular", "1", "0", "circular padding")
	}
}

// scalarsPad: op_params[0..7] are lp0, rp0, lp1, rp1, ... (interleaved).
func scalarsPad(x *nodeCtx, b *binder) error {
	lp, rp := x.p().Ints("lp"), x.p().Ints("rp")
	for i := range 4 {
		var l, r int64
		if i < len(lp) {
			l = lp[i]
		}
		if i < len(rp) {
			r = rp[i]
		}
		b.v.SetInt(fmt.Sprintf("lp[%d]", i), l)
		b.v.SetInt(fmt.Sprintf("rp[%d]", i), r)
		b.op[2*i], b.op[2*i+1] = int32(l), int32(r)
	}
	return nil
}

// setView resolves ggml_set's view: nb1, nb2, nb3 and offset in bytes. A
// stride given as 0 in a case file means a's own contiguous stride
// (reference/case-format.md); ggml stores the resolved values.
func setView(x *nodeCtx) (nb [3]int64, offset int64) {
	a := x.src(0)
	cont := ops.ContiguousStrides(a.Type, a.Ne)
	for i, name := range []string{"nb1", "nb2", "nb3"} {
		nb[i] = x.p().Int(name)
		if nb[i] == 0 {
			nb[i] = int64(cont[i+1])
		}
	}
	return nb, x.p().Int("offset")
}

func setInplace(p ops.Params) bool { return !p.Has("inplace") || p.Bool("inplace") }

// checkSet: in place only; all f32 and contiguous; dst of src0's shape;
// src1.ne0 % 16 == 0; the view fits (its last element starts inside dst,
// as the crate tests it); nb1, nb2, nb3 and offset multiples of 64 (one
// cache line).
func checkSet(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	if !setInplace(c.p()) {
		c.fail(CodeMode, "inplace", "false", "true", "set is not in place (inplace = false; ggml-et runs only ggml_set_inplace)")
	}
	c.f32("src0", a, "src1", b, "dst", d)
	c.contiguous("dst", d)
	c.contiguous("src0", a)
	c.contiguous("src1", b)
	if a.Ne != d.Ne {
		c.failf("dst and src0 differ in shape (dst.ne = %s, src0.ne = %s)", fmtNe(d), fmtNe(a))
	}
	c.mod("src1.ne0", b.Ne[0], 16)
	nb, off := setView(c.nodeCtx)
	last := off
	strides := [4]int64{int64(d.Type.TypeSize()), nb[0], nb[1], nb[2]}
	for i := range ops.MaxDims {
		if b.Ne[i] > 0 {
			last += (b.Ne[i] - 1) * strides[i]
		}
	}
	if size := int64(d.NBytes()); last > size {
		c.failf("set view does not fit in dst (last element at byte %d, dst has %d bytes)", last, size)
	}
	for i, v := range []int64{nb[0], nb[1], nb[2], off} {
		c.mod([]string{"nb1", "nb2", "nb3", "offset"}[i], v, 64)
	}
}

// scalarsSet: nb1, nb2, nb3 and offset, from op_params[0..3] (ggml_set's
// order; op_params[4] is inplace).
func scalarsSet(x *nodeCtx, b *binder) error {
	nb, off := setView(x)
	vals := []int64{nb[0], nb[1], nb[2], off}
	for i, name := range []string{"nb1", "nb2", "nb3", "offset"} {
		if vals[i] < math.MinInt32 || vals[i] > math.MaxInt32 {
			return fmt.Errorf("set %s = %d does not fit ggml's int32 op_params", name, vals[i])
		}
		b.v.SetInt(name, vals[i])
		b.op[i] = int32(vals[i])
	}
	if setInplace(x.p()) {
		b.op[4] = 1
	}
	return nil
}
