package cpu

// The element-wise row kernels of every amd64 build: AVX assembly
// (elt_amd64.s), the scalar loop's bits.

//go:noescape
func addF32AVX(dst, a, b *float32, n int)

//go:noescape
func subF32AVX(dst, a, b *float32, n int)

//go:noescape
func mulF32AVX(dst, a, b *float32, n int)

// eltRow runs kernel on the first len(a) &^ 7 values and scalar on the rest.
func (ks *Kernels) eltRow(dst, a, b []float32, kernel func(dst, a, b *float32, n int), scalar func(dst, a, b []float32)) {
	n := len(a) &^ 7
	if !ks.Row || n == 0 {
		scalar(dst, a, b)
		return
	}
	b, dst = b[:len(a)], dst[:len(a)]
	kernel(&dst[0], &a[0], &b[0], n)
	scalar(dst[n:], a[n:], b[n:])
}

// AddRow is dst = a + b, element by element (the scalar loop's bits).
func (ks *Kernels) AddRow(dst, a, b []float32) { ks.eltRow(dst, a, b, addF32AVX, addScalar) }

// SubRow is dst = a - b, element by element.
func (ks *Kernels) SubRow(dst, a, b []float32) { ks.eltRow(dst, a, b, subF32AVX, subScalar) }

// MulRow is dst = a·b, element by element.
func (ks *Kernels) MulRow(dst, a, b []float32) { ks.eltRow(dst, a, b, mulF32AVX, mulScalar) }
