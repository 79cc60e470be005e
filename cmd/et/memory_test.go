package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Memory before allocation (issue 33): cases, buffers and params that do
// not fit are refused with the figures (exit 2) before anything is
// allocated, and planning and explaining allocate no tensor data. Every
// run here passes --max-host-memory, so that no machine runs them.
func TestMemoryBeforeAllocation(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte("name: big\ntensors:\n  a: {type: f32, ne: [4096, 4096, 1024]}\nnodes:\n  - {name: s, op: scale, src: [a], params: {scale: 2}}\n"), 0o644)
	add64 := "ADD(type=f32,ne=[4096,4096,1024,1],nr=[1,1,1,1],nf=1)"
	mm16 := "MUL_MAT(type_a=f32,type_b=f32,m=65536,n=1,k=65536,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1)"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"explain a 64 GiB case", []string{"run-op", "-f", big, "--explain"}, exitOK, "scale_f32"},
		{"ops explain a 64 GiB case", []string{"ops", "explain", "-f", big}, exitOK, "scale_f32"},
		{"ops explain a 16 GiB MUL_MAT", []string{"ops", "explain", mm16}, exitOK, "mul_mat"},
		{"run a 64 GiB case", []string{"run-op", "-f", big, "--max-host-memory", "8G"},
			exitUsage, big + ": the case (inputs, results and the device copy) needs about 256 GiB of host memory, 8 GiB is allowed by --max-host-memory"},
		{"run a 64 GiB case string", []string{"run-op", add64, "--max-host-memory", "8G"}, exitUsage, "needs about 384 GiB of host memory"},
		{"run a 16 GiB MUL_MAT", []string{"run-op", mm16, "--max-host-memory", "8G"}, exitUsage, "needs about 32.0 GiB of host memory"},
		{"run-kernel 16 GiB buffer", []string{"run-kernel", "k.elf", "--buf", "a=16G", "--max-host-memory", "1G"},
			exitUsage, "et: the run (buffers, their device copies, dumps) needs about 32.0 GiB of host memory, 1 GiB is allowed by --max-host-memory"},
		{"bad --max-host-memory", []string{"run-op", add64, "--max-host-memory", "lots"}, exitUsage, `invalid size "lots"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tt.code, tt.want)
			}
		})
	}
}

// Every input has a bound, and a regular file over it is refused before
// it is read (sparse files of 1 TiB here cost nothing).
func TestInputBounds(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o644); err != nil || os.Truncate(path, 1<<40) != nil {
			t.Skip("no sparse files here")
		}
		return path
	}
	yaml, abiFile, trace := sparse("case.yaml"), sparse("abi.yaml"), sparse("kmap.json")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"case file", []string{"run-op", "-f", yaml}, yaml + ": cannot read: 1 TiB, over the 64 MiB that et reads for it"},
		{"test file", []string{"ops", "support", "--test-file", yaml}, yaml + ": cannot read: 1 TiB, over the 64 MiB"},
		{"--abi", []string{"ops", "list", "--abi", abiFile}, abiFile + ": cannot read the ABI manifest: 1 TiB, over the 64 MiB"},
		{"--abi /dev/zero", []string{"ops", "list", "--abi", "/dev/zero"}, "/dev/zero: cannot read the ABI manifest: not a regular file and longer than 64 MiB"},
		{"kernel map", []string{"profile", "report", "testdata/profile/et_runtime_trace.json", "--kernel-map", trace}, trace},
		{"--arg pad", []string{"run-kernel", "k.elf", "--arg", "pad:1048576", "--arg", "pad:1"}, "over the 1024 KiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

// --perf-runs and --perf-warmup are bounded (--perf-runs 1000000000
// --perf-time 0 ran silently for minutes).
func TestPerfRunsCap(t *testing.T) {
	for _, flag := range []string{"--perf-runs", "--perf-warmup"} {
		code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--perf", flag, "1000000000", "--perf-time", "0")
		if code != exitUsage || !strings.Contains(errOut, "must be at most 100000") {
			t.Errorf("%s 1000000000: exit %d, stderr %q", flag, code, errOut)
		}
	}
}
