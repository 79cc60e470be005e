package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// ropeYarnCorrDims is ggml_rope_yarn_corr_dims.
func ropeYarnCorrDims(nDims, nCtxOrig int64, freqBase, betaFast, betaSlow float32) [2]float32 {
	corrDim := func(nRot float32) float32 {
		return float32(nDims) * cpu.Logf32(float32(nCtxOrig)/(nRot*2*math.Pi)) / (2 * cpu.Logf32(freqBase))
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
		mscale *= 1 + float32(0.1*cpu.Logf32(1/freqScale))
	}
	// math.Sincos gives math.Sin's and math.Cos's results (the same
	// reduction and polynomials, TestSincosIsSinCos) in one call.
	sn, cs := math.Sincos(float64(theta))
	return float32(cs) * mscale, float32(sn) * mscale
}

func (ks *Kernels) refRope(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x, pos := srcs[0], srcs[1]
	var ff *ops.Tensor
	if len(srcs) > 2 {
		ff = srcs[2]
	}
	nDims := p.Int("n_dims")
	nOffs := p.Int("n_offs")
	mode := p.Str("mode")
	freqBase, freqScale := p.F32("freq_base"), p.F32("freq_scale")
	extFactor, attnFactor := p.F32("ext_factor"), p.F32("attn_factor")
	var corr [2]float32 // ropeYarn reads it only with ext_factor != 0
	if extFactor != 0 {
		corr = ropeYarnCorrDims(nDims, p.Int("n_ctx_orig"), freqBase, p.F32("beta_fast"), p.F32("beta_slow"))
	}
	thetaScale := cpu.Powf32(freqBase, -2/float32(nDims))
	var factors []float32
	if ff != nil {
		factors = make([]float32, ff.Ne[0])
		ff.Row(0, 0, 0, factors)
	}
	sections := p.Ints("sections")
	ne := x.Ne
	// The cache covers the rotated pairs: n_dims values, all of ne0 for
	// vision.
	nCache := nDims
	if mode == "vision" {
		nCache = ne[0]
	}
	if (mode == "normal" || mode == "neox") && cpu.DenseF32Rows(x, dst) && dst.Ne == x.Ne {
		ropeF32(&ropeF32Job{ks: ks, dst: dst, x: x, pos: pos, neox: mode == "neox", nDims: nDims, nOffs: nOffs, factors: factors,
			thetaScale: thetaScale, freqScale: freqScale, corr: corr, extFactor: extFactor, attnFactor: attnFactor})
		return nil
	}
	cpu.RefParallel(ne[2]*ne[3], ne[0]*ne[1], func(lo, hi int64) {
		cache := make([]float32, nCache)
		row := make([]float32, ne[0])
		out := make([]float32, ne[0])
		for g := lo; g < hi; g++ {
			i2, i3 := g%ne[2], g/ne[2]
			if ops.RopeMulti(mode) {
				n2 := ne[2]
				ropeMultiCache(cache, [4]float32{
					float32(pos.Int(i2, 0, 0, 0)), float32(pos.Int(i2+n2, 0, 0, 0)),
					float32(pos.Int(i2+2*n2, 0, 0, 0)), float32(pos.Int(i2+3*n2, 0, 0, 0)),
				}, sections, mode, factors, thetaScale, freqScale, corr, extFactor, attnFactor)
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
				r, o := row[nOffs:], out[nOffs:]
				// rotate pairs (ic, ic+off) with cache[i0], ic = i0/2
				// (i0 for normal).
				rot := func(n, off int64, normal bool) {
					for i0 := int64(0); i0 < n; i0 += 2 {
						c, s := cache[i0], cache[i0+1]
						ic := i0 / 2
						if normal {
							ic = i0
						}
						x0, x1 := r[ic], r[ic+off]
						o[ic] = float32(x0*c) - float32(x1*s)
						o[ic+off] = float32(x0*s) + float32(x1*c)
					}
				}
				switch mode {
				case "normal":
					rot(nDims, 1, true)
				case "vision":
					rot(ne[0], nDims, false)
				default:
					rot(nDims, nDims/2, false)
				}
				dst.SetRow(i1, i2, i3, out)
			}
		}
	})
	return nil
}

// ropeF32 is refRope's normal and neox modes on f32 tensors with dense
// rows: the cos/sin of each token's position are computed once (as the
// generic path's cache) into cosines and sines (expanded to pairs for
// normal mode, see ropeExpand), then every head's row is rotated from x's
// memory into dst's (which may be x's) by ropeNeoxRow or ropeNormalRow;
// the dimensions outside the rotated window are copied. A launch that
// refParallel runs in one chunk runs on the calling goroutine with its
// cos/sin on the stack: no allocation.
func ropeF32(j *ropeF32Job) {
	ne := j.x.Ne
	n, cost := ne[2]*ne[3], ne[0]*ne[1]
	if cpu.RefInline(n, cost) {
		j.tokens(0, n)
		return
	}
	jp := *j // the workers' copy: only this path allocates
	cpu.RefParallel(n, cost, jp.tokens)
}

// ropeF32Job is ropeF32's operands.
type ropeF32Job struct {
	ks                    *Kernels
	dst, x, pos           *ops.Tensor
	neox                  bool
	nDims, nOffs          int64
	factors               []float32
	thetaScale, freqScale float32
	corr                  [2]float32
	extFactor, attnFactor float32
}

// ropeCSMax is the largest n_dims/2 whose cos/sin scratch ropeF32Job.tokens
// keeps on the stack.
const ropeCSMax = 128

// tokens rotates the token groups g in [lo, hi) (g = i2 + ne2·i3).
func (j *ropeF32Job) tokens(lo, hi int64) {
	ks := j.ks
	x, dst, ne := j.x, j.dst, j.x.Ne
	if ne[1] == 0 {
		return
	}
	nDims, nOffs := j.nDims, j.nOffs
	h := nDims / 2
	var buf [7 * ropeCSMax]float32
	cs := buf[:]
	if h > ropeCSMax {
		cs = make([]float32, 7*h)
	}
	c, s, th := cs[:h], cs[h:2*h], cs[2*h:3*h]
	cc, ss := cs[3*h:5*h], cs[5*h:7*h] // normal mode: ropeExpand's layout
	for g := lo; g < hi; g++ {
		i2, i3 := g%ne[2], g/ne[2]
		j.cosSin(c, s, th, float32(j.pos.Int(i2, 0, 0, 0)))
		if !j.neox {
			cpu.RopeExpand(cc, ss, c, s)
		}
		xt, xs := cpu.F32Rows(x, i2, i3)
		dt, ds := cpu.F32Rows(dst, i2, i3)
		copyRest := (nOffs > 0 || nOffs+nDims < ne[0]) && &xt[0] != &dt[0]
		for i1 := int64(0); i1 < ne[1]; i1++ {
			xr, or := xt[i1*xs:i1*xs+ne[0]], dt[i1*ds:i1*ds+ne[0]]
			if copyRest {
				copy(or[:nOffs], xr[:nOffs])
				copy(or[nOffs+nDims:], xr[nOffs+nDims:])
			}
			xw, ow := xr[nOffs:nOffs+nDims], or[nOffs:nOffs+nDims]
			if j.neox {
				ks.RopeNeoxRow(ow, xw, c, s)
			} else {
				ks.RopeNormalRow(ow, xw, cc, ss)
			}
		}
	}
}

// cosSin sets c[i], s[i] to ropeYarn's cos and sin of pair i at position
// p (th is scratch): without YaRN (ext_factor 0) sincosRow computes the
// angles freq_scale·theta_i all at once, else (or when it declines) each
// pair goes through ropeYarn.
func (j *ropeF32Job) cosSin(c, s, th []float32, p float32) {
	ks := j.ks
	h := int64(len(c))
	factors, thetaScale, freqScale := j.factors, j.thetaScale, j.freqScale
	if j.extFactor == 0 {
		// ropeYarn without the YaRN ramp: the angle is freq_scale·theta,
		// cos and sin times attn_factor. Without freq_factors theta/1 is
		// theta (exact), so the division is left out.
		theta := p
		if factors == nil {
			for i := range th {
				th[i] = freqScale * theta
				theta *= thetaScale
			}
		} else {
			factors = factors[:h]
			for i := range th {
				th[i] = freqScale * (theta / factors[i])
				theta *= thetaScale
			}
		}
		if ks.SincosRow(c, s, th, j.attnFactor) {
			return
		}
	}
	theta := p
	for i := int64(0); i < h; i++ {
		f := float32(1)
		if factors != nil {
			f = factors[i]
		}
		c[i], s[i] = ropeYarn(theta/f, freqScale, j.corr, 2*i, j.extFactor, j.attnFactor)
		theta *= thetaScale
	}
}

// ropeMultiCache is ggml_mrope_cache_init: cos/sin per pair of cache, each
// pair taking the theta of the position its section picks (mode mrope,
// vision or imrope); vision restarts each section's theta at its base.
func ropeMultiCache(cache []float32, p [4]float32, sections []int64, mode string, factors []float32,
	thetaScale, freqScale float32, corr [2]float32, extFactor, attnFactor float32) {
	theta := p // t, h, w, e, each multiplied by thetaScale per pair
	sectDims := sections[0] + sections[1] + sections[2] + sections[3]
	secW := sections[0] + sections[1]
	secE := secW + sections[2]
	for i0 := int64(0); i0 < int64(len(cache)); i0 += 2 {
		f := float32(1)
		if factors != nil {
			f = factors[i0/2]
		}
		sector := (i0 / 2) % sectDims
		if mode == "vision" {
			switch sector {
			case 0:
				theta[0] = p[0]
			case sections[0]:
				theta[1] = p[1]
			case secW:
				theta[2] = p[2]
			case secE:
				theta[3] = p[3]
			}
		}
		th := theta[0]
		if mode == "imrope" {
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
		} else {
			switch {
			case sector >= sections[0] && sector < secW:
				th = theta[1]
			case sector >= secW && sector < secW+sections[2]:
				th = theta[2]
			case sector >= secW+sections[2]:
				th = theta[3]
			}
		}
		cache[i0], cache[i0+1] = ropeYarn(th/f, freqScale, corr, i0, extFactor, attnFactor)
		for k := range theta {
			theta[k] *= thetaScale
		}
	}
}
