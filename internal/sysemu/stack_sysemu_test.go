//go:build sysemu

package sysemu

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stackDirs returns the install ($ET_TOOLCHAIN) and the kernel folders of
// a real ET stack: its upstream test kernels and $GGML_ET_KERNELS_PATH
// when set. It skips when there is no install.
func stackDirs(t *testing.T) (prefix string, kernelDirs []string) {
	t.Helper()
	prefix = os.Getenv("ET_TOOLCHAIN")
	if prefix == "" {
		t.Skip("ET_TOOLCHAIN is unset: no ET install to check")
	}
	if fi, err := os.Stat(prefix); err != nil || !fi.IsDir() {
		t.Skipf("ET_TOOLCHAIN=%s is not a directory", prefix)
	}
	up := filepath.Join(prefix, "lib", "esperanto-fw", "kernels")
	if fi, err := os.Stat(up); err == nil && fi.IsDir() {
		kernelDirs = append(kernelDirs, up)
	}
	if k := os.Getenv("GGML_ET_KERNELS_PATH"); k != "" {
		kernelDirs = append(kernelDirs, k)
	}
	return prefix, kernelDirs
}

// Every kernel of the real stack loads and runs on the emulator (the
// upstream test kernels and the ggml-et kernels): none may fail.
func TestStackKernelsPass(t *testing.T) {
	prefix, dirs := stackDirs(t)
	if len(dirs) == 0 {
		t.Skip("no kernel folder in the install and GGML_ET_KERNELS_PATH unset")
	}
	for _, dir := range dirs {
		r := Check(context.Background(), Options{Prefix: Prefix{Dir: prefix, Source: SourceETToolchain}, Cwd: t.TempDir(), KernelsDir: dir})
		n := 0
		for _, res := range r.Results {
			if res.Status == StatusFail {
				t.Errorf("%s: %s: %s", res.ID, res.Path, res.Detail)
			}
			if strings.HasPrefix(res.ID, "kernel.") {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no kernel checked", dir)
		}
		t.Logf("%s: %d kernels, %d failed, %d warnings", dir, n, r.Count(StatusFail), r.Count(StatusWarn))
	}
}

// The checks still catch a broken kernel when it is a real one: each
// real kernel, patched to have memsz < filesz in its first loaded
// segment, or an entry outside its code, fails with that reason.
func TestStackKernelsBroken(t *testing.T) {
	_, dirs := stackDirs(t)
	var files []string
	for _, dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, "*.elf"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no kernel ELFs")
	}
	le := binary.LittleEndian
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		phoff, phentsize := le.Uint64(data[32:]), uint64(le.Uint16(data[54:]))
		load := -1
		for i, p := range f.Progs {
			if p.Type&elf.PT_LOAD != 0 && p.Memsz > 0 && p.Filesz > 1 {
				load = i
				break
			}
		}
		if load < 0 {
			t.Fatalf("%s: no loaded segment with file bytes", path)
		}
		ph := phoff + uint64(load)*phentsize

		short := slices.Clone(data)
		le.PutUint64(short[ph+40:], f.Progs[load].Filesz-1) // p_memsz
		if _, ps := CheckELFData(bytes.NewReader(short), int64(len(short)), KernelSpec); !slices.Contains(codes(ps), "memsz") {
			t.Errorf("%s with memsz < filesz: problems %v", path, ps)
		}

		away := slices.Clone(data)
		le.PutUint64(away[24:], f.Entry-0x1000) // e_entry before the code
		if _, ps := CheckELFData(bytes.NewReader(away), int64(len(away)), KernelSpec); !slices.Equal(codes(ps), []string{"entry"}) {
			t.Errorf("%s with the entry moved out: problems %v", path, ps)
		}

		dbl := slices.Clone(data)
		le.PutUint32(dbl[48:], le.Uint32(dbl[48:])&^0x6|0x4) // lp64d
		if _, ps := CheckELFData(bytes.NewReader(dbl), int64(len(dbl)), KernelSpec); !slices.Equal(codes(ps), []string{"float_abi"}) {
			t.Errorf("%s as lp64d: problems %v", path, ps)
		}
	}
}
