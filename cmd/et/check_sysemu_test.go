package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/sysemu"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

func TestNewCheckSysemuCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    checkSysemuOptions
		wantErr string // non-empty: a usage error containing this
	}{
		{
			name: "defaults",
			want: checkSysemuOptions{Prefix: sysemu.Prefix{Dir: "/opt/et", Source: sysemu.SourceDefault}, ProbeTimeout: sysemu.DefaultProbeTimeout},
		},
		{
			name: "flags",
			args: []string{"--prefix", "/x/et/", "--run-dir", "run", "--kernels", "k", "--probe", "--probe-timeout", "3s"},
			env:  map[string]string{"ET_TOOLCHAIN": "/env/et", "GGML_ET_KERNELS_PATH": "/env/k"},
			want: checkSysemuOptions{Prefix: sysemu.Prefix{Dir: "/x/et", Source: sysemu.SourceFlag}, RunDir: "run", KernelsDir: "k", Probe: true, ProbeTimeout: 3 * time.Second},
		},
		{
			name: "environment",
			env:  map[string]string{"ET_TOOLCHAIN": "/env/et", "TOOLCHAIN_ROOT": "/root/et", "GGML_ET_KERNELS_PATH": "/env/k"},
			want: checkSysemuOptions{Prefix: sysemu.Prefix{Dir: "/env/et", Source: sysemu.SourceETToolchain}, KernelsDir: "/env/k", ProbeTimeout: sysemu.DefaultProbeTimeout},
		},
		{
			name: "toolchain root",
			env:  map[string]string{"TOOLCHAIN_ROOT": "/root/et"},
			want: checkSysemuOptions{Prefix: sysemu.Prefix{Dir: "/root/et", Source: sysemu.SourceToolchainRoot}, ProbeTimeout: sysemu.DefaultProbeTimeout},
		},
		{
			name: "empty kernels flag skips the environment",
			args: []string{"--kernels="},
			env:  map[string]string{"GGML_ET_KERNELS_PATH": "/env/k"},
			want: checkSysemuOptions{Prefix: sysemu.Prefix{Dir: "/opt/et", Source: sysemu.SourceDefault}, ProbeTimeout: sysemu.DefaultProbeTimeout},
		},
		{
			name: "et platform differs",
			env:  map[string]string{"ET_PLATFORM": "/other"},
			want: checkSysemuOptions{Prefix: sysemu.Prefix{Dir: "/opt/et", Source: sysemu.SourceDefault, Warnings: []string{"x"}}, ProbeTimeout: sysemu.DefaultProbeTimeout},
		},
		{name: "empty prefix", args: []string{"--prefix", ""}, wantErr: "--prefix: empty directory name"},
		{name: "empty run dir", args: []string{"--run-dir="}, wantErr: "--run-dir: empty directory name"},
		{name: "zero timeout", args: []string{"--probe-timeout", "0s"}, wantErr: "--probe-timeout: must be positive, got 0s"},
		{name: "bad timeout", args: []string{"--probe-timeout", "soon"}, wantErr: `invalid argument "soon" for "--probe-timeout"`},
		{name: "argument", args: []string{"extra"}, wantErr: `unknown command "extra"`}, // cobra's error; et prints it as an unexpected argument (TestUsageErrorLines)
		{name: "unknown flag", args: []string{"--bogus"}, wantErr: "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory(tt.env)
			f.Getwd = func() (string, error) { return "/work", nil }
			var got *checkSysemuOptions
			cmd := newCheckSysemuCmd(f, func(_ context.Context, o *checkSysemuOptions) error {
				got = o
				return nil
			})
			cmd.SetArgs(append([]string{}, tt.args...)) // never nil: nil means os.Args
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
			err := cmd.ExecuteContext(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if tt.name != "argument" && exitCode(err) != exitUsage {
					t.Errorf("exit code %d, want %d", exitCode(err), exitUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			if got.Prefix.Dir != w.Prefix.Dir || got.Prefix.Source != w.Prefix.Source || len(got.Prefix.Warnings) != len(w.Prefix.Warnings) ||
				got.RunDir != w.RunDir || got.KernelsDir != w.KernelsDir || got.Probe != w.Probe || got.ProbeTimeout != w.ProbeTimeout || got.Cwd != "/work" {
				t.Errorf("options = %+v\nwant %+v", *got, w)
			}
			if got.Check == nil || got.IO != f.IO {
				t.Error("seams not set")
			}
		})
	}
}

// checkSysemuFixture is a temp root with a sane install in et/ and a work
// directory, the current directory of the command.
type checkSysemuFixture struct {
	root, prefix string
}

func newCheckSysemuFixture(t *testing.T) checkSysemuFixture {
	root := t.TempDir()
	fx := checkSysemuFixture{root: root, prefix: filepath.Join(root, "et")}
	sysemutest.WriteInstall(t, fx.prefix)
	return fx
}

// run runs et with the fixture root as the current directory and returns
// the exit code and the streams with the root replaced by $TMP.
func (fx checkSysemuFixture) run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := testFactory(env)
	f.Getwd = func() (string, error) { return fx.root, nil }
	code := execute(context.Background(), f, args)
	clean := func(s string) string { return strings.ReplaceAll(s, fx.root, "$TMP") }
	return code, clean(out.String()), clean(errOut.String())
}

// breakInstall breaks the fixture the way real installs break.
func (fx checkSysemuFixture) breakInstall(t *testing.T) {
	fw := sysemutest.Firmware
	p := fx.prefix
	sysemutest.WriteFile(t, filepath.Join(p, fw[0].Path), []byte("<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n"), 0o644)
	os.Remove(filepath.Join(p, fw[1].Path))
	sysemutest.WriteFile(t, filepath.Join(p, fw[3].Path), fw[4].ELF.Bytes(), 0o644)
	lp64d := fw[4].ELF
	lp64d.Flags = 0x5
	sysemutest.WriteFile(t, filepath.Join(p, fw[4].Path), lp64d.Bytes(), 0o644)
	sysemutest.WriteFile(t, filepath.Join(p, "bin/sys_emu"), []byte(sysemutest.ScriptNoLibs), 0o755)
	os.Remove(filepath.Join(p, "include/runtime/Types.h"))
	k := filepath.Join(fx.root, "kernels")
	sysemutest.WriteKernels(t, k, "rope_f32", "softmax_f32")
	bad := sysemutest.Kernel()
	bad.Segments[1].Paddr += 0x40
	sysemutest.WriteFile(t, filepath.Join(k, "el_map_f32.elf"), bad.Bytes(), 0o644)
}

func TestCheckSysemuRun(t *testing.T) {
	sane := newCheckSysemuFixture(t)
	broken := newCheckSysemuFixture(t)
	broken.breakInstall(t)
	brokenArgs := []string{"check-sysemu", "--prefix", "et", "--kernels", "kernels", "--probe"}
	brokenEnv := map[string]string{"ET_PLATFORM": "/opt/et"}
	tests := []struct {
		name   string
		fx     checkSysemuFixture
		env    map[string]string
		args   []string
		code   int
		golden string // "" = no stdout check
		stderr string // substring; "" = stderr must be empty
	}{
		{"sane table", sane, map[string]string{"ET_TOOLCHAIN": sane.prefix}, []string{"check-sysemu"}, 0, "check_sysemu_sane_table", ""},
		{"sane json", sane, map[string]string{"ET_TOOLCHAIN": sane.prefix}, []string{"check-sysemu", "-o", "json"}, 0, "check_sysemu_sane_json", ""},
		{"broken table", broken, brokenEnv, brokenArgs, 1, "check_sysemu_broken_table", ""},
		{"broken json", broken, brokenEnv, append(brokenArgs, "-o", "json"), 1, "check_sysemu_broken_json", ""},
		{"broken yaml", broken, brokenEnv, append(brokenArgs, "-o", "yaml"), 1, "check_sysemu_broken_yaml", ""},
		{"broken csv", broken, brokenEnv, append(brokenArgs, "-o", "csv"), 1, "check_sysemu_broken_csv", ""},
		{"broken markdown", broken, brokenEnv, append(brokenArgs, "-o", "markdown"), 1, "check_sysemu_broken_markdown", ""},
		{"kernels from environment", sane, map[string]string{"GGML_ET_KERNELS_PATH": "nope"}, []string{"check-sysemu", "--prefix", sane.prefix, "-o", "csv"}, 1, "", ""},
		{"missing prefix", sane, nil, []string{"check-sysemu", "--prefix", "/nonexistent/et"}, 1, "", ""},
		{"bad flag", sane, nil, []string{"check-sysemu", "--bogus"}, 2, "", "et: unknown flag: --bogus\nRun 'et check-sysemu --help' for usage.\n"},
		{"bad output", sane, nil, []string{"check-sysemu", "-o", "xml"}, 2, "", `et: invalid output format "xml"`},
		{"bad timeout", sane, nil, []string{"check-sysemu", "--probe-timeout", "-1s"}, 2, "", "et: --probe-timeout: must be positive, got -1s\n"},
		{"argument", sane, nil, []string{"check-sysemu", "now"}, 2, "", `et: unexpected argument "now": et check-sysemu takes no arguments`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := tt.fx.run(t, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if tt.golden != "" {
				assertGolden(t, tt.golden, []byte(out))
			}
			if tt.stderr == "" && errOut != "" {
				t.Errorf("unexpected stderr %q", errOut)
			}
			if tt.stderr != "" {
				if !strings.Contains(errOut, tt.stderr) {
					t.Errorf("stderr %q does not contain %q", errOut, tt.stderr)
				}
				if out != "" {
					t.Errorf("stdout on a usage error: %q", out)
				}
			}
		})
	}
}

// TestCheckSysemuJSONKeys pins the key set of et.check-sysemu/v1.
func TestCheckSysemuJSONKeys(t *testing.T) {
	fx := newCheckSysemuFixture(t)
	code, out, _ := fx.run(t, nil, "check-sysemu", "--prefix", fx.prefix, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedKeys(doc), "checks ok prefix prefix_source schema"; got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	if doc["schema"] != "et.check-sysemu/v1" || doc["prefix_source"] != "--prefix" || doc["ok"] != true {
		t.Errorf("doc %v", doc)
	}
	checks := doc["checks"].([]any)
	if got, want := sortedKeys(checks[0].(map[string]any)), "detail id path status"; got != want {
		t.Errorf("check keys %q, want %q", got, want)
	}
}

func sortedKeys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// TestCheckSysemuInterrupted: a cancelled context ends the command with
// 130 and no verdict.
func TestCheckSysemuInterrupted(t *testing.T) {
	fx := newCheckSysemuFixture(t)
	f, out, errOut := testFactory(nil)
	f.Getwd = func() (string, error) { return fx.root, nil }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := execute(ctx, f, []string{"check-sysemu", "--prefix", fx.prefix})
	if code != exitInterrupted || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
