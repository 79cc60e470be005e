package refmath

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// asmGuards names, for every function of the reference math's amd64
// assembly, the kernel families (cpu.Kernels fields, cpu.FamilyExts
// keys) whose check guards each call of it: the function runs only
// where all of them are set.
var asmGuards = map[string][]string{
	"f16Dot4F16C": {"F16Dot"}, "widenF16F16C": {"F16Dot"},
	"f16Tile4x2F16C": {"F16Dot"}, "f16Tile4x1F16C": {"F16Dot"},
	"f16Tile4x4F16C": {"F16Dot", "Tile4"}, "f16Tile4x3F16C": {"F16Dot", "Tile4"},
	"f32Tile4x4": {"Tile4"}, "f32Tile4x3": {"Tile4"}, "f32Tile4x2": {"Tile4"},
	"q4_0Rows8AVX2": {"QAVX2"}, "q4_0Rows8x2AVX2": {"QAVX2"}, "q8_0Rows8AVX2": {"QAVX2"}, "q8_0Rows8x2AVX2": {"QAVX2"},
	"q4_0Rows8VNNI": {"VNNI"}, "q4_0Rows8x2VNNI": {"VNNI"}, "q8_0Rows8VNNI": {"VNNI"}, "q8_0Rows8x2VNNI": {"VNNI"},
	"q8_0Rows8x4TVNNI": {"VNNI"},
	"faMadF16C":        {"FAF16C"}, "faAddF16C": {"FAF16C"}, "prefetchLines": {"FAF16C"},
	"faDotsZ4": {"FAZ"}, "faAccumZ32": {"FAZ"},
	"f16Dot8F16C": {"F16Dot"}, "f32Dot8AVX": {"F32Dot8"},
	"addF32AVX": {"Row"}, "subF32AVX": {"Row"}, "mulF32AVX": {"Row"}, "scaleF32AVX": {"Row"}, "sumsF32AVX": {"Row"},
	"softMaxPrepAVX": {"Row"}, "ropeNeoxAVX": {"Row"}, "ropeNormalAVX": {"Row"}, "dequantQ8_0AVX": {"Row", "F16C"},
	"siluAVX512": {"AVX512"}, "softMaxExpAVX512": {"AVX512"}, "siluAVX2": {"AVX2"}, "softMaxExpAVX2": {"AVX2"},
	"f32ToF16F16C": {"F16C"}, "f32ToF16AVX512": {"AVX512", "F16C"},
}

// TestAsmExtensionsGuarded reads every function of the amd64 assembly of
// the reference math (macros expanded) and fails where an instruction
// needs a CPU extension that none of the families guarding the function
// (asmGuards) checks, or where a function has no entry there: issue 32's
// "feature checks that match the instructions". The sgemm tiles' families
// come from their shape (sgemm*Tile4x*: Sgemm4, sgemm*TileY4x*: SgemmY).
func TestAsmExtensionsGuarded(t *testing.T) {
	fns := readAsm(t, "*/*_amd64.s")
	for _, fn := range fns {
		f, name, instrs := fn.file, fn.name, fn.instrs
		guards, ok := asmGuards[name]
		switch {
		case strings.HasPrefix(name, "sgemm") && strings.Contains(name, "Tile4x"):
			guards, ok = []string{"Sgemm4"}, true
		case strings.HasPrefix(name, "sgemm") && strings.Contains(name, "TileY4x"):
			guards, ok = []string{"SgemmY"}, true
		}
		if !ok {
			t.Errorf("%s: %s has no entry in asmGuards", f, name)
			continue
		}
		checked := guardedExts(t, name, guards)
		for _, in := range instrs {
			for _, e := range instrExts(in) {
				if !checked[e] {
					t.Errorf("%s: %s: %q needs %s, which its guards %v do not check", f, name, in, e, guards)
				}
			}
		}
	}
	if seen := len(fns); seen < len(asmGuards) {
		t.Errorf("read %d functions, asmGuards names %d: a stale entry?", seen, len(asmGuards))
	}
}

// TestInstrExts checks the instruction classifier on forms whose
// extension is easy to get wrong.
func TestInstrExts(t *testing.T) {
	for in, want := range map[string]string{
		"VADDPS Y1, Y2, Y3":              "AVX",
		"VPADDD X1, X2, X3":              "AVX",
		"VPADDD Y1, Y2, Y3":              "AVX AVX2",
		"VPBROADCASTD X15, Y15":          "AVX AVX2",
		"VBROADCASTSS (AX), Y1":          "AVX",
		"VBROADCASTSS X1, Y1":            "AVX AVX2",
		"VFMADD231PS Y1, Y2, Y3":         "AVX FMA",
		"VCVTPH2PS X8, Y8":               "AVX F16C",
		"VFMADD231PS Z1, Z2, Z3":         "AVX AVX512F",
		"VXORPS Z31, Z31, Z31":           "AVX AVX512DQ AVX512F",
		"VMOVUPS X16, (AX)":              "AVX AVX512F AVX512VL",
		"VPMADDWD Z1, Z2, Z3":            "AVX AVX512BW AVX512F",
		"VPDPBUSD.BCST 4(DI), Y16, Y9":   "AVX AVX512F AVX512VL AVX512VNNI",
		"VPXORD Y1, Y2, Y3":              "AVX AVX512F AVX512VL",
		"VCVTPS2PH $0, Z1, Y2":           "AVX AVX512F",
		"KORTESTW K1, K2":                "AVX512F",
		"VMOVUPS.Z (AX), K1, Y2":         "AVX AVX512F AVX512VL",
		"PREFETCHT0 512(AX)(SI*1)":       "",
		"VPINSRW $0, (AX)(SI*1), X8, X8": "AVX",
	} {
		got := instrExts(in)
		sort.Strings(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%q: %v, want %s", in, got, want)
		}
	}
}

var (
	reDefine = regexp.MustCompile(`^#define\s+(\w+)(?:\(([^)]*)\))?\s*(.*)$`)
	reText   = regexp.MustCompile(`^TEXT\s+·(\w+)\(SB\)`)
	reMnem   = regexp.MustCompile(`^([A-Z][A-Z0-9_.]*)\b\s*(.*)$`)
	reCall   = regexp.MustCompile(`^(\w+)(?:\((.*)\))?\s*$`)
)

// asmFunctions returns the instructions of each TEXT function of a Go
// assembly file, macros expanded, comments and labels dropped.
func asmFunctions(src string) map[string][]string {
	type macro struct {
		params []string
		body   []string
	}
	macros := map[string]macro{}
	var lines []string
	raw := strings.Split(src, "\n")
	for i := 0; i < len(raw); i++ {
		l := stripComment(raw[i])
		if m := reDefine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			var body []string
			rest := m[3]
			for {
				more := strings.HasSuffix(strings.TrimSpace(rest), `\`)
				rest = strings.TrimSuffix(strings.TrimSpace(rest), `\`)
				for _, part := range strings.Split(rest, ";") {
					if p := strings.TrimSpace(part); p != "" {
						body = append(body, p)
					}
				}
				if !more || i+1 >= len(raw) {
					break
				}
				i++
				rest = stripComment(raw[i])
			}
			var params []string
			for _, p := range strings.Split(m[2], ",") {
				if p = strings.TrimSpace(p); p != "" {
					params = append(params, p)
				}
			}
			macros[m[1]] = macro{params, body}
			continue
		}
		lines = append(lines, l)
	}
	var expand func(line string, depth int) []string
	expand = func(line string, depth int) []string {
		line = strings.TrimSpace(line)
		if m := reCall.FindStringSubmatch(line); m != nil && depth < 8 {
			if mac, ok := macros[m[1]]; ok {
				args := splitArgs(m[2])
				var out []string
				for _, b := range mac.body {
					for k, p := range mac.params {
						if k < len(args) {
							b = regexp.MustCompile(`\b`+regexp.QuoteMeta(p)+`\b`).ReplaceAllString(b, args[k])
						}
					}
					out = append(out, expand(b, depth+1)...)
				}
				return out
			}
		}
		if mac, ok := macros[strings.Fields(line + " x")[0]]; ok && len(mac.params) == 0 && depth < 8 {
			var out []string
			for _, b := range mac.body {
				out = append(out, expand(b, depth+1)...)
			}
			return out
		}
		return []string{line}
	}
	funcs := map[string][]string{}
	cur := ""
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if m := reText.FindStringSubmatch(s); m != nil {
			cur = m[1]
			funcs[cur] = nil
			continue
		}
		if cur == "" || s == "" || strings.HasSuffix(s, ":") || strings.HasPrefix(s, "#") {
			continue
		}
		for _, part := range strings.Split(s, ";") {
			for _, in := range expand(part, 0) {
				if reMnem.MatchString(in) {
					funcs[cur] = append(funcs[cur], in)
				}
			}
		}
	}
	return funcs
}

func stripComment(l string) string {
	if i := strings.Index(l, "//"); i >= 0 {
		return l[:i]
	}
	return l
}

// splitArgs splits a macro call's arguments at top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

var (
	reZ    = regexp.MustCompile(`\bZ\d+\b`)
	reY    = regexp.MustCompile(`\bY\d+\b`)
	reHi16 = regexp.MustCompile(`\b[XY](1[6-9]|2\d|3[01])\b`)
	reK    = regexp.MustCompile(`\bK[0-7]\b`)
)

// Instruction sets by mnemonic (Go's names).
var (
	// evexOnly have no VEX form.
	evexOnly = []string{"VPANDD", "VPANDQ", "VPORD", "VPORQ", "VPXORD", "VPXORQ", "VMOVDQU32", "VMOVDQU64", "VMOVDQU8", "VMOVDQU16",
		"VBROADCASTI32X4", "VBROADCASTI64X4", "VBROADCASTF32X4", "VBROADCASTF64X4", "VINSERTI32X4", "VINSERTI64X4", "VINSERTF32X4", "VINSERTF64X4",
		"VEXTRACTF32X4", "VEXTRACTF64X4", "VEXTRACTI32X4", "VEXTRACTI64X4", "VSHUFI32X4", "VSHUFF32X4", "VSHUFI64X2", "VSHUFF64X2",
		"VSCALEFPS", "VSCALEFPD", "VCOMPRESSPS", "VEXPANDPS", "VPERMT2PS", "VPERMI2PS", "VPTERNLOGD", "VPMOVDB", "VPMOVDW", "VPDPBUSD", "VPDPWSSD"}
	// dqOps need AVX512DQ in an EVEX form.
	dqOps = []string{"VXORPS", "VXORPD", "VANDPS", "VANDPD", "VORPS", "VORPD", "VANDNPS", "VANDNPD",
		"VINSERTF32X8", "VINSERTI32X8", "VEXTRACTF32X8", "VEXTRACTI32X8", "VBROADCASTF32X8", "VBROADCASTI32X8", "VPMULLQ", "KMOVB"}
	// bwOps need AVX512BW in an EVEX form: byte and word integer ops.
	bwOps = []string{"VPABSB", "VPABSW", "VPADDB", "VPADDW", "VPSUBB", "VPSUBW", "VPMADDUBSW", "VPMADDWD", "VPSRLW", "VPSLLW", "VPSRAW",
		"VPINSRW", "VPINSRB", "VPEXTRW", "VPEXTRB", "VPSHUFB", "VPMOVZXBW", "VPMOVSXBW", "VPCMPEQB", "VPCMPEQW", "VPMINUB", "VPMAXUB",
		"VPACKUSWB", "VPACKSSDW", "VPACKSSWB", "VPUNPCKLBW", "VPUNPCKHBW", "VPUNPCKLWD", "VPUNPCKHWD", "VMOVDQU8", "VMOVDQU16",
		"VPBROADCASTB", "VPBROADCASTW", "VPALIGNR", "VPERMW", "KMOVD", "KMOVQ"}
	// avx2Any are AVX2 at any width.
	avx2Any = []string{"VPBROADCASTB", "VPBROADCASTW", "VPBROADCASTD", "VPBROADCASTQ", "VPERMD", "VPERMQ", "VPERM2I128", "VPBLENDD",
		"VPSLLVD", "VPSRLVD", "VPSRAVD", "VPSLLVQ", "VPSRLVQ", "VPMASKMOVD", "VPMASKMOVQ", "VINSERTI128", "VEXTRACTI128",
		"VBROADCASTI128", "VPERMPS", "VPERMPD", "VPGATHERDD", "VGATHERDPS"}
	f16cOps = []string{"VCVTPH2PS", "VCVTPS2PH"}
	vnniOps = []string{"VPDPBUSD", "VPDPBUSDS", "VPDPWSSD", "VPDPWSSDS"}
)

// instrExts is the CPU extensions one instruction (Go assembly, macros
// expanded) needs.
func instrExts(in string) []string {
	m := reMnem.FindStringSubmatch(in)
	if m == nil {
		return nil
	}
	mnem, ops := m[1], m[2]
	base, suffix, _ := strings.Cut(mnem, ".")
	set := map[string]bool{}
	switch {
	case strings.HasPrefix(base, "K"):
		set["AVX512F"] = true
		if slices.Contains(dqOps, base) {
			set["AVX512DQ"] = true
		}
		if slices.Contains(bwOps, base) {
			set["AVX512BW"] = true
		}
	case strings.HasPrefix(base, "V"):
		set["AVX"] = true
		zmm := reZ.MatchString(ops)
		evex := zmm || reHi16.MatchString(ops) || reK.MatchString(ops) || suffix != "" || slices.Contains(evexOnly, base)
		if evex {
			set["AVX512F"] = true
			if !zmm {
				set["AVX512VL"] = true
			}
			if slices.Contains(dqOps, base) {
				set["AVX512DQ"] = true
			}
			if slices.Contains(bwOps, base) {
				set["AVX512BW"] = true
			}
			if slices.Contains(vnniOps, base) {
				set["AVX512VNNI"] = true
			}
			break
		}
		switch {
		case slices.Contains(f16cOps, base):
			set["F16C"] = true
		case strings.HasPrefix(base, "VFMADD") || strings.HasPrefix(base, "VFMSUB") || strings.HasPrefix(base, "VFNMADD") || strings.HasPrefix(base, "VFNMSUB"):
			set["FMA"] = true
		case slices.Contains(avx2Any, base):
			set["AVX2"] = true
		case (base == "VBROADCASTSS" || base == "VBROADCASTSD") && !strings.Contains(ops, "("):
			set["AVX2"] = true // from a register
		case strings.HasPrefix(base, "VP") && !strings.HasPrefix(base, "VPERMIL") && reY.MatchString(ops):
			set["AVX2"] = true // integer ops on 256 bits
		case base == "VMOVNTDQA" && reY.MatchString(ops):
			set["AVX2"] = true
		}
	}
	var out []string
	for e := range set {
		out = append(out, e)
	}
	return out
}

// guardedExts is the set of extensions the guards of function name check
// (the union of their cpu.FamilyExts).
func guardedExts(t *testing.T, name string, guards []string) map[string]bool {
	t.Helper()
	checked := map[string]bool{}
	for _, g := range guards {
		exts, ok := cpu.FamilyExts[g]
		if !ok {
			t.Fatalf("%s: guard %s is no family of cpu.FamilyExts", name, g)
		}
		for _, e := range exts {
			checked[e] = true
		}
	}
	return checked
}

// asmFunc is one TEXT function of an assembly file: its instructions.
type asmFunc struct {
	file, name string
	instrs     []string
}

// readAsm reads the functions of the assembly files matching pattern
// (below internal/ops/refmath), failing when there are none.
func readAsm(t *testing.T, pattern string) []asmFunc {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no assembly files %s: %v", pattern, err)
	}
	var fns []asmFunc
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, instrs := range asmFunctions(string(src)) {
			fns = append(fns, asmFunc{f, name, instrs})
		}
	}
	return fns
}
