//go:build goexperiment.simd && amd64

package graph

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// The vector forms of fillNormal's main loop (GOEXPERIMENT=simd builds;
// the CPU is checked once at start-up): eight Box-Muller pairs per pass
// with AVX-512, four with AVX2, the same IEEE operations in the same
// order as the scalar kernels (draws, unit, logUnit, sincos2Pi, normalCos
// and normalSin, each operation exactly rounded, no FMA), so the values
// are bit-identical to the scalar path (TestFillNormalMatchesGenerator
// runs every kernel the CPU has). AVX2 has no 64-bit multiply and no
// conversions between 64-bit integers and float64: the kernel builds
// them from 32x32-bit multiplies and exact exponent-bias tricks.

// normalKernels lists the kernels this CPU runs, widest first, ending
// with 0 (the scalar code); tests run each.
func normalKernels() []int {
	var k []int
	if archsimd.X86.AVX512() {
		k = append(k, 8)
	}
	if archsimd.X86.AVX2() {
		k = append(k, 4)
	}
	return append(k, 0)
}

// fillNormalVec writes the first values of dst (a multiple of 16 with
// AVX-512, of 8 with AVX2), which starts on a pair boundary whose rng
// state (before its first draw) is z, and returns how many it wrote: 0
// without a vector kernel. pairs picks the kernel: 8 (AVX-512), 4 (AVX2)
// or 0 (none: the scalar loop).
func fillNormalVec(pairs int, mean, std float64, z uint64, dst []float32) int {
	switch pairs {
	case 8:
		return fillNormal512(mean, std, z, dst)
	case 4:
		return fillNormal256(mean, std, z, dst)
	}
	return 0
}

// fillNormal512 is the AVX-512 kernel: eight pairs per pass, the first
// len(dst) &^ 15 values.
func fillNormal512(mean, std float64, z uint64, dst []float32) int {
	n := len(dst) &^ 15
	if n == 0 {
		return 0
	}
	const g = splitmixGamma
	var off [8]uint64
	for p := range off {
		off[p] = uint64(2*p+1) * uint64(g)
	}
	perm := [16]uint32{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15}
	b64 := archsimd.BroadcastUint64x8
	f64 := archsimd.BroadcastFloat64x8
	z1 := b64(z).Add(archsimd.LoadUint64x8(&off))
	gv := b64(g)
	step := b64((16 * g) & (1<<64 - 1))
	permv := archsimd.LoadUint32x16(&perm)
	var (
		m1, m2           = b64(0xbf58476d1ce4e5b9), b64(0x94d049bb133111eb)
		p53              = f64(0x1p-53)
		one, two, half   = f64(1), f64(2), f64(0.5)
		mant, halfExp    = b64(1<<52 - 1), b64(0x3fe0000000000000)
		thr              = b64(math.Float64bits(math.Sqrt2 / 2))
		c1022            = f64(1022)
		ln2Hi, ln2Lo     = f64(6.93147180369123816490e-01), f64(1.90821492927058770002e-10)
		l1, l2, l3, l4   = f64(6.666666666666735130e-01), f64(3.999999999940941908e-01), f64(2.857142874366239149e-01), f64(2.222219843214978396e-01)
		l5, l6, l7       = f64(1.818357216161805012e-01), f64(1.531383769920937332e-01), f64(1.479819860511658591e-01)
		minus2           = f64(-2)
		twoPi, fourOvPi  = f64(2 * math.Pi), f64(4 / math.Pi)
		pi4A, pi4B, pi4C = f64(7.85398125648498535156e-1), f64(3.77489470793079817668e-8), f64(2.69515142907905952645e-15)
		s0, s1, s2, s3   = f64(1.58962301576546568060e-10), f64(-2.50507477628578072866e-8), f64(2.75573136213857245213e-6), f64(-1.98412698295895385996e-4)
		s4, s5           = f64(8.33333333332211858878e-3), f64(-1.66666666666666307295e-1)
		c0, c1, c2, c3   = f64(-1.13585365213876817300e-11), f64(2.08757008419747316778e-9), f64(-2.75573141792967388112e-7), f64(2.48015872888517045348e-5)
		c4, c5           = f64(-1.38888888888730564116e-3), f64(4.16666666666665929218e-2)
		one64, three     = b64(1), b64(3)
		zero             archsimd.Uint64x8
		meanv, stdv      = f64(mean), f64(std)
	)
	// Shift counts as vectors: ShiftAllRight/Left with a count compiles to
	// a legacy-SSE MOVQ of the count, which stalls on the dirty upper
	// halves of the vector registers.
	sh11, sh27, sh30, sh31, sh52, sh63 := b64(11), b64(27), b64(30), b64(31), b64(52), b64(63)
	mix := func(z archsimd.Uint64x8) archsimd.Uint64x8 {
		z = z.Xor(z.ShiftRight(sh30)).Mul(m1)
		z = z.Xor(z.ShiftRight(sh27)).Mul(m2)
		return z.Xor(z.ShiftRight(sh31))
	}
	for k := 0; k < n; k += 16 {
		u1 := one.Sub(mix(z1).ShiftRight(sh11).ConvertToFloat64().Mul(p53))
		u2 := mix(z1.Add(gv)).ShiftRight(sh11).ConvertToFloat64().Mul(p53)
		z1 = z1.Add(step)

		// logUnit(u1)
		b := u1.AsUint64x8()
		fb := b.And(mant).Or(halfExp)
		lt := fb.Sub(thr).ShiftRight(sh63)
		f1 := fb.Add(lt.ShiftLeft(sh52)).AsFloat64x8()
		kf := b.ShiftRight(sh52).Sub(lt).ConvertToFloat64().Sub(c1022)
		f := f1.Sub(one)
		s := f.Div(two.Add(f))
		ss := s.Mul(s)
		s4q := ss.Mul(ss)
		t1 := ss.Mul(l1.Add(s4q.Mul(l3.Add(s4q.Mul(l5.Add(s4q.Mul(l7)))))))
		t2 := s4q.Mul(l2.Add(s4q.Mul(l4.Add(s4q.Mul(l6)))))
		r := t1.Add(t2)
		hfsq := half.Mul(f).Mul(f)
		lg := kf.Mul(ln2Hi).Sub(hfsq.Sub(s.Mul(hfsq.Add(r)).Add(kf.Mul(ln2Lo))).Sub(f))
		rad := minus2.Mul(lg).Sqrt()

		// sincos2Pi(u2)
		x := twoPi.Mul(u2)
		j := x.Mul(fourOvPi).ConvertToUint64()
		j = j.Add(j.And(one64))
		y := j.ConvertToFloat64()
		zr := x.Sub(y.Mul(pi4A)).Sub(y.Mul(pi4B)).Sub(y.Mul(pi4C))
		zz := zr.Mul(zr)
		pc := one.Sub(half.Mul(zz)).Add(zz.Mul(zz).Mul(c0.Mul(zz).Add(c1).Mul(zz).Add(c2).Mul(zz).Add(c3).Mul(zz).Add(c4).Mul(zz).Add(c5)))
		ps := zr.Add(zr.Mul(zz).Mul(s0.Mul(zz).Add(s1).Mul(zz).Add(s2).Mul(zz).Add(s3).Mul(zz).Add(s4).Mul(zz).Add(s5)))
		q := j.ShiftRight(one64).And(three)
		swap := zero.Sub(q.And(one64))
		cb, sb := pc.AsUint64x8(), ps.AsUint64x8()
		qh := q.ShiftRight(one64)
		cosv := cb.AndNot(swap).Or(sb.And(swap)).Xor(qh.Xor(q).And(one64).ShiftLeft(sh63)).AsFloat64x8()
		sinv := sb.AndNot(swap).Or(cb.And(swap)).Xor(qh.ShiftLeft(sh63)).AsFloat64x8()

		vc := meanv.Add(stdv.Mul(rad).Mul(cosv)).ConvertToFloat32()
		vs := meanv.Add(stdv.Mul(rad.Mul(sinv))).ConvertToFloat32()
		var out archsimd.Float32x16
		out = out.SetLo(vc).SetHi(vs).Permute(permv)
		out.Store((*[16]float32)(unsafe.Pointer(&dst[k])))
	}
	archsimd.ClearAVXUpperBits()
	return n
}

// The constants of fillNormal256, four lanes each, as plain data (no
// vector code runs at package initialization), read with VEX loads:
// broadcasts built inside the kernel spilled through legacy-SSE moves,
// which run with dirty upper halves.
const (
	kOff = iota
	kStep
	kGamma
	kM1lo
	kM1hi
	kM2lo
	kM2hi
	kLo32
	kExp52
	kExp84
	kTwo52p1022
	kTwo84p52
	kP53
	kOne
	kTwo
	kHalf
	kMant
	kHalfExp
	kThr
	kLn2Hi
	kLn2Lo
	kL1
	kL2
	kL3
	kL4
	kL5
	kL6
	kL7
	kMinus2
	kTwoPi
	kFourOvPi
	kPi4A
	kPi4B
	kPi4C
	kS0
	kS1
	kS2
	kS3
	kS4
	kS5
	kC0
	kC1
	kC2
	kC3
	kC4
	kC5
	kOne64
	kThree
	kSh11
	kSh27
	kSh30
	kSh31
	kSh32
	kSh43
	kSh52
	kSh63
	kNormal256
)

var normal256Consts = func() (t [kNormal256][4]uint64) {
	const g = splitmixGamma
	const (
		m1 = 0xbf58476d1ce4e5b9
		m2 = 0x94d049bb133111eb
	)
	t[kOff] = [4]uint64{g, (3 * g) & (1<<64 - 1), (5 * g) & (1<<64 - 1), (7 * g) & (1<<64 - 1)}
	u := func(i int, x uint64) { t[i] = [4]uint64{x, x, x, x} }
	f := func(i int, x float64) { u(i, math.Float64bits(x)) }
	u(kStep, (8*g)&(1<<64-1))
	u(kGamma, g)
	u(kM1lo, m1&(1<<32-1))
	u(kM1hi, m1>>32)
	u(kM2lo, m2&(1<<32-1))
	u(kM2hi, m2>>32)
	u(kLo32, 1<<32-1)
	u(kExp52, 0x4330000000000000) // 2^52
	u(kExp84, 0x4530000000000000) // 2^84
	f(kTwo52p1022, 0x1p52+1022)
	f(kTwo84p52, 0x1p84+0x1p52)
	f(kP53, 0x1p-53)
	f(kOne, 1)
	f(kTwo, 2)
	f(kHalf, 0.5)
	u(kMant, 1<<52-1)
	u(kHalfExp, 0x3fe0000000000000)
	u(kThr, math.Float64bits(math.Sqrt2/2))
	f(kLn2Hi, 6.93147180369123816490e-01)
	f(kLn2Lo, 1.90821492927058770002e-10)
	for i, c := range []float64{6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
		2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01} {
		f(kL1+i, c)
	}
	f(kMinus2, -2)
	f(kTwoPi, 2*math.Pi)
	f(kFourOvPi, 4/math.Pi)
	f(kPi4A, 7.85398125648498535156e-1)
	f(kPi4B, 3.77489470793079817668e-8)
	f(kPi4C, 2.69515142907905952645e-15)
	for i, c := range []float64{1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
		-1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1} {
		f(kS0+i, c)
	}
	for i, c := range []float64{-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
		2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2} {
		f(kC0+i, c)
	}
	u(kOne64, 1)
	u(kThree, 3)
	for i, n := range []uint64{11, 27, 30, 31, 32, 43, 52, 63} {
		u(kSh11+i, n)
	}
	return
}()

// fillNormal256 is the AVX2 kernel: four pairs per pass, the first
// len(dst) &^ 7 values.
func fillNormal256(mean, std float64, z uint64, dst []float32) int {
	n := len(dst) &^ 7
	if n == 0 {
		return 0
	}
	t := &normal256Consts
	c := func(i int) archsimd.Uint64x4 { return archsimd.LoadUint64x4(&t[i]) }
	cf := func(i int) archsimd.Float64x4 { return archsimd.LoadUint64x4(&t[i]).AsFloat64x4() }
	z1 := archsimd.BroadcastUint64x4(z).Add(c(kOff))
	gv, step := c(kGamma), c(kStep)
	var (
		m1lo, m1hi       = c(kM1lo).AsUint32x8(), c(kM1hi).AsUint32x8()
		m2lo, m2hi       = c(kM2lo).AsUint32x8(), c(kM2hi).AsUint32x8()
		lo32             = c(kLo32)
		exp52, exp84     = c(kExp52), c(kExp84)
		two52            = exp52.AsFloat64x4()
		two84p52         = cf(kTwo84p52)
		two52p1022       = cf(kTwo52p1022)
		p53              = cf(kP53)
		one, two, half   = cf(kOne), cf(kTwo), cf(kHalf)
		mant, halfExp    = c(kMant), c(kHalfExp)
		thr              = c(kThr)
		ln2Hi, ln2Lo     = cf(kLn2Hi), cf(kLn2Lo)
		l1, l2, l3, l4   = cf(kL1), cf(kL2), cf(kL3), cf(kL4)
		l5, l6, l7       = cf(kL5), cf(kL6), cf(kL7)
		minus2           = cf(kMinus2)
		twoPi, fourOvPi  = cf(kTwoPi), cf(kFourOvPi)
		pi4A, pi4B, pi4C = cf(kPi4A), cf(kPi4B), cf(kPi4C)
		s0, s1, s2, s3   = cf(kS0), cf(kS1), cf(kS2), cf(kS3)
		s4, s5           = cf(kS4), cf(kS5)
		c0, c1, c2, c3   = cf(kC0), cf(kC1), cf(kC2), cf(kC3)
		c4, c5           = cf(kC4), cf(kC5)
		one64, three     = c(kOne64), c(kThree)
		zero             archsimd.Uint64x4
		meanv, stdv      = archsimd.BroadcastFloat64x4(mean), archsimd.BroadcastFloat64x4(std)
	)
	// Shift counts as vectors (see fillNormal512).
	sh11, sh27, sh30, sh31 := c(kSh11), c(kSh27), c(kSh30), c(kSh31)
	sh32, sh43, sh52, sh63 := c(kSh32), c(kSh43), c(kSh52), c(kSh63)
	// mul is z·m mod 2^64 from three 32x32→64-bit multiplies: lo·lo +
	// (hi·lo + lo·hi)<<32.
	mul := func(z archsimd.Uint64x4, mlo, mhi archsimd.Uint32x8) archsimd.Uint64x4 {
		zl := z.AsUint32x8()
		ll := zl.MulEvenWiden(mlo)
		cross := z.ShiftRight(sh32).AsUint32x8().MulEvenWiden(mlo).Add(zl.MulEvenWiden(mhi))
		return ll.Add(cross.ShiftLeft(sh32))
	}
	mix := func(z archsimd.Uint64x4) archsimd.Uint64x4 {
		z = mul(z.Xor(z.ShiftRight(sh30)), m1lo, m1hi)
		z = mul(z.Xor(z.ShiftRight(sh27)), m2lo, m2hi)
		return z.Xor(z.ShiftRight(sh31))
	}
	// toUnit is unit(z): float64(z>>11) exactly, as 2^52+lo (the low 32
	// bits) plus 2^84+hi·2^32 (the high 21) less 2^84+2^52, then ·2^-53.
	toUnit := func(z archsimd.Uint64x4) archsimd.Float64x4 {
		lo := z.ShiftRight(sh11).And(lo32).Or(exp52).AsFloat64x4()
		hi := z.ShiftRight(sh43).Or(exp84).AsFloat64x4()
		return hi.Sub(two84p52).Add(lo).Mul(p53)
	}
	for k := 0; k < n; k += 8 {
		u1 := one.Sub(toUnit(mix(z1)))
		u2 := toUnit(mix(z1.Add(gv)))
		z1 = z1.Add(step)

		// logUnit(u1); k is the exponent (at most 0x3ff) less lt, made
		// float64 as 2^52+e less 2^52+1022.
		b := u1.AsUint64x4()
		fb := b.And(mant).Or(halfExp)
		lt := fb.Sub(thr).ShiftRight(sh63)
		f1 := fb.Add(lt.ShiftLeft(sh52)).AsFloat64x4()
		kf := b.ShiftRight(sh52).Sub(lt).Or(exp52).AsFloat64x4().Sub(two52p1022)
		f := f1.Sub(one)
		s := f.Div(two.Add(f))
		ss := s.Mul(s)
		s4q := ss.Mul(ss)
		t1 := ss.Mul(l1.Add(s4q.Mul(l3.Add(s4q.Mul(l5.Add(s4q.Mul(l7)))))))
		t2 := s4q.Mul(l2.Add(s4q.Mul(l4.Add(s4q.Mul(l6)))))
		r := t1.Add(t2)
		hfsq := half.Mul(f).Mul(f)
		lg := kf.Mul(ln2Hi).Sub(hfsq.Sub(s.Mul(hfsq.Add(r)).Add(kf.Mul(ln2Lo))).Sub(f))
		rad := minus2.Mul(lg).Sqrt()

		// sincos2Pi(u2); j = uint64(x·4/π) (at most 8) is the truncation,
		// read back as an integer from 2^52+j.
		x := twoPi.Mul(u2)
		jb := x.Mul(fourOvPi).Trunc().Add(two52).AsUint64x4()
		odd := jb.And(one64)
		jb = jb.Add(odd)
		y := jb.AsFloat64x4().Sub(two52)
		j := jb.Sub(exp52)
		zr := x.Sub(y.Mul(pi4A)).Sub(y.Mul(pi4B)).Sub(y.Mul(pi4C))
		zz := zr.Mul(zr)
		pc := one.Sub(half.Mul(zz)).Add(zz.Mul(zz).Mul(c0.Mul(zz).Add(c1).Mul(zz).Add(c2).Mul(zz).Add(c3).Mul(zz).Add(c4).Mul(zz).Add(c5)))
		ps := zr.Add(zr.Mul(zz).Mul(s0.Mul(zz).Add(s1).Mul(zz).Add(s2).Mul(zz).Add(s3).Mul(zz).Add(s4).Mul(zz).Add(s5)))
		q := j.ShiftRight(one64).And(three)
		swap := zero.Sub(q.And(one64))
		cb, sb := pc.AsUint64x4(), ps.AsUint64x4()
		qh := q.ShiftRight(one64)
		cosv := cb.AndNot(swap).Or(sb.And(swap)).Xor(qh.Xor(q).And(one64).ShiftLeft(sh63)).AsFloat64x4()
		sinv := sb.AndNot(swap).Or(cb.And(swap)).Xor(qh.ShiftLeft(sh63)).AsFloat64x4()

		vc := meanv.Add(stdv.Mul(rad).Mul(cosv)).ConvertToFloat32().AsInt32x4()
		vs := meanv.Add(stdv.Mul(rad.Mul(sinv))).ConvertToFloat32().AsInt32x4()
		vc.InterleaveLo(vs).Store((*[4]int32)(unsafe.Pointer(&dst[k])))
		vc.InterleaveHi(vs).Store((*[4]int32)(unsafe.Pointer(&dst[k+4])))
	}
	archsimd.ClearAVXUpperBits()
	return n
}

// clearUpper executes VZEROUPPER between rows: see ops' clearUpper (the
// runtime's asyncPreempt leaves the upper halves dirty in simd builds,
// which slows the scalar float code that follows).
func clearUpper() {
	if archsimd.X86.AVX() {
		archsimd.ClearAVXUpperBits()
	}
}
