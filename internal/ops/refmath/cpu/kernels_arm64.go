package cpu

import (
	"unsafe"

	xcpu "golang.org/x/sys/cpu"

	"github.com/ainekko/et/internal/ops"
)

// archKernelSets are the kernel sets between native and portable here.
var archKernelSets = []string{"dotprod", "neon"}

// detectAsm sets the families of arm64 assembly this CPU runs: each where
// golang.org/x/sys/cpu reports every extension FamilyExts names for it
// (on Linux from the auxiliary vector's HWCAP, on macOS from sysctl).
func detectAsm(ks *Kernels) {
	a := &xcpu.ARM64
	f := extFlags{"ASIMD": a.HasASIMD, "ASIMDDP": a.HasASIMDDP}
	ks.NEON = f.hasAll("NEON")
	ks.DotProd = f.hasAll("DotProd")
	if ks.NEON {
		ks.SgemmR, ks.SgemmC = 2, 2 // mulmat_sgemm_arm64.s
	}
}

// detectVec sets nothing: archsimd is amd64's.
func detectVec(*Kernels) {}

// The eight-row dot products of the f16 and f32 MulMat with one column
// (dot8_arm64.s, Kernels.NEON): f16Dot8F16C's and f32Dot8AVX's contract
// (dot8_amd64.go), their float32 operations per lane dotF16Bytes' and
// dotF32's in the same order, so the results are the same bits (NaN
// results aside: NaN either way).

//go:noescape
func f16Dot8NEON(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)

//go:noescape
func f32Dot8NEON(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)

// dot8Kernel runs f16Dot8NEON (t F16) or f32Dot8NEON for Dot8F.
func dot8Kernel(t ops.Type, p *[8]unsafe.Pointer, b unsafe.Pointer, n int, s *[8][8]float32) {
	if t == ops.F16 {
		f16Dot8NEON(p, b, n, s)
	} else {
		f32Dot8NEON(p, b, n, s)
	}
}
