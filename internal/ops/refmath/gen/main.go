// Gen writes the generated Go assembly of package refmath: the register
// tiles of ggml's tinyBLAS order (sgemm: mulmat_sgemm_amd64.s), the
// AVX-512VL f32 and f16 register tiles (tile4: mulmat_tile4_amd64.s) and
// the AVX-512 VNNI kernels of the quantized MulMat (vnni:
// mulmat_vnni_amd64.s). Each file's go:generate line, beside the Go
// declarations of its functions, runs it from internal/ops/refmath:
//
//	go run ./gen [-dir DIR] {sgemm|tile4|vnni}...
//
// It writes each named file into DIR (default: the current directory);
// the same program writes the same bytes. The functions' Go declarations
// (names, frame sizes, argument layout) live in the refmath files that
// carry the go:generate lines; a change here must keep them.
//
// Gen imports only the standard library.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// file is one generated assembly file: its name in internal/ops/refmath
// and the function that writes its text.
type file struct {
	name string
	text func() string
}

// files are the generated files by the argument that names them.
var files = map[string]file{
	"sgemm": {"mulmat_sgemm_amd64.s", sgemmFile},
	"tile4": {"mulmat_tile4_amd64.s", tile4File},
	"vnni":  {"mulmat_vnni_amd64.s", vnniFile},
}

func main() {
	dir := flag.String("dir", ".", "the folder the files are written into")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./gen [-dir DIR] {sgemm|tile4|vnni}... (from internal/ops/refmath)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	for _, arg := range flag.Args() {
		f, ok := files[arg]
		if !ok {
			fmt.Fprintf(os.Stderr, "gen: unknown file %q (want sgemm, tile4 or vnni)\n", arg)
			os.Exit(2)
		}
		if err := os.WriteFile(filepath.Join(*dir, f.name), []byte(f.text()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

// lines collects a file's text a line at a time; a line may hold several
// (a string with newlines).
type lines []string

func (l *lines) add(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

func (l lines) String() string { return strings.Join(l, "\n") + "\n" }

// off is an address's displacement as the files write it: none for 0.
func off(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
