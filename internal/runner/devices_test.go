package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/sysemu"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// The kernel ELFs a run loads are read before anything boots: missing
// ones are listed (et exits 3), an unusable one is bad input (2), and no
// kernel folder is a usage error (2, with the usage hint).
func TestLoadKernelELFs(t *testing.T) {
	dir := t.TempDir()
	sysemutest.WriteKernels(t, dir, "a", "b")
	os.WriteFile(filepath.Join(dir, "bad.elf"), []byte("<html>"), 0o644)
	env := func(k string) string { return map[string]string{KernelsPathEnv: dir}[k] }
	target := func(kernels string, getenv func(string) string) *Target {
		return &Target{Spec: registry.Spec{Host: registry.Host{Getenv: getenv}}, Kernels: kernels}
	}
	elfs, err := target("", env).kernelELFs([]string{"a", "b"})
	if err != nil || len(elfs) != 2 || len(elfs["a"]) == 0 {
		t.Fatalf("load = %v, %v", len(elfs), err)
	}
	var mk *sysemu.MissingKernelsError
	_, err = target(dir, env).kernelELFs([]string{"a", "c", "d", "bad"})
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "2 kernel ELF(s) missing from "+dir+", nothing booted: c.elf, d.elf") {
		t.Errorf("missing: %v", err)
	}
	var ie interface{ InputError() }
	_, err = target(dir, env).kernelELFs([]string{"a", "bad"})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "bad.elf: not an ELF") {
		t.Errorf("bad: %v", err)
	}
	var ue *UsageError
	if _, err := target("", func(string) string { return "" }).kernelELFs([]string{"a"}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--kernels") {
		t.Errorf("no dir: %v", err)
	}
}
