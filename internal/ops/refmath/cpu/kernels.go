package cpu

import (
	"fmt"
	"strings"
)

// Kernels is the set of CPU kernels the reference math runs: a field per
// family of kernels, set (true, or for the tinyBLAS tiles their shape)
// only where this CPU has every extension that family's code uses.
// Detect builds this CPU's set; every op runs with the set it is given
// (the refmath packages' Kernels embed this one, and the shared kernels
// here are its methods), so a test turns a family off on a copy, to
// compare it with the code it replaces, without touching what other
// tests run. The zero Kernels runs the portable Go code alone.
type Kernels struct {
	// The assembly of every amd64 build (detectAsm: golang.org/x/sys/cpu's
	// flags, which include the OS's support of the vector state).

	// AVX2 is AVX2 and FMA: the row kernels' assembly of the plain build,
	// the silu and soft_max exp kernels, the AVX2 tinyBLAS tiles.
	AVX2 bool
	// AVX512 is AVX-512 F, VL, DQ and BW: the 16-lane silu and exp
	// kernels and the f32 -> f16 row conversion.
	AVX512 bool
	// F16C is F16C (with AVX2): the f32 <-> f16 row conversions.
	F16C bool
	// VNNI is the AVX-512 VNNI q8_0 and q4_0 MUL_MAT kernels (AVX512,
	// AVX512VNNI and F16C).
	VNNI bool
	// QAVX2 is the AVX2 q8_0 and q4_0 MUL_MAT kernels
	// (mulmat_qavx2_amd64.s: AVX2 and F16C), where VNNI is off.
	QAVX2 bool
	// F16Dot is the F16C dot and tile kernels of f16 MUL_MAT.
	F16Dot bool
	// F32Dot8 is the AVX eight-row f32 dot of MUL_MAT against one column.
	F32Dot8 bool
	// FAF16C and FAZ are FLASH_ATTN_EXT with f16 K/V by F16C assembly
	// and by AVX-512 assembly (FAZ is tried first).
	FAF16C, FAZ bool
	// SgemmR and SgemmC are the rows and columns of the tinyBLAS-order
	// register tiles of f32/f16 MUL_MAT (mulmat_sgemm_amd64.s): 4x4 with
	// AVX-512, 4x3 with AVX2, FMA and F16C, 2x2 on arm64 (NEON,
	// mulmat_sgemm_arm64.s), 0 for none.
	SgemmR, SgemmC int
	// F16Halves: f16 MUL_MAT by the 4x4 tiles takes its activations as
	// halves, widened as they are loaded (sgemmF16HTile*, as tinyBLAS
	// does), rather than widened once to float32: the same values, half
	// the bytes, and a VCVTPH2PS per activation vector in the loop. Set
	// on AVX-512 CPUs without AMX (AMD Zen 4 and 5: f16 n = 7 5.2-5.7 ->
	// 5.0 ms on Zen 5); off on AMX ones (Intel Sapphire Rapids on, where a
	// 512-bit VCVTPH2PS takes two micro-ops on the FMA ports: f16 n = 7
	// 8.0-8.3 -> 5.9-7.4 ms, n = 32 22.4-23.1 -> 19.9-20.4 in run-op).
	F16Halves bool

	// The archsimd kernels of GOEXPERIMENT=simd builds on amd64 (false
	// in every other build) and the row kernels of every amd64 build.

	// Vec is the AVX2 archsimd kernels of MUL_MAT (the dequantizing dots
	// and tiles); MulMat's vec argument starts from it.
	Vec bool
	// Vec512 is the AVX-512 archsimd kernels: MUL_MAT's 512-bit tiles and
	// the 16-lane exp kernels.
	Vec512 bool
	// Tile4 is the AVX-512 4x4 float tiles of MUL_MAT (mulmat_tile4_amd64.s).
	Tile4 bool
	// Row is the vector row kernels (add, mul, norms, rope, q8_0
	// dequantization, soft_max's passes): archsimd in the simd build, AVX2
	// assembly in the plain amd64 build.
	Row bool
	// Exp4 is the eight-lane (AVX2, FMA) exp kernels of soft_max.
	Exp4 bool
	// FA is FLASH_ATTN_EXT by archsimd (AVX2, FMA).
	FA bool

	// The assembly of arm64 builds (detectAsm: x/sys/cpu's ARM64 flags).

	// NEON is the ARMv8.0 Advanced SIMD kernels, which every arm64 has:
	// q8_0 and q4_0 MUL_MAT by widening multiplies
	// (mulmat_qneon_arm64.s), the f32 and f16 MUL_MAT dots against one
	// column (dot8_arm64.s) and the 2x2 tinyBLAS-order tiles (SgemmR).
	NEON bool
	// DotProd is the q8_0 and q4_0 MUL_MAT kernels by SDOT (the ARMv8.2
	// dot product, ASIMDDP: Apple M1 on, Graviton2 on), with NEON.
	DotProd bool
}

// Detect is this CPU's kernel set: every family whose extensions the CPU
// and the OS support, in this build.
func Detect() Kernels {
	var ks Kernels
	detectAsm(&ks)
	detectVec(&ks)
	return ks
}

// The extensions of the kernel families.
var (
	extAVX2   = []string{"AVX", "AVX2", "FMA"}
	extF16C   = []string{"AVX", "AVX2", "FMA", "F16C"}
	extAVX512 = []string{"AVX", "AVX2", "FMA", "AVX512F", "AVX512VL", "AVX512DQ", "AVX512BW"}
)

// FamilyExts names every CPU extension (x/sys/cpu's names, without "Has")
// the assembly of each family uses, by its Kernels field: the one table
// detectAsm checks. Sgemm4 and SgemmY are the tinyBLAS-order tiles of
// SgemmC = 4 and 3 (AVX2); Row is the plain build's row kernels and Tile4 the
// AVX-512 float tiles, set from these same extensions (archsimd's
// AVX512() checks AVX512F, CD, BW, DQ and VL). TestAsmExtensionsGuarded
// (internal/ops/refmath) reads the instructions of every assembly
// function and fails where one uses an extension its family lacks.
var FamilyExts = map[string][]string{
	"AVX2":    extAVX2,
	"AVX512":  extAVX512,
	"F16C":    extF16C,
	"VNNI":    append(append([]string{}, extAVX512...), "F16C", "AVX512VNNI"),
	"QAVX2":   extF16C,
	"F16Dot":  extF16C,
	"F32Dot8": extAVX2,
	"FAF16C":  extF16C,
	"FAZ":     append(append([]string{}, extAVX512...), "F16C"),
	"Sgemm4":  extAVX512,
	"SgemmY":  extF16C, // the f16 tiles widen by VCVTPH2PS
	"Row":     extAVX2,
	"Tile4":   extAVX512,
	// arm64 (x/sys/cpu's ARM64 flags): TestAsmExtensionsGuardedArm64
	// checks that every SDOT runs under DotProd.
	"NEON":    {"ASIMD"},
	"DotProd": {"ASIMD", "ASIMDDP"},
}

// KernelSets are the names Limit takes on this architecture, from the
// fastest down: every family the CPU runs (native); on amd64 those of an
// AVX-512 machine and of an AVX2+FMA+F16C one without AVX-512, on arm64
// those of one with the dot product (dotprod) and of an ARMv8.0 one
// (neon); the portable Go code alone.
var KernelSets = append(append([]string{"native"}, archKernelSets...), "portable")

// Limit is ks cut down to the kernel set name (one of KernelSets; ""
// is "native"), so that one machine runs what a smaller one would:
// "avx2" turns off every AVX-512 family (the AVX2 forms take their
// place), "neon" the arm64 dot product kernels, "portable" every vector
// kernel. It fails where ks lacks what the set needs ("avx512" without
// AVX-512, "avx2" without AVX2 and FMA, "dotprod" without the dot product,
// "neon" off arm64) or the name is none of KernelSets.
func (ks Kernels) Limit(name string) (Kernels, error) {
	switch name {
	case "", "native":
		return ks, nil
	case "avx512":
		if !ks.AVX512 {
			return ks, fmt.Errorf("kernel set %q: this CPU (or OS, or build) has no AVX-512 kernels", name)
		}
		return ks, nil
	case "avx2":
		if !ks.AVX2 {
			return ks, fmt.Errorf("kernel set %q: this CPU (or OS, or build) has no AVX2 and FMA kernels", name)
		}
		ks.AVX512, ks.VNNI, ks.FAZ, ks.Vec512, ks.Tile4 = false, false, false, false, false
		ks.SgemmR, ks.SgemmC = sgemmTileShape(false, ks.SgemmR != 0)
		ks.F16Halves = false
		return ks, nil
	case "dotprod":
		if !ks.DotProd {
			return ks, fmt.Errorf("kernel set %q: this CPU (or build) has no arm64 dot product (ASIMDDP) kernels", name)
		}
		return ks, nil
	case "neon":
		if !ks.NEON {
			return ks, fmt.Errorf("kernel set %q: this CPU (or build) has no arm64 NEON kernels", name)
		}
		ks.DotProd = false
		return ks, nil
	case "portable":
		return Kernels{}, nil
	}
	return ks, fmt.Errorf("unknown kernel set %q (want one of %s)", name, strings.Join(KernelSets, ", "))
}

// sgemmTileShape is the shape of the tinyBLAS-order register tiles a CPU
// runs: 4x4 with AVX-512, 4x3 with AVX2, FMA and F16C (fma: the SgemmY
// family), none (0, 0) without.
func sgemmTileShape(avx512, fma bool) (int, int) {
	switch {
	case avx512:
		return 4, 4
	case fma:
		return 4, 3
	}
	return 0, 0
}

// extFlags are this architecture's x/sys/cpu flags by extension name
// (FamilyExts' names), read once by detectAsm.
type extFlags map[string]bool

// hasAll reports whether flags has every extension of the family.
func (flags extFlags) hasAll(family string) bool {
	exts, ok := FamilyExts[family]
	if !ok {
		panic("cpu: no family " + family)
	}
	for _, e := range exts {
		has, ok := flags[e]
		if !ok {
			panic("cpu: unknown extension " + e)
		}
		if !has {
			return false
		}
	}
	return true
}
