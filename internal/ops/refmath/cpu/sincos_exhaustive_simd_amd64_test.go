//go:build goexperiment.simd && amd64

package cpu

import (
	"math"
	"os"
	"simd/archsimd"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSincosVecExhaustive checks sincosF64x4x2 (both halves) and
// sincosF64x4 bit for bit, in float64, against math.Sincos on every
// float32 angle t with |t| < 2^29 (the range sincosRow takes), positive
// and negative. It takes about 2.5 minutes here, so it runs only with
// ET_SINCOS_EXHAUSTIVE=1; TestSincosRowVec samples the same range in every
// run.
func TestSincosVecExhaustive(t *testing.T) {
	if os.Getenv("ET_SINCOS_EXHAUSTIVE") == "" {
		t.Skip("set ET_SINCOS_EXHAUSTIVE=1 to check all float32 angles below 2^29")
	}
	if !host.Row {
		t.Skip("no AVX2")
	}
	lim := math.Float32bits(1 << 29)
	var bad atomic.Int64
	check := func(in *[4]float64, sn, cs f64x4) {
		var so, co [4]float64
		sn.Store(&so)
		cs.Store(&co)
		for l, x := range in {
			s, c := math.Sincos(x)
			if math.Float64bits(s) != math.Float64bits(so[l]) || math.Float64bits(c) != math.Float64bits(co[l]) {
				if bad.Add(1) < 5 {
					t.Errorf("angle %g: sin, cos %v %v, math.Sincos %v %v", x, so[l], co[l], s, c)
				}
			}
		}
	}
	const workers = 2
	var wg sync.WaitGroup
	for w := uint32(0); w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pos, neg [4]float64
			for b := 4 * w; b < lim; b += 4 * workers {
				for l := range pos {
					pos[l] = float64(math.Float32frombits(b + uint32(l)))
					neg[l] = -pos[l]
				}
				p, n := archsimd.LoadFloat64x4(&pos), archsimd.LoadFloat64x4(&neg)
				sn0, cs0, sn1, cs1 := sincosF64x4x2(p, n, trigK)
				check(&pos, sn0, cs0)
				check(&neg, sn1, cs1)
				sn, cs := sincosF64x4(n, trigK)
				check(&neg, sn, cs)
				sn, cs = sincosF64x4(p, trigK)
				check(&pos, sn, cs)
			}
			archsimd.ClearAVXUpperBits()
		}()
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d lanes differ from math.Sincos", n)
	}
}
