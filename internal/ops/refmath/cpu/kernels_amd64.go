package cpu

// detectAsm sets the families of amd64 assembly this CPU runs.
func detectAsm(ks *Kernels) {
	ks.AVX2, ks.AVX512 = siluCPU()
	ks.F16C = ks.AVX2 && cpuidF16C()
	ks.VNNI = ks.AVX512 && cpuidAVX512VNNI() && ks.F16C
	ks.F16Dot = ks.F16C
	ks.F32Dot8 = ks.AVX2
	ks.FAF16C = ks.F16C
	ks.FAZ = ks.AVX512 && ks.F16C
	ks.SgemmR, ks.SgemmC = sgemmTileShape(ks.AVX512, ks.AVX2)
}

// cpuidAVX512VNNI is CPUID.7.0: EBX bits 16 (AVX512F), 17 (DQ), 30 (BW),
// 31 (VL) and ECX bit 11 (AVX512_VNNI).
func cpuidAVX512VNNI() bool

// sgemmTileShape is the shape of the tinyBLAS-order register tiles a CPU
// runs: 4x4 with AVX-512, 2x2 with AVX2 and FMA, none (0, 0) without.
func sgemmTileShape(avx512, fma bool) (int, int) {
	switch {
	case avx512:
		return 4, 4
	case fma:
		return 2, 2
	}
	return 0, 0
}
