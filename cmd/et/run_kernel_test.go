package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver/etrt"
	"github.com/ainekko/et/internal/kernelargs"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// writeKernelFile writes a valid kernel ELF named name.elf into a new
// temporary directory and returns its path.
func writeKernelFile(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	sysemutest.WriteKernels(t, dir, name)
	return filepath.Join(dir, name+".elf")
}

func TestNewRunKernelCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(*testing.T, *runKernelOptions)
	}{
		{name: "full", args: []string{"k/add_one.elf", "--buf", "x=4K:pattern", "--buf", "y=0x100", "--arg", "u32:7",
			"--arg", "u64:@x+0x10", "--arg", "f32:0.5", "--arg", "i16:-2", "--dump", "y=out.bin", "--shire-mask", "0x1",
			"--backend", "sysemu", "--run-dir", "r", "--sysemu-opt=-l", "--timeout", "2m", "--flush-l3", "--no-barrier"},
			check: func(t *testing.T, o *runKernelOptions) {
				wantBufs := []kernelargs.Buf{{Name: "x", Size: 4096, Init: "pattern"}, {Name: "y", Size: 256, Init: "zeros"}}
				if o.ELF != "k/add_one.elf" || o.Name != "add_one" || !reflect.DeepEqual(o.Bufs, wantBufs) {
					t.Errorf("options %+v", o)
				}
				if len(o.Args) != 4 || o.Args[1].Ref != "x" || o.Args[1].Off != 16 || !bytes.Equal(o.Args[0].Data, []byte{7, 0, 0, 0}) ||
					!bytes.Equal(o.Args[3].Data, []byte{0xfe, 0xff}) {
					t.Errorf("args %+v", o.Args)
				}
				if o.ShireMask != 1 || !o.FlushL3 || !o.NoBarrier || o.Target.Backend != "sysemu" || o.Target.RunDir != "r" ||
					o.Target.Timeout != 2*time.Minute || !reflect.DeepEqual(o.Target.SysemuOpts, []string{"-l"}) ||
					!reflect.DeepEqual(o.Dumps, []kernelargs.Dump{{Name: "y", File: "out.bin"}}) {
					t.Errorf("options %+v", o)
				}
			}},
		{name: "no elf", args: nil, wantErr: "accepts 1 arg"},
		{name: "buf without size", args: []string{"k.elf", "--buf", "x"}, wantErr: `--buf "x": want NAME=SIZE[:INIT]`},
		{name: "buf bad size", args: []string{"k.elf", "--buf", "x=12Q"}, wantErr: `--buf "x=12Q": invalid size "12Q"`},
		{name: "buf zero size", args: []string{"k.elf", "--buf", "x=0"}, wantErr: `--buf "x=0": invalid size`},
		{name: "buf twice", args: []string{"k.elf", "--buf", "x=4", "--buf", "x=8"}, wantErr: "buffer x given twice"},
		{name: "buf bad name", args: []string{"k.elf", "--buf", "1x=4"}, wantErr: `name "1x"`},
		{name: "buf too big", args: []string{"k.elf", "--buf", "x=99G"}, wantErr: "over the 16 GiB limit"},
		{name: "arg no type", args: []string{"k.elf", "--arg", "7"}, wantErr: `--arg "7": want TYPE:VALUE`},
		{name: "arg bad type", args: []string{"k.elf", "--arg", "u24:7"}, wantErr: `--arg "u24:7": unknown type "u24"`},
		{name: "arg bad value", args: []string{"k.elf", "--arg", "u32:x"}, wantErr: `--arg "u32:x": invalid u32 value "x"`},
		{name: "arg overflow", args: []string{"k.elf", "--arg", "u8:256"}, wantErr: `invalid u8 value "256": value out of range`},
		{name: "arg unknown buffer", args: []string{"k.elf", "--arg", "u64:@y"}, wantErr: `--arg "u64:@y": no --buf named "y"`},
		{name: "arg narrow address", args: []string{"k.elf", "--buf", "x=4", "--arg", "u32:@x"}, wantErr: "a buffer address is 64 bits"},
		{name: "arg bad align", args: []string{"k.elf", "--arg", "align:3"}, wantErr: "a power of two"},
		{name: "dump unknown buffer", args: []string{"k.elf", "--dump", "y=f"}, wantErr: `--dump "y=f": no --buf named "y"`},
		{name: "dump no file", args: []string{"k.elf", "--buf", "y=4", "--dump", "y"}, wantErr: `--dump "y": want NAME=FILE`},
		{name: "bad mask", args: []string{"k.elf", "--shire-mask", "zz"}, wantErr: `--shire-mask "zz"`},
		{name: "mask beyond the master shire", args: []string{"k.elf", "--shire-mask", "0x1FFFFFFFFFF"}, wantErr: `--shire-mask "0x1FFFFFFFFFF": want compute shires`},
		{name: "mask without a compute shire", args: []string{"k.elf", "--shire-mask", "0x100000000"}, wantErr: `--shire-mask "0x100000000"`},
		{name: "bad backend", args: []string{"k.elf", "--backend", "gpu"}, wantErr: `invalid --backend "gpu"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, errOut := testFactory(nil)
			var got *runKernelOptions
			root := newRootCmd(f)
			replaceCmd(root, newRunKernelCmd(f, func(_ context.Context, o *runKernelOptions) error { got = o; return nil }))
			code := executeRoot(context.Background(), f, root, append([]string{"run-kernel"}, tt.args...))
			if tt.wantErr != "" {
				if code != exitUsage || !strings.Contains(errOut.String(), tt.wantErr) {
					t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.wantErr)
				}
				return
			}
			if code != 0 || got == nil {
				t.Fatalf("exit %d (stderr %s)", code, errOut)
			}
			tt.check(t, got)
		})
	}
}

// TestRunKernelExamples parses every Example: line of et run-kernel.
func TestRunKernelExamples(t *testing.T) {
	f, _, _ := testFactory(nil)
	lines := strings.Split(newRunKernelCmd(f, nil).Example, "\n")
	if len(lines) < 3 {
		t.Fatalf("too few examples: %q", lines)
	}
	for _, line := range lines {
		args, ok := strings.CutPrefix(line, "  $ et ")
		if !ok {
			t.Errorf("example %q does not start with '  $ et '", line)
			continue
		}
		f, _, errOut := testFactory(nil)
		root := newRootCmd(f)
		ran := false
		replaceCmd(root, newRunKernelCmd(f, func(context.Context, *runKernelOptions) error { ran = true; return nil }))
		if code := executeRoot(context.Background(), f, root, strings.Fields(args)); code != 0 || !ran {
			t.Errorf("%s: exit %d, stderr %s", line, code, errOut)
		}
	}
}

func TestRunKernelRef(t *testing.T) {
	t.Run("unknown kernel", func(t *testing.T) {
		code, out, errOut := runCLI(t, nil, "run-kernel", writeKernelFile(t, "my_kernel"), "--buf", "x=64")
		if code != exitUnavailable || out != "" || !strings.Contains(errOut, "runs only its built-in models of the ggml-et kernels") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	t.Run("dump onto an input", func(t *testing.T) {
		// --dump naming the buffer's own init file, or the ELF, is
		// refused and the file kept (issue 33).
		elf := writeKernelFile(t, "rms_norm_f32")
		init := filepath.Join(t.TempDir(), "x.bin")
		os.WriteFile(init, []byte("input"), 0o644)
		for _, dump := range []string{init, elf} {
			before, _ := os.ReadFile(dump)
			code, _, errOut := runCLI(t, nil, "run-kernel", elf, "--buf", "x=64:"+init, "--arg", "pad:680", "--dump", "x="+dump)
			if code != exitUsage || !strings.Contains(errOut, "refusing to overwrite an input") {
				t.Errorf("--dump %s: exit %d, stderr %q", dump, code, errOut)
			}
			if after, _ := os.ReadFile(dump); string(after) != string(before) {
				t.Errorf("--dump %s overwrote it", dump)
			}
		}
	})
	t.Run("built-in kernel by name", func(t *testing.T) {
		dump := filepath.Join(t.TempDir(), "x.bin")
		code, out, errOut := runCLI(t, nil, "run-kernel", writeKernelFile(t, "rms_norm_f32"), "--buf", "x=64:pattern",
			"--arg", "pad:680", "--dump", "x="+dump, "-o", "json")
		// All-zero params: the model rejects the absent tensors, as the
		// kernel would, with a stream error.
		if code != exitNegative {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc["schema"] != "et.run-kernel/v1" || doc["status"] != "fault" || doc["args_bytes"] != 680.0 {
			t.Errorf("doc %v", doc)
		}
		assertKeys(t, "top", doc, "args", "args_bytes", "backend", "barrier", "buffers", "device", "dumps", "elf", "elf_bytes",
			"faults", "flush_l3", "kernel", "schema", "shire_mask", "status", "time_ns", "warnings")
		if !strings.Contains(errOut, "built-in model of rms_norm_f32") {
			t.Errorf("stderr %q", errOut)
		}
		b, err := os.ReadFile(dump)
		if err != nil || len(b) != 64 || b[4] != 1 {
			t.Errorf("dump = %v, %v", b, err)
		}
	})
	t.Run("not an ELF", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "k.elf")
		os.WriteFile(p, []byte("<html>"), 0o644)
		code, _, errOut := runCLI(t, nil, "run-kernel", p)
		if code != exitUsage || !strings.Contains(errOut, "not an ELF") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("missing ELF", func(t *testing.T) {
		code, _, errOut := runCLI(t, nil, "run-kernel", filepath.Join(t.TempDir(), "k.elf"))
		if code != exitUsage || !strings.Contains(errOut, "k.elf") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestRunKernelNotBuilt(t *testing.T) {
	if etrt.Built {
		t.Skip("this binary has a runtime shim")
	}
	for _, backend := range []string{"sysemu", "pcie"} {
		code, _, errOut := runCLI(t, nil, "run-kernel", writeKernelFile(t, "k"), "--backend", backend)
		if code != exitUnavailable || !strings.Contains(errOut, backend+" backend: backend not built") {
			t.Errorf("%s: exit %d, stderr %q", backend, code, errOut)
		}
	}
}

// replaceCmd swaps the root's subcommand of the same name for c.
func replaceCmd(root, c *cobra.Command) {
	for _, old := range root.Commands() {
		if old.Name() == c.Name() {
			root.RemoveCommand(old)
		}
	}
	root.AddCommand(c)
}
