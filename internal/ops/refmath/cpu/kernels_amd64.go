package cpu

import xcpu "golang.org/x/sys/cpu"

// detectAsm sets the families of amd64 assembly this CPU runs, naming
// every extension their instructions use. golang.org/x/sys/cpu sets the
// AVX and AVX-512 flags only where the OS saves the YMM and the opmask
// and ZMM state.
func detectAsm(ks *Kernels) {
	x := &xcpu.X86
	ks.AVX2 = x.HasAVX && x.HasAVX2 && x.HasFMA
	// The 16-lane kernels use EVEX forms of 128- and 256-bit registers
	// (VL), VXORPS on Z registers (DQ) and byte/word masks (BW).
	ks.AVX512 = ks.AVX2 && x.HasAVX512F && x.HasAVX512VL && x.HasAVX512DQ && x.HasAVX512BW
	ks.F16C = ks.AVX2 && x.HasF16C
	ks.VNNI = ks.AVX512 && x.HasAVX512VNNI && ks.F16C
	ks.QAVX2 = ks.F16C
	ks.F16Dot = ks.F16C
	ks.F32Dot8 = ks.AVX2
	ks.FAF16C = ks.F16C
	ks.FAZ = ks.AVX512 && ks.F16C
	ks.SgemmR, ks.SgemmC = sgemmTileShape(ks.AVX512, ks.AVX2)
}
