//go:build !amd64

package cpu

// Off amd64 there are no vector kernels: the dispatchers of rowvec.go run the
// scalar code.

func (ks *Kernels) AddRow(dst, a, b []float32) { addScalar(dst, a, b) }

func (ks *Kernels) SubRow(dst, a, b []float32) { subScalar(dst, a, b) }

func (ks *Kernels) MulRow(dst, a, b []float32) { mulScalar(dst, a, b) }

func (ks *Kernels) ScaleInto(dst, x []float32, s float32) { scaleScalar(dst, x, s) }

func (ks *Kernels) SumRow(x []float32) float64 { return SumScalar(x) }

func (ks *Kernels) SumSqRow(x []float32) float64 { return SumSqScalar(x) }

func (ks *Kernels) CenterSumSqRow(dst, x []float32, m float32) float64 {
	return CenterSumSqScalar(dst, x, m)
}

func (ks *Kernels) RopeNeoxRow(dst, x, c, s []float32) { ropeNeoxScalar(dst, x, c, s) }

func (ks *Kernels) RopeNormalRow(dst, x, cc, ss []float32) { ropeNormalScalar(dst, x, cc, ss) }

func (ks *Kernels) DequantQ8_0Row(src []byte, dst []float32) { dequantQ8_0Scalar(src, dst) }

func (ks *Kernels) SincosRow(c, s, th []float32, m float32) bool { return false }
