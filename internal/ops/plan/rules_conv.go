package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// convRules are the rows of im2col and conv_2d (reference
// ggml-et-backend.md §1.2).
var convRules = map[ops.Op]opRule{
	"im2col":  {check: checkIm2col, kernel: fixed("im2col"), fields: []string{"src0", "src1"}, scalars: scalarsIm2col},
	"conv_2d": {check: checkConv2D, kernel: fixed("conv_2d_f32_me"), fields: []string{"src0", "src1"}, scalars: scalarsConv2D},
}

// checkIm2col: (dst f32 and data f32) or (dst f16 and data f16/f32); dst
// and data contiguous with element-sized nb0. The kernel (src0) only
// supplies its shape.
func checkIm2col(c *checker) {
	data, d := c.src(1), c.dst()
	switch d.Type {
	case ops.F32:
		c.typeIn("src1", data, ops.F32)
	case ops.F16:
		c.typeIn("src1", data, ops.F16, ops.F32)
	default:
		c.fail(CodeType, "dst", d.Type.String(), "f32,f16", "dst type %s not in {f32, f16}", d.Type)
	}
	c.contiguous("dst", d)
	c.contiguous("src1", data)
	c.nb0Elem("dst", d)
	c.nb0Elem("src1", data)
}

// convOpParams are ggml's op_params of IM2COL and CONV_2D: s0, s1, p0,
// p1, d0, d1 (then is_2d for IM2COL).
func convOpParams(x *nodeCtx, b *binder) {
	for i, name := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
		b.op[i] = int32(x.p().Int(name))
	}
}

// scalarsIm2col: no trailing scalars; the kernel reads s0, s1, p0, p1,
// d0, d1, is_2d from dst.op_params[0..6].
func scalarsIm2col(x *nodeCtx, b *binder) error {
	convOpParams(x, b)
	if !x.p().Has("is_2d") || x.p().Bool("is_2d") {
		b.op[6] = 1
	}
	return nil
}

// scalarsConv2D: no trailing scalars; conv_2d_f32_me reads its stride and
// padding from dst.op_params (ggml_conv_2d_direct's order).
func scalarsConv2D(x *nodeCtx, b *binder) error {
	convOpParams(x, b)
	return nil
}

// The L2-scratchpad budget model of conv_2d_f32_me's supports_op.
const (
	conv2dL2Budget   = 1500 * 1024          // bytes of L2 scratchpad the kernel plans with
	conv2dScratch    = 32 * 2 * 16 * 16 * 4 // per-hart partial tiles: 32 minions x 2 tiles x 1 KiB
	conv2dTilesPerHW = 2                    // MAX_TILES_PER_HART
)

// conv2dBudget is the kernel's sizing: with K_TILES = Cin/16 tiles of
// per-tile bytes, one buffer when all fit in the budget, otherwise double
// buffering with the largest chunk of tiles (dividing K_TILES) whose two
// buffers fit. It returns the chunk count and, when more than one chunk
// is needed, whether the output tiles fit the workers.
func conv2dBudget(kw, kh, cin, cout, h, p1, ow, oh int64) (chunks, tiles, maxTiles int64) {
	owPad := (ow + 15) &^ 15
	needStage := ow%16 != 0
	var stage int64
	if needStage {
		stage = cout * oh * owPad * 4
	}
	budget := int64(conv2dL2Budget) - stage - conv2dScratch
	perKT := kh*kw*cout*16*4 + kw*16*(h+2*p1)*owPad*4
	kTiles := cin / 16
	chunks = 1
	if kTiles*perKT > budget {
		chunk := kTiles
		for chunk > 1 && 2*chunk*perKT > budget {
			chunk--
		}
		for chunk > 1 && kTiles%chunk != 0 {
			chunk--
		}
		chunks = kTiles / max(chunk, 1)
	}
	workers := int64(1024)
	if needStage {
		workers = 32
	}
	return chunks, oh * ((ow + 15) / 16) * (cout / 16), workers * conv2dTilesPerHW
}

// checkConv2D: all f32 and contiguous; s0, s1 >= 1; d0 == d1 == 1;
// Cin % 16 == 0; Cout % 16 == 0; N == 1; OW, OH > 0; then the L2
// budget model (only once the rest holds, as the crate breaks out early).
func checkConv2D(c *checker) {
	flt, in, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", flt, "src1", in, "dst", d)
	c.contiguous("dst", d)
	c.contiguous("src0", flt)
	c.contiguous("src1", in)
	p := c.p()
	for _, s := range []string{"s0", "s1"} {
		if v := p.Int(s); v < 1 {
			c.failf("%s < 1 (%s = %d)", s, s, v)
		}
	}
	if d0, d1 := p.Int("d0"), p.Int("d1"); d0 != 1 || d1 != 1 {
		c.fail(CodeDilation, "d0,d1", fmt.Sprintf("%d,%d", d0, d1), "1,1", "dilation != 1 (d0 = %d, d1 = %d)", d0, d1)
	}
	kw, kh, cin, cout := flt.Ne[0], flt.Ne[1], flt.Ne[2], flt.Ne[3]
	c.mod("Cin", cin, 16)
	c.mod("Cout", cout, 16)
	if in.Ne[3] != 1 {
		c.fail(CodeBatch, "N", fmt.Sprint(in.Ne[3]), "1", "N != 1 (N = %d)", in.Ne[3])
	}
	ow, oh := d.Ne[0], d.Ne[1]
	if ow <= 0 || oh <= 0 {
		c.failf("OW or OH <= 0 (OW = %d, OH = %d)", ow, oh)
	}
	if len(c.reasons) > 0 {
		return
	}
	chunks, tiles, maxTiles := conv2dBudget(kw, kh, cin, cout, in.Ne[1], p.Int("p1"), ow, oh)
	if chunks > 1 && tiles > maxTiles {
		c.fail(CodeBudget, "output tiles", fmt.Sprint(tiles), fmt.Sprint(maxTiles), "L2 scratchpad budget: %d K-chunks and OH*ceil(OW/16)*Cout/16 = %d output tiles > %d", chunks, tiles, maxTiles)
	}
}
