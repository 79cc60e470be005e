package refmath

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
