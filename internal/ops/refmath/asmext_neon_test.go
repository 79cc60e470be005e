package refmath

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// asmGuardsArm64 names, for every function of the reference math's arm64
// assembly, the kernel families (cpu.Kernels fields, cpu.FamilyExts keys)
// whose check guards each call of it.
var asmGuardsArm64 = map[string][]string{
	"q8_0Rows8NEON": {"NEON"}, "q4_0Rows8NEON": {"NEON"}, "q8_0Rows8x2NEON": {"NEON"}, "q4_0Rows8x2NEON": {"NEON"},
	"q8_0Rows8DOT": {"NEON", "DotProd"}, "q4_0Rows8DOT": {"NEON", "DotProd"},
	"q8_0Rows8x2DOT": {"NEON", "DotProd"}, "q4_0Rows8x2DOT": {"NEON", "DotProd"},
	"f32Dot8NEON": {"NEON"}, "f16Dot8NEON": {"NEON"},
	"sgemmF32Tile2x2NEON": {"NEON"}, "sgemmF32Tile2x1NEON": {"NEON"},
	"sgemmF16Tile2x2NEON": {"NEON"}, "sgemmF16Tile2x1NEON": {"NEON"},
}

// TestAsmExtensionsGuardedArm64 is TestAsmExtensionsGuarded for the arm64
// assembly (on every host: it reads the files): every function has an
// entry in asmGuardsArm64, every instruction's extension (the WORDs
// decoded: SDOT and UDOT need the dot product, ASIMDDP) is one its guards'
// families check, and every Go call of a function guarded by DotProd lies
// under a test of Kernels.DotProd (an if or a switch case naming it).
func TestAsmExtensionsGuardedArm64(t *testing.T) {
	fns := readAsm(t, "*/*_arm64.s")
	dots := 0
	for _, fn := range fns {
		f, name, instrs := fn.file, fn.name, fn.instrs
		guards, ok := asmGuardsArm64[name]
		if !ok {
			t.Errorf("%s: %s has no entry in asmGuardsArm64", f, name)
			continue
		}
		checked := guardedExts(t, name, guards)
		for _, in := range instrs {
			exts, err := instrExtsArm64(in)
			if err != nil {
				t.Errorf("%s: %s: %v", f, name, err)
			}
			for _, e := range exts {
				if e == "ASIMDDP" {
					dots++
				}
				if !checked[e] {
					t.Errorf("%s: %s: %q needs %s, which its guards %v do not check", f, name, in, e, guards)
				}
			}
		}
	}
	if seen := len(fns); seen < len(asmGuardsArm64) {
		t.Errorf("read %d functions, asmGuardsArm64 names %d: a stale entry?", seen, len(asmGuardsArm64))
	}
	if dots == 0 {
		t.Error("no SDOT found: the decoder is broken")
	}
	checkDotProdCalls(t, "mulmat")
}

// checkDotProdCalls fails where a Go file of dir calls a function whose
// guards include DotProd outside an if or switch case that names DotProd.
func checkDotProdCalls(t *testing.T, dir string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok || !slices.Contains(asmGuardsArm64[id.Name], "DotProd") {
				return true
			}
			calls++
			for _, p := range slices.Backward(stack) {
				var conds []ast.Expr
				switch p := p.(type) {
				case *ast.IfStmt:
					conds = []ast.Expr{p.Cond}
				case *ast.CaseClause:
					conds = p.List
				}
				for _, c := range conds {
					if namesDotProd(c) {
						return true
					}
				}
			}
			t.Errorf("%s: %s called outside a test of Kernels.DotProd", fset.Position(call.Pos()), id.Name)
			return true
		})
	}
	if calls == 0 {
		t.Errorf("%s: no call of the SDOT kernels found", dir)
	}
}

// namesDotProd reports whether e reads a DotProd field as a condition
// that must hold (not under a negation).
func namesDotProd(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.UnaryExpr:
			return n.Op != token.NOT
		case *ast.BinaryExpr:
			return n.Op == token.LAND
		case *ast.SelectorExpr:
			if n.Sel.Name == "DotProd" {
				found = true
			}
		}
		return true
	})
	return found
}

// instrExtsArm64 is the CPU extensions beyond the ARMv8.0 base one
// instruction of Go's arm64 assembly (macros expanded) needs: its WORD
// decoded (SDOT and UDOT, vector or by element: ASIMDDP), or Go's
// mnemonics of the SHA-3 and PMULL extensions.
func instrExtsArm64(in string) ([]string, error) {
	m := reMnem.FindStringSubmatch(in)
	if m == nil {
		return nil, nil
	}
	switch m[1] {
	case "WORD":
		tv, err := types.Eval(token.NewFileSet(), nil, token.NoPos, strings.TrimPrefix(strings.TrimSpace(m[2]), "$"))
		if err != nil || tv.Value == nil {
			return nil, err
		}
		w, ok := constantUint32(tv)
		if !ok {
			return nil, nil
		}
		if w&0xbfe0fc00 == 0x0e809400 || w&0xbfe0fc00 == 0x2e809400 || // SDOT, UDOT (vector)
			w&0xbfc0f400 == 0x0f80e000 || w&0xbfc0f400 == 0x2f80e000 { // by element
			return []string{"ASIMD", "ASIMDDP"}, nil
		}
		if w&0x9f000000 == 0x0e000000 || w&0x9f000000 == 0x0f000000 { // Advanced SIMD
			return []string{"ASIMD"}, nil
		}
		return nil, fmt.Errorf("%q: a WORD this test does not decode (teach instrExtsArm64 its extension)", in)
	case "VEOR3", "VBCAX", "VRAX1", "VXAR":
		return []string{"ASIMD", "SHA3"}, nil
	case "VPMULL", "VPMULL2":
		return []string{"ASIMD", "PMULL"}, nil
	}
	if strings.HasPrefix(m[1], "V") {
		return []string{"ASIMD"}, nil
	}
	return nil, nil
}

// constantUint32 is tv's value as a uint32 word.
func constantUint32(tv types.TypeAndValue) (uint32, bool) {
	w, exact := constant.Uint64Val(tv.Value)
	return uint32(w), exact && w <= 0xffffffff
}
