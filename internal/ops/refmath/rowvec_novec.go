//go:build !amd64

package refmath

// Off amd64 there are no vector kernels: the dispatchers of rowvec.go run the
// scalar code.

func (ks *Kernels) addRow(dst, a, b []float32) { addScalar(dst, a, b) }

func (ks *Kernels) subRow(dst, a, b []float32) { subScalar(dst, a, b) }

func (ks *Kernels) mulRow(dst, a, b []float32) { mulScalar(dst, a, b) }

func (ks *Kernels) scaleInto(dst, x []float32, s float32) { scaleScalar(dst, x, s) }

func (ks *Kernels) sumRow(x []float32) float64 { return sumScalar(x) }

func (ks *Kernels) sumSqRow(x []float32) float64 { return sumSqScalar(x) }

func (ks *Kernels) centerSumSqRow(dst, x []float32, m float32) float64 {
	return centerSumSqScalar(dst, x, m)
}

func (ks *Kernels) ropeNeoxRow(dst, x, c, s []float32) { ropeNeoxScalar(dst, x, c, s) }

func (ks *Kernels) ropeNormalRow(dst, x, cc, ss []float32) { ropeNormalScalar(dst, x, cc, ss) }

func (ks *Kernels) dequantQ8_0Row(src []byte, dst []float32) { dequantQ8_0Scalar(src, dst) }

func (ks *Kernels) sincosRow(c, s, th []float32, m float32) bool { return false }
