package ops

import (
	"fmt"
	"math"
)

// rope: rotary position embedding of x [ne0 = head dim, ne1 = heads,
// ne2 = tokens, ne3] with positions pos (i32), as ggml's CPU computes it
// (float32 throughout):
//
//	theta_scale = freq_base^(-2/n_dims)
//	theta_i     = p · theta_scale^i for pair i, built by repeated
//	              multiplication (theta *= theta_scale), divided by
//	              freq_factors[i] when given
//	YaRN:       theta = freq_scale·theta_e mixed with theta_e by
//	            ramp(i)·ext_factor; mscale = attn_factor (·(1 + 0.1·ln(1/freq_scale))
//	            when ext_factor != 0); cos, sin = cos(theta)·mscale, sin(theta)·mscale
//
// normal mode rotates the pairs (x[2i], x[2i+1]); neox and imrope rotate
// (x[i], x[i + n_dims/2]). Dimensions from n_dims to ne0 are copied.
// imrope (mode 40, Qwen3-VL) takes four positions per token (pos has
// 4·ne2 entries: t, h, w, e) and picks one per pair by
// sector = i mod Σsections: h if sector%3 == 1 and sector < 3·sections[1],
// w if sector%3 == 2 and sector < 3·sections[2], t if sector%3 == 0 and
// sector < 3·sections[0], otherwise e.

// RopeMode values are ggml's GGML_ROPE_TYPE_* numbers.
const (
	RopeNormal = 0
	RopeNeox   = 2
	RopeIMRope = 40
)

// RopeModeValue maps a case-file mode name to ggml's number.
func RopeModeValue(name string) (int32, error) {
	switch name {
	case "normal":
		return RopeNormal, nil
	case "neox":
		return RopeNeox, nil
	case "imrope":
		return RopeIMRope, nil
	}
	return 0, fmt.Errorf("unknown rope mode %q (want normal, neox or imrope)", name)
}

func inferRope(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x, pos := srcs[0], srcs[1]
	if err := wantTypes(OpRope, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	if err := wantTypes(OpRope, "pos", pos.Type, I32); err != nil {
		return 0, x.Ne, err
	}
	nDims := p.Int("n_dims")
	if nDims <= 0 || nDims%2 != 0 || nDims > x.Ne[0] {
		return 0, x.Ne, &ParamError{Op: OpRope, Param: "n_dims", Msg: fmt.Sprintf("%d, want an even number in 2..ne0 = %d", nDims, x.Ne[0])}
	}
	mode := p.Str("mode")
	if _, err := RopeModeValue(mode); err != nil {
		return 0, x.Ne, &ParamError{Op: OpRope, Param: "mode", Msg: err.Error()}
	}
	if pos.Ne[1] != 1 || pos.Ne[2] != 1 || pos.Ne[3] != 1 {
		return 0, x.Ne, shapeErr(OpRope, "pos is %s, want a vector", pos.ShapeString())
	}
	if mode == "imrope" {
		if pos.Ne[0] < 4*x.Ne[2] {
			return 0, x.Ne, shapeErr(OpRope, "imrope: pos.ne0 = %d, want 4*x.ne2 = %d (t, h, w, e positions per token)", pos.Ne[0], 4*x.Ne[2])
		}
		s := p.Ints("sections")
		if len(s) != 4 {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: fmt.Sprintf("has %d entries, want 4", len(s))}
		}
		sum := int64(0)
		for _, v := range s {
			if v < 0 {
				return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: fmt.Sprintf("negative section %d", v)}
			}
			sum += v
		}
		if sum == 0 {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: "imrope needs sections that are not all zero"}
		}
	} else if pos.Ne[0] != x.Ne[2] {
		return 0, x.Ne, shapeErr(OpRope, "pos.ne0 = %d != x.ne2 = %d (one position per token)", pos.Ne[0], x.Ne[2])
	}
	if len(srcs) > 2 {
		ff := srcs[2]
		if err := wantTypes(OpRope, "freq_factors", ff.Type, F32); err != nil {
			return 0, x.Ne, err
		}
		if ff.Ne[0] < nDims/2 {
			return 0, x.Ne, shapeErr(OpRope, "freq_factors.ne0 = %d < n_dims/2 = %d", ff.Ne[0], nDims/2)
		}
	}
	return x.Type, x.Ne, nil
}

// ropeYarnCorrDims is ggml_rope_yarn_corr_dims.
func ropeYarnCorrDims(nDims, nCtxOrig int64, freqBase, betaFast, betaSlow float32) [2]float32 {
	corrDim := func(nRot float32) float32 {
		return float32(nDims) * logf32(float32(nCtxOrig)/(nRot*2*math.Pi)) / (2 * logf32(freqBase))
	}
	start := float32(math.Floor(float64(corrDim(betaFast))))
	end := float32(math.Ceil(float64(corrDim(betaSlow))))
	var d [2]float32
	// MAX(0, start) and MIN(n_dims - 1, end), as the C macros compare.
	d[0] = start
	if 0 > start {
		d[0] = 0
	}
	d[1] = end
	if float32(nDims-1) < end {
		d[1] = float32(nDims - 1)
	}
	return d
}

// ropeYarn is ggml's rope_yarn: cos and sin of pair i0 (even index) for
// the unscaled angle thetaExtrap.
func ropeYarn(thetaExtrap, freqScale float32, corr [2]float32, i0 int64, extFactor, mscale float32) (c, s float32) {
	thetaInterp := freqScale * thetaExtrap
	theta := thetaInterp
	if extFactor != 0 {
		y := (float32(i0/2) - corr[0]) / max(0.001, corr[1]-corr[0])
		ramp := 1 - min(1, max(0, y))
		rampMix := ramp * extFactor
		theta = float32(thetaInterp*(1-rampMix)) + float32(thetaExtrap*rampMix)
		mscale *= 1 + float32(0.1*logf32(1/freqScale))
	}
	return float32(math.Cos(float64(theta))) * mscale, float32(math.Sin(float64(theta))) * mscale
}

func refRope(dst *Tensor, srcs []*Tensor, p Params) error {
	x, pos := srcs[0], srcs[1]
	var ff *Tensor
	if len(srcs) > 2 {
		ff = srcs[2]
	}
	nDims := p.Int("n_dims")
	mode := p.Str("mode")
	freqBase, freqScale := p.F32("freq_base"), p.F32("freq_scale")
	extFactor, attnFactor := p.F32("ext_factor"), p.F32("attn_factor")
	corr := ropeYarnCorrDims(nDims, p.Int("n_ctx_orig"), freqBase, p.F32("beta_fast"), p.F32("beta_slow"))
	thetaScale := powf32(freqBase, -2/float32(nDims))
	var factors []float32
	if ff != nil {
		factors = make([]float32, ff.Ne[0])
		ff.Row(0, 0, 0, factors)
	}
	sections := p.Ints("sections")
	ne := x.Ne
	// One cos/sin cache per token (i2, i3), shared by all heads.
	refParallel(ne[2]*ne[3], ne[0]*ne[1], func(lo, hi int64) {
		cache := make([]float32, nDims)
		row := make([]float32, ne[0])
		out := make([]float32, ne[0])
		for g := lo; g < hi; g++ {
			i2, i3 := g%ne[2], g/ne[2]
			if mode == "imrope" {
				n2 := ne[2]
				ropeIMRopeCache(cache, [4]float32{
					float32(pos.Int(i2, 0, 0, 0)), float32(pos.Int(i2+n2, 0, 0, 0)),
					float32(pos.Int(i2+2*n2, 0, 0, 0)), float32(pos.Int(i2+3*n2, 0, 0, 0)),
				}, sections, factors, thetaScale, freqScale, corr, extFactor, attnFactor)
			} else {
				theta := float32(pos.Int(i2, 0, 0, 0))
				for i0 := int64(0); i0 < nDims; i0 += 2 {
					f := float32(1)
					if factors != nil {
						f = factors[i0/2]
					}
					cache[i0], cache[i0+1] = ropeYarn(theta/f, freqScale, corr, i0, extFactor, attnFactor)
					theta *= thetaScale
				}
			}
			for i1 := int64(0); i1 < ne[1]; i1++ {
				x.Row(i1, i2, i3, row)
				copy(out, row)
				if mode == "normal" {
					for i0 := int64(0); i0 < nDims; i0 += 2 {
						c, s := cache[i0], cache[i0+1]
						x0, x1 := row[i0], row[i0+1]
						out[i0] = float32(x0*c) - float32(x1*s)
						out[i0+1] = float32(x0*s) + float32(x1*c)
					}
				} else {
					half := nDims / 2
					for i0 := int64(0); i0 < nDims; i0 += 2 {
						c, s := cache[i0], cache[i0+1]
						ic := i0 / 2
						x0, x1 := row[ic], row[ic+half]
						out[ic] = float32(x0*c) - float32(x1*s)
						out[ic+half] = float32(x0*s) + float32(x1*c)
					}
				}
				dst.SetRow(i1, i2, i3, out)
			}
		}
	})
	return nil
}

// ropeIMRopeCache fills cache with the interleaved-mrope cos/sin pairs for
// the positions p = (t, h, w, e) of one token.
func ropeIMRopeCache(cache []float32, p [4]float32, sections []int64, factors []float32,
	thetaScale, freqScale float32, corr [2]float32, extFactor, attnFactor float32) {
	theta := p // t, h, w, e, each multiplied by thetaScale per pair
	sectDims := sections[0] + sections[1] + sections[2] + sections[3]
	for i0 := int64(0); i0 < int64(len(cache)); i0 += 2 {
		f := float32(1)
		if factors != nil {
			f = factors[i0/2]
		}
		sector := (i0 / 2) % sectDims
		var th float32
		switch {
		case sector%3 == 1 && sector < 3*sections[1]:
			th = theta[1]
		case sector%3 == 2 && sector < 3*sections[2]:
			th = theta[2]
		case sector%3 == 0 && sector < 3*sections[0]:
			th = theta[0]
		default:
			th = theta[3]
		}
		cache[i0], cache[i0+1] = ropeYarn(th/f, freqScale, corr, i0, extFactor, attnFactor)
		for k := range theta {
			theta[k] *= thetaScale
		}
	}
}
