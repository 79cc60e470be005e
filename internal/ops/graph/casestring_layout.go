package graph

import (
	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of the layout ops ggml-et dispatches (concat, repeat, pad, set).
// Keys, defaults and graphs follow the test-backend-ops test class of
// the same name (test_<op>, ggml d99724f2); where it gives no usable
// default, the choice is et's and the comment says so.

// CONCAT(type, ne_a=[4] (10,5,5,5), ne_b_d (5), dim (2), v (0)): b is
// ne_a with ne_b_d in dimension dim; as test_concat does, v bit 0 views a
// out of a [2·ne0, 4·ne1, 3·ne2, ne3] tensor (else bit 2 out of [ne0,
// ne1, 2·ne2, 4·ne3]), bit 1 views b out of [3·ne0, 2·ne1, 4·ne2, ne3]
// (else bit 3 out of [ne0, ne1, 3·ne2, 2·ne3]).
func buildConcat(b *csBuilder) {
	t := b.typ("type", ops.F32)
	neA := b.shape("ne_a", 10, 5, 5, 5)
	nbd := b.pos("ne_b_d", 5)
	dim := b.int("dim", 2)
	v := b.int("v", 0)
	if b.err != nil {
		return
	}
	if dim < 0 || dim > 3 {
		b.fail("dim = %d, want 0 to 3", dim)
		return
	}
	if v < 0 || v > 15 {
		b.fail("v = %d, want 0 to 15 (bits 0 and 2: view a, bits 1 and 3: view b)", v)
		return
	}
	neB := append([]int64(nil), neA...)
	neB[dim] = nbd
	input := func(name string, ne []int64, f *[4]int64) string {
		if f == nil {
			return b.leaf(name, t, ne, defaultRange)
		}
		full := []int64{ne[0] * f[0], ne[1] * f[1], ne[2] * f[2], ne[3] * f[3]}
		b.leaf(name, t, full, defaultRange)
		return b.viewOf(name, t, full, ne)
	}
	pick := func(first, second int64, f1, f2 [4]int64) *[4]int64 {
		switch {
		case v&first != 0:
			return &f1
		case v&second != 0:
			return &f2
		}
		return nil
	}
	a := input("a", neA, pick(1, 4, [4]int64{2, 4, 3, 1}, [4]int64{1, 1, 2, 4}))
	bb := input("b", neB, pick(2, 8, [4]int64{3, 2, 4, 1}, [4]int64{1, 1, 3, 2}))
	b.node("out", ops.OpConcat, map[string]any{"dim": dim}, a, bb)
}

// REPEAT(type, ne=[4] (10,5,4,3), nr=[4] (2,2,2,2)): a of shape ne tiled
// to ne·nr.
func buildRepeat(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	nr := b.shape("nr", 2, 2, 2, 2)
	if b.err != nil {
		return
	}
	target := make([]int64, 4)
	for i := range target {
		target[i] = ne[i] * nr[i]
	}
	b.node("out", ops.OpRepeat, map[string]any{"ne": target}, b.leaf("a", t, ne, defaultRange))
}

// padExtKeys are test_pad_ext's padding keys, in op_params order.
var padExtKeys = []string{"lp0", "rp0", "lp1", "rp1", "lp2", "rp2", "lp3", "rp3"}

// PAD is two test classes. test_pad: PAD(type, ne_a=[4] (512,512,1,1),
// pad_0 (1), pad_1 (1), circular (0)) pads pad_0 and pad_1 zeros at the
// end of dims 0 and 1. test_pad_ext (chosen when any of lp0..rp3 or tfrm
// is given): PAD(type, ne_a=[4] (512,512,3,1), lp0, rp0, ..., lp3, rp3
// (1 each), tfrm (0), circular (0)) pads before (lp) and after (rp) each
// dim; tfrm 1 views a as ((ne+1)/2) in each dim, tfrm 2 permutes it with
// axes (2, 1, 0, 3). circular=1 wraps around instead of padding zeros
// (ggml_pad_circular, ggml_pad_ext_circular).
func buildPad(b *csBuilder) {
	ext := false
	for _, k := range append([]string{"tfrm"}, padExtKeys...) {
		if _, ok := b.kv[k]; ok {
			ext = true
		}
	}
	t := b.typ("type", ops.F32)
	circular := b.bool("circular")
	lp := []int64{0, 0, 0, 0}
	rp := []int64{0, 0, 0, 0}
	var ne []int64
	tfrm := int64(0)
	if ext {
		ne = b.shape("ne_a", 512, 512, 3, 1)
		for i, k := range padExtKeys {
			v := b.int(k, 1)
			if v < 0 {
				b.fail("%s: want a non-negative padding, got %d", k, v)
			}
			if i%2 == 0 {
				lp[i/2] = v
			} else {
				rp[i/2] = v
			}
		}
		tfrm = b.int("tfrm", 0)
		for _, k := range []string{"pad_0", "pad_1"} {
			if _, ok := b.kv[k]; ok {
				b.fail("%s (test_pad) cannot be mixed with lp0..rp3 and tfrm (test_pad_ext)", k)
			}
		}
	} else {
		ne = b.shape("ne_a", 512, 512, 1, 1)
		rp[0] = b.int("pad_0", 1)
		rp[1] = b.int("pad_1", 1)
		if rp[0] < 0 || rp[1] < 0 {
			b.fail("pad_0 and pad_1 must not be negative")
		}
	}
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	switch tfrm {
	case 0:
	case 1:
		half := make([]int64, 4)
		for i := range half {
			half[i] = (ne[i] + 1) / 2
		}
		x = b.viewOf(x, t, ne, half)
	case 2:
		x = b.node("a_perm", ops.OpPermute, map[string]any{"axes": []int64{2, 1, 0, 3}}, x)
	default:
		b.fail("tfrm = %d, want 0 (none), 1 (view) or 2 (permute)", tfrm)
		return
	}
	b.node("out", ops.OpPad, map[string]any{"lp": lp, "rp": rp, "circular": circular}, x)
}

// SET(type_src (f32), type_dst (f32), ne=[4] (6,5,4,3), dim (1), inplace
// (0)): dst is ne with dims below dim doubled; src (ne) is written at the
// centre of those dims with src's own contiguous strides, as test_set
// does. inplace selects ggml_set_inplace, the only form ggml-et runs.
func buildSet(b *csBuilder) {
	ts := b.typ("type_src", ops.F32)
	td := b.typ("type_dst", ops.F32)
	ne := b.shape("ne", 6, 5, 4, 3)
	dim := b.int("dim", 1)
	inplace := b.bool("inplace")
	if b.err != nil {
		return
	}
	if dim < 0 || dim > 4 {
		b.fail("dim = %d, want 0 to 4", dim)
		return
	}
	neDst := append([]int64(nil), ne...)
	for i := int64(0); i < dim; i++ {
		neDst[i] *= 2
	}
	nbDst := contiguousNb(td, neDst)
	off := uint64(0)
	for i := int64(0); i < dim; i++ {
		off += uint64((neDst[i]-ne[i])/2) * nbDst[i]
	}
	nbSrc := contiguousNb(ts, ne)
	dst := b.leaf("dst", td, neDst, defaultRange)
	src := b.leaf("src", ts, ne, defaultRange)
	b.node("out", ops.OpSet, map[string]any{
		"nb1": int64(nbSrc[1]), "nb2": int64(nbSrc[2]), "nb3": int64(nbSrc[3]),
		"offset": int64(off), "inplace": inplace,
	}, dst, src)
}
