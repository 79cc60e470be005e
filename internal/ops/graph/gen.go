package graph

import (
	"context"
	"math"

	"github.com/ainekko/et/internal/ops/parallel"

	"github.com/ainekko/et/internal/ops"
)

// The random inits are counter-based: SplitMix64's n-th draw is a pure
// function of the seed state and n, so any range of a leaf's values can
// be generated on its own, in parallel, and give the same bytes as one
// sequential pass. uniform and randint use draw i for value i; normal
// uses draws 2j and 2j+1 for values 2j (the cosine half of Box-Muller)
// and 2j+1 (the sine half).

const (
	splitmixGamma  = 0x9e3779b97f4a7c15
	splitmixGamma2 = (2 * splitmixGamma) & (1<<64 - 1) // two draws
)

func splitmix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit maps a draw to [0, 1).
func unit(z uint64) float64 { return float64(z>>11) * 0x1p-53 }

// boxMuller returns rad = sqrt(-2 ln u1), cos(2π u2) and sin(2π u2) for
// u1 in (0, 1] and u2 in [0, 1). It is bit-identical to
// math.Sqrt(-2*math.Log(u1)), math.Cos(2*math.Pi*u2) and
// math.Sin(2*math.Pi*u2) on amd64 (the algorithms of Go's log_amd64.s and
// sin.go, without their special cases, which these arguments never
// reach, and with one shared argument reduction), and it rounds every
// intermediate explicitly, so no platform fuses it into FMAs: the data of
// a case is the same on every architecture and GOAMD64 level.
func boxMuller(u1, u2 float64) (rad, c, s float64) {
	rad = math.Sqrt(float64(-2 * logUnit(u1)))
	c, s = sincos2Pi(u2)
	return
}

// logUnit is Go's amd64 math.Log for a normal positive x.
func logUnit(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		l1    = 6.666666666666735130e-01
		l2    = 3.999999999940941908e-01
		l3    = 2.857142874366239149e-01
		l4    = 2.222219843214978396e-01
		l5    = 1.818357216161805012e-01
		l6    = 1.531383769920937332e-01
		l7    = 1.479819860511658591e-01
	)
	// f1, k := math.Frexp(x); if f1 < math.Sqrt2/2 { f1 *= 2; k-- },
	// without branches (which the random data would mispredict).
	b := math.Float64bits(x)
	fb := b&(1<<52-1) | 0x3fe0000000000000 // f1 in [0.5, 1)
	lt := (fb - math.Float64bits(math.Sqrt2/2)) >> 63
	f1 := math.Float64frombits(fb + lt<<52)
	k := float64(int64(b>>52&0x7ff) - 0x3fe - int64(lt))
	f := f1 - 1
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * float64(l1+float64(s4*float64(l3+float64(s4*float64(l5+float64(s4*l7)))))))
	t2 := float64(s4 * float64(l2+float64(s4*float64(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}

// sincos2Pi is Go's math.Cos and math.Sin of 2π·u for u in [0, 1).
func sincos2Pi(u float64) (cos, sin float64) {
	const (
		pi4A = 7.85398125648498535156e-1
		pi4B = 3.77489470793079817668e-8
		pi4C = 2.69515142907905952645e-15
		s0   = 1.58962301576546568060e-10
		s1   = -2.50507477628578072866e-8
		s2   = 2.75573136213857245213e-6
		s3   = -1.98412698295895385996e-4
		s4   = 8.33333333332211858878e-3
		s5   = -1.66666666666666307295e-1
		c0   = -1.13585365213876817300e-11
		c1   = 2.08757008419747316778e-9
		c2   = -2.75573141792967388112e-7
		c3   = 2.48015872888517045348e-5
		c4   = -1.38888888888730564116e-3
		c5   = 4.16666666666665929218e-2
	)
	x := float64(2*math.Pi) * u
	j := uint64(float64(x * (4 / math.Pi)))
	j += j & 1 // map zeros to origin
	y := float64(j)
	z := ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C)
	zz := float64(z * z)
	pc := 1.0 - float64(0.5*zz) + float64(float64(zz*zz)*(float64(float64(float64(float64(float64(float64(float64(float64(float64(c0*zz)+c1)*zz)+c2)*zz)+c3)*zz)+c4)*zz)+c5))
	ps := z + float64(float64(z*zz)*(float64(float64(float64(float64(float64(float64(float64(float64(float64(s0*zz)+s1)*zz)+s2)*zz)+s3)*zz)+s4)*zz)+s5))
	// Quadrant q: odd quadrants swap the two polynomials; sin is negative
	// in quadrants 2 and 3, cos in 1 and 2. Selected without branches.
	q := j >> 1 & 3
	swap := -(q & 1)
	cb, sb := math.Float64bits(pc), math.Float64bits(ps)
	cos = math.Float64frombits((cb&^swap | sb&swap) ^ ((q>>1^q)&1)<<63)
	sin = math.Float64frombits((sb&^swap | cb&swap) ^ (q>>1)<<63)
	return
}

// normalCos and normalSin are the two values of one Box-Muller pair,
// with the association of the original sequential generator.
func normalCos(mean, std, rad, c float64) float64 {
	return mean + float64(float64(std*rad)*c)
}

func normalSin(mean, std, rad, s float64) float64 {
	return mean + float64(std*float64(rad*s))
}

// randomAccess reports whether values of init in can be generated from
// any index (everything but perm, whose shuffle is sequential, and
// hadamard, which the sequential generator computes).
func randomAccess(in Init) bool { return in.Func != "perm" && in.Func != "hadamard" }

// fillF32 writes values [i, i+len(dst)) of a random-access init, seeded
// with state s (the rng state before the first draw), as float32.
func fillF32(in Init, s uint64, i int64, dst []float32) { fillF32With(normalPairs, in, s, i, dst) }

// normalPairs is the normal init's kernel on this CPU: pairs of values a
// pass (normalKernels' widest), chosen once.
var normalPairs = normalKernels()[0]

// fillF32With is fillF32 with the normal init's vector kernel of pairs
// pairs a pass (normalKernels; 0: the scalar loop alone).
func fillF32With(pairs int, in Init, s uint64, i int64, dst []float32) {
	a := in.Args
	switch in.Func {
	case "zeros":
		clear(dst)
	case "ones":
		for k := range dst {
			dst[k] = 1
		}
	case "arange":
		step := 1.0
		if len(a) > 1 {
			step = a[1]
		}
		for k := range dst {
			dst[k] = float32(a[0] + float64(float64(i+int64(k))*step))
		}
	case "uniform":
		lo, w := a[0], a[1]-a[0]
		z := s + uint64(i)*splitmixGamma
		for k := range dst {
			z += splitmixGamma
			dst[k] = float32(lo + float64(w*unit(splitmix(z))))
		}
	case "randint":
		lo, n := int64(a[0]), uint64(int64(a[1])-int64(a[0]))
		z := s + uint64(i)*splitmixGamma
		for k := range dst {
			z += splitmixGamma
			dst[k] = float32(float64(lo + int64(splitmix(z)%n)))
		}
	case "normal":
		fillNormal(pairs, a[0], a[1], s, i, dst)
	default:
		panic("graph: init " + in.Func + " is not random-access")
	}
}

func fillNormal(pairs int, mean, std float64, s uint64, i int64, dst []float32) {
	k := 0
	if i&1 == 1 && len(dst) > 0 {
		// dst starts on the sine half of pair (i-1)/2.
		z := s + uint64(i-1)*splitmixGamma
		rad, _, sn := boxMuller(1-unit(splitmix(z+splitmixGamma)), unit(splitmix(z+splitmixGamma2)))
		dst[0] = float32(normalSin(mean, std, rad, sn))
		k = 1
	}
	z := s + uint64(i+int64(k))*splitmixGamma
	if v := fillNormalVec(pairs, mean, std, z, dst[k:]); v > 0 {
		k += v
		z += uint64(v) * splitmixGamma
	}
	for ; k+1 < len(dst); k += 2 {
		u1 := 1 - unit(splitmix(z+splitmixGamma))
		u2 := unit(splitmix(z + splitmixGamma2))
		z += splitmixGamma2
		rad, c, sn := boxMuller(u1, u2)
		dst[k] = float32(normalCos(mean, std, rad, c))
		dst[k+1] = float32(normalSin(mean, std, rad, sn))
	}
	if k < len(dst) {
		rad, c, _ := boxMuller(1-unit(splitmix(z+splitmixGamma)), unit(splitmix(z+splitmixGamma2)))
		dst[k] = float32(normalCos(mean, std, rad, c))
	}
}

// fillLeaf fills the contiguous leaf x from a random-access init, rows
// spread over parallel.Workers() goroutines. It stops early (leaving x
// partly filled) and returns ctx.Err() when ctx is done.
func fillLeaf(ctx context.Context, x *ops.Tensor, in Init, s uint64) error {
	ne0 := x.Ne[0]
	rows := int(x.NRows())
	rowBytes := int(x.Nb[1])
	// Chunks of at least ~64K values, so small leaves stay on one goroutine.
	grain := max(1, (1<<16)/int(max(ne0, 1)))
	done := ctx.Done()
	parallel.For(rows, grain, func(lo, hi int) {
		row := make([]float32, ne0)
		for r := lo; r < hi; r++ {
			if done != nil {
				select {
				case <-done:
					return
				default:
				}
			}
			clearUpper()
			fillF32(in, s, int64(r)*ne0, row)
			ops.QuantizeRow(x.Type, row, x.Buf[r*rowBytes:(r+1)*rowBytes])
		}
	})
	return ctx.Err()
}
