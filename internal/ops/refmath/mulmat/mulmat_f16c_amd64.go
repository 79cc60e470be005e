//go:build goexperiment.simd && amd64

package mulmat

import (
	"encoding/binary"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// The f16 MulMat kernels in Go assembly (mulmat_f16c_amd64.s), used when
// the CPU has F16C (vecF16C): the halves are widened by VCVTPH2PS, one
// instruction per eight and exact for every half (a signalling NaN comes
// out quiet, which the multiply that follows would do anyway), in place of
// widenF16x8's integer bit-twiddling. The float32 operations per lane are
// those of dotF16Vec4R and of the register tiles, in the same order, so
// the results are bit-identical (NaN results aside: NaN either way, but
// which operand's payload a two-NaN operation passes on depends on the
// operand order, which the compiler chooses for the archsimd kernels).

// f16Dot4F16C sets out[r] to the eight running lane sums of row r (the
// halves at p[r]) against the n float32 activations at b, n a multiple of
// 8: lane j sums the products of the elements i ≡ j (mod 8) in order, each
// sum s = s + w·x by a multiply and a separate add.
//
//go:noescape
func f16Dot4F16C(p *[4]unsafe.Pointer, b unsafe.Pointer, n int, out *[4][8]float32)

// widenF16F16C widens the n halves at src (n a multiple of 8) to the n
// float32s at dst.
//
//go:noescape
func widenF16F16C(dst, src unsafe.Pointer, n int)

// dotF16F16C4R is dotF16Vec4R by f16Dot4F16C.
func dotF16F16C4R(a0, a1, a2, a3 []byte, b []float32) [4]float32 {
	n := len(b)
	a0, a1, a2, a3 = a0[:2*n], a1[:2*n], a2[:2*n], a3[:2*n]
	n8 := n &^ 7
	var s [4][8]float32
	if n8 > 0 {
		p := [4]unsafe.Pointer{unsafe.Pointer(&a0[0]), unsafe.Pointer(&a1[0]), unsafe.Pointer(&a2[0]), unsafe.Pointer(&a3[0])}
		f16Dot4F16C(&p, unsafe.Pointer(&b[0]), n8, &s)
	}
	tab := ops.F16ToF32Table()
	for i := n8; i < n; i++ {
		s[0][0] += float32(tab[binary.LittleEndian.Uint16(a0[2*i:])] * b[i])
		s[1][0] += float32(tab[binary.LittleEndian.Uint16(a1[2*i:])] * b[i])
		s[2][0] += float32(tab[binary.LittleEndian.Uint16(a2[2*i:])] * b[i])
		s[3][0] += float32(tab[binary.LittleEndian.Uint16(a3[2*i:])] * b[i])
	}
	return [4]float32{cpu.Finish8(&s[0]), cpu.Finish8(&s[1]), cpu.Finish8(&s[2]), cpu.Finish8(&s[3])}
}

// f16Tile4x2F16C adds, over n values (a multiple of 8), the products of
// the four f16 weight rows at p[0..3] and the f32 activation rows x0 and
// x1 to running lane sums in memory, those of (row i, column j) the eight
// float32s at acc + i·rs + 32·j, each updated as s = s + w·x by a multiply
// and a separate add, lane by lane (the f32Tile kernels' order).
//
//go:noescape
func f16Tile4x2F16C(p *[4]unsafe.Pointer, x0, x1, acc unsafe.Pointer, rs, n int)

// f16Tile4x1F16C is f16Tile4x2F16C for one activation row.
//
//go:noescape
func f16Tile4x1F16C(p *[4]unsafe.Pointer, x0, acc unsafe.Pointer, rs, n int)

// fTileKF16C is how many values of k a pass of mulTileF16C takes: the four
// rows' halves (16 KB) stay in L1 for all the columns.
const fTileKF16C = 2048

// mulTileF16C is mulTile for f16 weights with the F16C kernels: the
// weights are widened in the kernels, four rows at a time against two
// columns (or one), instead of into scratch space first. The sums are
// those of mulTile, in the same order.
func (ft *floatTile) mulTileF16C(act *actRows, rowAt func(int) []byte, r0, r1, base, n int, put func(i01, i11 int, v float32)) {
	ks := act.ks
	k := act.k
	k8 := k &^ 7
	nr := r1 - r0
	nrp := (nr + 3) &^ 3 // rows padded to groups of four: copies of the last one
	size := nrp * n * 8
	if cap(ft.acc) < size {
		ft.acc = make([]float32, size)
	}
	acc := ft.acc[:size]
	clear(acc)
	var rows [mulMatRowTile + 3][]byte
	for i := range nr {
		rows[i] = rowAt(r0 + i)[:2*k]
	}
	for i := nr; i < nrp; i++ {
		rows[i] = rows[nr-1]
	}
	y := act.f32[base*k : (base+n)*k]
	if k8 > 0 {
		pacc := unsafe.Pointer(&acc[0])
		rs := 32 * n
		for i := 0; i < nrp; i += 4 {
			for k0 := 0; k0 < k8; k0 += fTileKF16C {
				kc := min(fTileKF16C, k8-k0)
				p := [4]unsafe.Pointer{unsafe.Pointer(&rows[i][2*k0]), unsafe.Pointer(&rows[i+1][2*k0]), unsafe.Pointer(&rows[i+2][2*k0]), unsafe.Pointer(&rows[i+3][2*k0])}
				c := 0
				if ks.Tile4 {
					for ; c+3 <= n; c += 4 {
						var xs [4]unsafe.Pointer
						for j := range min(4, n-c) {
							xs[j] = unsafe.Pointer(&y[(c+j)*k+k0])
						}
						if n-c == 3 {
							f16Tile4x3F16C(&p, &xs, unsafe.Add(pacc, 32*(i*n+c)), rs, kc)
						} else {
							f16Tile4x4F16C(&p, &xs, unsafe.Add(pacc, 32*(i*n+c)), rs, kc)
						}
					}
					c = min(c, n) // n-c is now 0, 1 or 2: the kernels below
				}
				for ; c+2 <= n; c += 2 {
					f16Tile4x2F16C(&p, unsafe.Pointer(&y[c*k+k0]), unsafe.Pointer(&y[(c+1)*k+k0]), unsafe.Add(pacc, 32*(i*n+c)), rs, kc)
				}
				if c < n {
					f16Tile4x1F16C(&p, unsafe.Pointer(&y[c*k+k0]), unsafe.Add(pacc, 32*(i*n+c)), rs, kc)
				}
			}
		}
	}
	finishTile(ops.F16, rows[:nr], acc, y, k, r0, n, put)
}
