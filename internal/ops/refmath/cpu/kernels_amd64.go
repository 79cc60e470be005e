package cpu

import xcpu "golang.org/x/sys/cpu"

// archKernelSets are the kernel sets between native and portable here.
var archKernelSets = []string{"avx512", "avx2"}

// detectAsm sets the families of amd64 assembly this CPU runs: each where
// golang.org/x/sys/cpu reports every extension FamilyExts names for it
// (x/sys/cpu sets the AVX and AVX-512 flags only where the OS saves the
// YMM and the opmask and ZMM state).
func detectAsm(ks *Kernels) {
	f := x86Flags()
	ks.AVX2 = f.hasAll("AVX2")
	ks.AVX512 = f.hasAll("AVX512")
	ks.F16C = f.hasAll("F16C")
	ks.VNNI = f.hasAll("VNNI")
	ks.QAVX2 = f.hasAll("QAVX2")
	ks.F16Dot = f.hasAll("F16Dot")
	ks.F32Dot8 = f.hasAll("F32Dot8")
	ks.FAF16C = f.hasAll("FAF16C")
	ks.FAZ = f.hasAll("FAZ")
	ks.SgemmR, ks.SgemmC = sgemmTileShape(f.hasAll("Sgemm4"), f.hasAll("SgemmY"))
	// AMX stands for the Intel cores whose 512-bit VCVTPH2PS costs two
	// FMA-port micro-ops (see F16Halves); x/sys/cpu names no vendor.
	ks.F16Halves = ks.SgemmC == 4 && !xcpu.X86.HasAMXTile
}

// x86Flags are x/sys/cpu's amd64 flags FamilyExts names.
func x86Flags() extFlags {
	x := &xcpu.X86
	return extFlags{"AVX": x.HasAVX, "AVX2": x.HasAVX2, "FMA": x.HasFMA, "F16C": x.HasF16C,
		"AVX512F": x.HasAVX512F, "AVX512VL": x.HasAVX512VL, "AVX512DQ": x.HasAVX512DQ, "AVX512BW": x.HasAVX512BW,
		"AVX512VNNI": x.HasAVX512VNNI}
}
