package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoKernelFlags: no package-level boolean picks a kernel in the
// packages with CPU kernels (issue "One core, one way"): the choice is
// the Kernels value of refmath/cpu (or a lane count chosen once and
// passed). It reads every file of those packages, whatever its build
// constraints, and fails on a package-level variable of type bool or
// whose value is a boolean expression (true, false, !x, x && y, x == y,
// a CPU feature check).
func TestNoKernelFlags(t *testing.T) {
	// Booleans that are facts of the machine, not choices.
	allowed := map[string]string{"HostLE": "the byte order: f32 rows are copied as bytes on little-endian hosts"}
	for _, root := range []string{"ops"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					if _, ok := allowed[vs.Names[0].Name]; ok {
						continue
					}
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "bool" {
						t.Errorf("%s: package-level bool %s", path, vs.Names[0].Name)
					}
					for i, v := range vs.Values {
						if boolExpr(v) {
							t.Errorf("%s: package-level %s is a boolean (a kernel flag?)", path, vs.Names[min(i, len(vs.Names)-1)].Name)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// boolExpr reports whether e is evidently a boolean expression.
func boolExpr(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "true" || e.Name == "false"
	case *ast.UnaryExpr:
		return e.Op == token.NOT
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND, token.LOR, token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return true
		}
	case *ast.ParenExpr:
		return boolExpr(e.X)
	case *ast.SelectorExpr: // cpu.X86.HasAVX2
		return strings.HasPrefix(e.Sel.Name, "Has")
	case *ast.CallExpr: // archsimd.X86.AVX512(), cpuidF16C()
		if s, ok := e.Fun.(*ast.SelectorExpr); ok {
			if x, ok := s.X.(*ast.SelectorExpr); ok && x.Sel.Name == "X86" {
				return true
			}
		}
		if id, ok := e.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, "cpuid") {
			return true
		}
	}
	return false
}
