package sysemutest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// HostELF returns a (non-runnable) ELF executable header for this host's
// architecture, enough to pass a "binary for this host" check.
func HostELF() []byte {
	m := uint16(EMX8664)
	switch runtime.GOARCH {
	case "arm64":
		m = EMAArch64
	case "riscv64":
		m = EMRISCV
	}
	return ELF{Machine: m, Type: ETExec, Entry: 0x401000,
		Segments: []Segment{{Flags: 5, Vaddr: 0x400000, Paddr: 0x400000, Filesz: 0x100, Memsz: 0x100}},
	}.Bytes()
}

// Scripts for a fake bin/sys_emu.
const (
	// ScriptOK behaves like sys_emu -help: banner on stdout, exit 1.
	ScriptOK = "#!/bin/sh\necho 'ET System Emulator'\necho 'Usage: sys_emu [options]'\nexit 1\n"
	// ScriptExit0 prints the banner but exits 0.
	ScriptExit0 = "#!/bin/sh\necho 'ET System Emulator'\nexit 0\n"
	// ScriptNoLibs fails like a binary whose shared libraries are missing.
	ScriptNoLibs = "#!/bin/sh\necho 'sys_emu: error while loading shared libraries: libsw-sysemu.so: cannot open shared object file' >&2\nexit 127\n"
)

// ScriptHang returns a script that starts a background child, writes its
// own pid and the child's pid to pidFile (one per line), and waits forever.
func ScriptHang(pidFile string) string {
	return "#!/bin/sh\nsleep 300 &\necho $$ > '" + pidFile + "'\necho $! >> '" + pidFile + "'\nwait\n"
}

// WriteFile writes data at path, creating parent directories.
func WriteFile(t testing.TB, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// WriteInstall writes a sane install below prefix: the five firmware ELFs,
// bin/sys_emu (a host ELF header that cannot run; overwrite it with a
// script to probe), the runtime and deviceLayer CMake packages and the
// runtime headers.
func WriteInstall(t testing.TB, prefix string) {
	t.Helper()
	for _, fw := range Firmware {
		WriteFile(t, filepath.Join(prefix, fw.Path), fw.ELF.Bytes(), 0o644)
	}
	WriteFile(t, filepath.Join(prefix, "bin/sys_emu"), HostELF(), 0o755)
	for _, p := range []string{
		"lib/cmake/runtime/runtimeConfig.cmake",
		"lib/cmake/deviceLayer/deviceLayerConfig.cmake",
		"include/runtime/IRuntime.h",
		"include/runtime/Types.h",
		"include/device-layer/IDeviceLayer.h",
		"include/sw-sysemu/SysEmuOptions.h",
	} {
		WriteFile(t, filepath.Join(prefix, p), []byte("// fake\n"), 0o644)
	}
}

// WriteKernels writes a valid kernel ELF for each name into dir.
func WriteKernels(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		WriteFile(t, filepath.Join(dir, n+".elf"), Kernel().Bytes(), 0o644)
	}
}
