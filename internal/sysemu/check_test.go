package sysemu

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// install writes a sane install and returns options that check it.
func install(t *testing.T) Options {
	t.Helper()
	root := t.TempDir()
	prefix := filepath.Join(root, "et")
	sysemutest.WriteInstall(t, prefix)
	cwd := filepath.Join(root, "work")
	os.Mkdir(cwd, 0o755)
	return Options{Prefix: Prefix{Dir: prefix, Source: SourceFlag}, Cwd: cwd}
}

func statuses(r Report) map[string]Status {
	m := map[string]Status{}
	for _, res := range r.Results {
		m[res.ID] = res.Status
	}
	return m
}

func ids(r Report) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.ID)
	}
	return out
}

func TestCheckSaneInstall(t *testing.T) {
	opts := install(t)
	r := Check(context.Background(), opts)
	want := []string{"prefix", "firmware.bootrom", "firmware.bl2", "firmware.machine_minion", "firmware.master_minion",
		"firmware.worker_minion", "sys_emu", "run_dir", "cwd", "dev.runtime_cmake", "dev.device_layer_cmake", "dev.runtime_headers"}
	if got := ids(r); !slices.Equal(got, want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
	for _, res := range r.Results {
		if res.Status != StatusOK {
			t.Errorf("%s: %s %s", res.ID, res.Status, res.Detail)
		}
	}
	if !r.OK() || len(r.Failed()) != 0 || r.Count(StatusOK) != len(want) {
		t.Errorf("OK() = %v, Failed() = %v", r.OK(), r.Failed())
	}
	if got := r.Results[0].Detail; got != "install prefix (from --prefix)" {
		t.Errorf("prefix detail %q", got)
	}
	if r.Results[len(want)-5].Path != opts.Cwd {
		t.Errorf("run_dir path %q, want the cwd %q", r.Results[len(want)-5].Path, opts.Cwd)
	}
}

func TestCheckBrokenInstall(t *testing.T) {
	opts := install(t)
	p := opts.Prefix.Dir
	fw := sysemutest.Firmware
	// Break every firmware file in a different way.
	sysemutest.WriteFile(t, filepath.Join(p, fw[0].Path), []byte("<html><body>Not Found</body></html>"), 0o644)
	os.Remove(filepath.Join(p, fw[1].Path))
	sysemutest.WriteFile(t, filepath.Join(p, fw[2].Path), nil, 0o644)
	sysemutest.WriteFile(t, filepath.Join(p, fw[3].Path), fw[4].ELF.Bytes(), 0o644) // WM copied over MM
	lp64d := fw[4].ELF
	lp64d.Flags = 0x5
	sysemutest.WriteFile(t, filepath.Join(p, fw[4].Path), lp64d.Bytes(), 0o644)
	os.Chmod(filepath.Join(p, "bin/sys_emu"), 0o644)
	os.RemoveAll(filepath.Join(p, "lib/cmake/deviceLayer"))
	os.Remove(filepath.Join(p, "include/runtime/Types.h"))
	opts.RunDir = filepath.Join(opts.Cwd, "no-such-run-dir")
	opts.Prefix.Warnings = []string{"ET_PLATFORM=/opt/other differs"}

	r := Check(context.Background(), opts)
	want := map[string]Status{
		"prefix": StatusOK, "prefix.et_platform": StatusWarn,
		"firmware.bootrom": StatusFail, "firmware.bl2": StatusFail, "firmware.machine_minion": StatusFail,
		"firmware.master_minion": StatusFail, "firmware.worker_minion": StatusFail,
		"sys_emu": StatusWarn, "run_dir": StatusFail, "cwd": StatusOK,
		"dev.runtime_cmake": StatusOK, "dev.device_layer_cmake": StatusWarn, "dev.runtime_headers": StatusWarn,
	}
	if got := statuses(r); !mapsEqual(got, want) {
		t.Errorf("statuses = %v\nwant %v", got, want)
	}
	if r.OK() || len(r.Failed()) != 6 {
		t.Errorf("OK() = %v, %d failed", r.OK(), len(r.Failed()))
	}
	details := map[string]string{
		"firmware.bootrom":        "not an ELF file: an HTML page",
		"firmware.bl2":            "missing -> ggml-et aborts at startup",
		"firmware.machine_minion": "empty file (0 bytes)",
		"firmware.master_minion":  "entry 0x8000c00000 outside MasterMinion SCODE [0x8000800000, 0x8000c00000)",
		"firmware.worker_minion":  "lp64d float ABI (e_flags 0x5)",
		"sys_emu":                 "not executable (mode -rw-r--r--)",
		"run_dir":                 "no such directory -> sys_emu logs FATAL",
		"dev.runtime_headers":     "missing runtime/Types.h",
	}
	for _, res := range r.Results {
		if want, ok := details[res.ID]; ok && !strings.Contains(res.Detail, want) {
			t.Errorf("%s detail %q does not contain %q", res.ID, res.Detail, want)
		}
	}
	if d := r.Results[2].Detail; !strings.Contains(d, "sys_emu silently loads it as nothing") {
		t.Errorf("bootrom detail lacks the emulator's behaviour: %q", d)
	}
}

func mapsEqual(a, b map[string]Status) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCheckMissingPrefix(t *testing.T) {
	cwd := t.TempDir()
	r := Check(context.Background(), Options{Prefix: Prefix{Dir: "no/such", Source: SourceETToolchain}, Cwd: cwd})
	if r.Results[0].Status != StatusFail || r.Results[0].Path != filepath.Join(cwd, "no/such") {
		t.Errorf("prefix result %+v", r.Results[0])
	}
	if !strings.Contains(r.Results[0].Detail, "from ET_TOOLCHAIN") {
		t.Errorf("prefix detail %q", r.Results[0].Detail)
	}
	if len(r.Failed()) != 7 { // prefix, five firmware files, sys_emu
		t.Errorf("%d failed: %v", len(r.Failed()), r.Failed())
	}
}

func TestCheckWritableDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	logDir := t.TempDir()
	os.Mkdir(filepath.Join(logDir, "sysemu.log"), 0o755)
	tests := []struct {
		name, dir string
		status    Status
		detail    string
	}{
		{"ok", dir, StatusOK, "writable; what"},
		{"missing", filepath.Join(dir, "nope"), StatusFail, "no such directory -> effect"},
		{"file", file, StatusFail, "not a directory -> effect"},
		{"log is a directory", logDir, StatusFail, "sysemu.log is a directory -> effect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checkWritableDir("cwd", tt.dir, sysemuLogs, "what", "effect")
			if r.Status != tt.status || r.Detail != tt.detail {
				t.Errorf("got %s %q, want %s %q", r.Status, r.Detail, tt.status, tt.detail)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the probe file was left behind: %v", entries)
	}
	t.Run("read-only", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root can write a read-only directory")
		}
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		r := checkWritableDir("cwd", ro, nil, "what", "effect")
		if r.Status != StatusFail || !strings.HasPrefix(r.Detail, "not writable: permission denied") {
			t.Errorf("got %s %q", r.Status, r.Detail)
		}
	})
}

func TestCheckKernels(t *testing.T) {
	opts := install(t)
	dir := filepath.Join(opts.Cwd, "kernels")
	sysemutest.WriteKernels(t, dir, "rope_f32", "my_new_kernel")
	bad := sysemutest.Kernel()
	bad.Segments[1].Memsz = 8 // < filesz: loadCode's CHECK aborts
	sysemutest.WriteFile(t, filepath.Join(dir, "el_map_f32.elf"), bad.Bytes(), 0o644)
	// .bss (memsz > filesz) and an empty .riscv.attributes segment, as
	// the real kernels have: both load and run.
	bss := sysemutest.Kernel()
	bss.Segments[1].Memsz += 0x40
	bss.Sections = append(bss.Sections, sysemutest.Section{Name: ".bss", Type: sysemutest.SHTNobits, Flags: sysemutest.SHFAlloc, Addr: sysemutest.KernelBase + 0x1080, Size: 0x40})
	bss.Segments = append([]sysemutest.Segment{{Type: 0x70000003, Flags: 4, Off: 0x2100, Filesz: 63}}, bss.Segments...)
	sysemutest.WriteFile(t, filepath.Join(dir, "softmax_f32.elf"), bss.Bytes(), 0o644)
	sysemutest.WriteFile(t, filepath.Join(dir, "README.md"), []byte("not a kernel"), 0o644)
	opts.KernelsDir = "kernels" // relative to Cwd
	opts.KernelsSource = "--kernels"
	opts.ExpectedKernels = []string{"el_map_f32", "rope_f32", "softmax_f32", "unary_f32", "clamp_f32"}

	r := Check(context.Background(), opts)
	var got []Result
	for _, res := range r.Results {
		if strings.HasPrefix(res.ID, "kernel") {
			got = append(got, res)
		}
	}
	want := []struct {
		id     string
		status Status
		detail string
	}{
		{"kernels", StatusOK, "4 kernel ELFs (--kernels)"},
		{"kernel.el_map_f32", StatusFail, "segment 1: memsz 8 < filesz 128 -> the runtime's loadCode fails CHECK(memSize >= fileSize)"},
		{"kernel.my_new_kernel", StatusOK, "; not a kernel name ggml-et uses"},
		{"kernel.rope_f32", StatusOK, "RV64 EXEC lp64f (e_flags 0x2), entry 0x8005801000, 2 PT_LOAD"},
		{"kernel.softmax_f32", StatusOK, "entry 0x8005801000, 2 PT_LOAD, 8864 bytes (+64 zero-filled)"},
		{"kernels.missing", StatusWarn, "2 of 5 kernels ggml-et uses are absent (ggml-et falls back to its embedded copies): clamp_f32 unary_f32"},
	}
	if len(got) != len(want) {
		t.Fatalf("kernel results: %+v", got)
	}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Status != w.status || !strings.Contains(got[i].Detail, w.detail) {
			t.Errorf("result %d = %+v, want %s %s containing %q", i, got[i], w.id, w.status, w.detail)
		}
		if got[i].ID != "kernels" && got[i].ID != "kernels.missing" && filepath.Dir(got[i].Path) != dir {
			t.Errorf("%s path %q not in %q", got[i].ID, got[i].Path, dir)
		}
	}
	if r.OK() {
		t.Error("a bad kernel must fail the report")
	}

	opts.KernelsDir = filepath.Join(opts.Cwd, "nope")
	r = Check(context.Background(), opts)
	last := r.Results[len(r.Results)-1]
	if last.ID != "kernels" || last.Status != StatusFail || !strings.Contains(last.Detail, "no such file or directory") {
		t.Errorf("missing kernels dir: %+v", last)
	}
}
