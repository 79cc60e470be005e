//go:build !amd64

package cpu

// Off amd64 there are no vector kernels: the dispatchers of rowvec.go run the
// scalar code.

// AddRow is dst = a + b, element by element (the scalar loop's bits).
func (ks *Kernels) AddRow(dst, a, b []float32) { addScalar(dst, a, b) }

// SubRow is dst = a - b, element by element.
func (ks *Kernels) SubRow(dst, a, b []float32) { subScalar(dst, a, b) }

// MulRow is dst = a·b, element by element.
func (ks *Kernels) MulRow(dst, a, b []float32) { mulScalar(dst, a, b) }

// ScaleInto is dst = x·s.
func (ks *Kernels) ScaleInto(dst, x []float32, s float32) { scaleScalar(dst, x, s) }

// SumRow is SumScalar(x) in the lane order of the build's kernel (the
// norms' float64 sums).
func (ks *Kernels) SumRow(x []float32) float64 { return SumScalar(x) }

// SumSqRow is SumSqScalar(x) in the lane order of the build's kernel.
func (ks *Kernels) SumSqRow(x []float32) float64 { return SumSqScalar(x) }

// CenterSumSqRow sets dst = x - m and returns Σ float64(dst[i]²), in the
// lane order of the build's kernel.
func (ks *Kernels) CenterSumSqRow(dst, x []float32, m float32) float64 {
	return CenterSumSqScalar(dst, x, m)
}

// RopeNeoxRow is ropeNeoxScalar: neox rotation of x by cosines c and sines
// s into dst.
func (ks *Kernels) RopeNeoxRow(dst, x, c, s []float32) { ropeNeoxScalar(dst, x, c, s) }

// RopeNormalRow is ropeNormalScalar: normal rotation of x in the expanded
// layout into dst.
func (ks *Kernels) RopeNormalRow(dst, x, cc, ss []float32) { ropeNormalScalar(dst, x, cc, ss) }

// DequantQ8_0Row is DequantizeRow(Q8_0, src, dst).
func (ks *Kernels) DequantQ8_0Row(src []byte, dst []float32) { dequantQ8_0Scalar(src, dst) }

// SincosRow sets c[i] = cos(th[i])·m and s[i] = sin(th[i])·m and reports
// whether it did (false: the caller runs the scalar code).
func (ks *Kernels) SincosRow(c, s, th []float32, m float32) bool { return false }
