package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/ainekko/et/internal/driver/pcie/pcietest"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/pcie"
	"github.com/ainekko/et/internal/sysemu"
)

// devicesFixture builds a pcie sysfs scenario in a temporary directory.
func devicesFixture(t *testing.T, scenario string) (sysRoot, devRoot string) {
	t.Helper()
	return pcietest.Fixture(t, filepath.Join("..", "..", "internal", "driver", "pcie", "testdata", "sysfs", scenario))
}

// devicesTestNode is a healthy probed node.
func devicesTestNode(bdf string) *pcie.FakeNode {
	return &pcie.FakeNode{
		State:   pcie.StateReady,
		PCIName: bdf,
		SQCount: 4,
		Config: pcie.DevConfig{TotalL3KB: 32768, TotalL2KB: 16384, TotalScratchKB: 81920, DDRBandwidthMBps: 128000,
			MinionBootMHz: 1000, CMShireMask: 0xFFFFFFFF, FormFactor: 1, TDPW: 75, CacheLineBytes: 64,
			NumL2CacheBanks: 4, SyncMinShireID: 32},
		DRAM: pcie.DRAMInfo{Base: 0x8005801000, SizeBytes: 0x7FA600000, DMAMaxElemBytes: 128 << 20, DMAMaxElemCount: 8, AlignInBits: 64},
	}
}

func TestNewDevicesCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    devicesOptions
		wantErr string
	}{
		{name: "defaults", args: nil,
			want: devicesOptions{SysfsRoot: "/sys", DevRoot: "/dev"}},
		{name: "all flags", args: []string{"--kind", "ref", "--kind", "pcie", "--sysfs-root", "/s", "--dev-root", "/d", "--prefix", "/opt/x", "--probe", "--require", "2"},
			want: devicesOptions{Kinds: []driver.Kind{driver.KindPCIe, driver.KindRef}, SysfsRoot: "/s", DevRoot: "/d", Prefix: "/opt/x", Probe: true, Require: 2}},
		{name: "comma kinds deduplicated", args: []string{"--kind", "sysemu,pcie,sysemu"},
			want: devicesOptions{Kinds: []driver.Kind{driver.KindPCIe, driver.KindSysemu}, SysfsRoot: "/sys", DevRoot: "/dev"}},
		{name: "verbose", args: []string{"-v"},
			want: devicesOptions{SysfsRoot: "/sys", DevRoot: "/dev", Verbose: true}},
		{name: "bogus kind", args: []string{"--kind", "bogus"}, wantErr: `--kind: unknown device kind "bogus" (want pcie, sysemu or ref)`},
		{name: "negative require", args: []string{"--require", "-1"}, wantErr: "--require: want a count >= 0, got -1"},
		{name: "require not a number", args: []string{"--require", "x"}, wantErr: `invalid argument "x" for "--require" flag`},
		{name: "empty sysfs root", args: []string{"--sysfs-root", ""}, wantErr: "--sysfs-root and --dev-root must not be empty"},
		{name: "argument", args: []string{"extra"}, wantErr: `unexpected argument "extra": et devices takes no arguments`},
		{name: "unknown flag", args: []string{"--bogus"}, wantErr: "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *devicesOptions
			code, errOut := devicesExecute(t, append([]string{"devices"}, tt.args...), func(_ context.Context, o *devicesOptions) error {
				got = o
				return nil
			})
			if tt.wantErr != "" {
				if code != exitUsage {
					t.Errorf("exit code = %d, want %d", code, exitUsage)
				}
				lines := strings.Split(strings.TrimSpace(errOut), "\n")
				if !strings.HasPrefix(lines[0], "et: "+tt.wantErr) {
					t.Errorf("stderr = %q, want first line to start with %q", errOut, "et: "+tt.wantErr)
				}
				return
			}
			if code != 0 || got == nil {
				t.Fatalf("exit code %d, stderr %q", code, errOut)
			}
			g := *got
			if strings.Join(kindNames(g.Kinds), ",") != strings.Join(kindNames(tt.want.Kinds), ",") ||
				g.SysfsRoot != tt.want.SysfsRoot || g.DevRoot != tt.want.DevRoot || g.Prefix != tt.want.Prefix ||
				g.Probe != tt.want.Probe || g.Require != tt.want.Require || g.Verbose != tt.want.Verbose {
				t.Errorf("options = %+v\nwant      %+v", g, tt.want)
			}
			if g.ScanPCIe == nil || g.CheckSysemu == nil || g.Getenv == nil || g.Getwd == nil {
				t.Error("backends not set")
			}
		})
	}
}

func kindNames(ks []driver.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// devicesExecute runs the root command with the devices command built with
// runF, so flags go through the real parser and the real error path.
func devicesExecute(t *testing.T, args []string, runF func(context.Context, *devicesOptions) error) (int, string) {
	t.Helper()
	f, _, errOut := testFactory(nil)
	root := newRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "devices" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newDevicesCmd(f, runF))
	code := executeRoot(context.Background(), f, root, args)
	return code, errOut.String()
}

// TestDevicesExamples parses every Example: line of et devices.
func TestDevicesExamples(t *testing.T) {
	f, _, _ := testFactory(nil)
	ex := newDevicesCmd(f, nil).Example
	lines := strings.Split(ex, "\n")
	if len(lines) < 3 {
		t.Fatalf("too few examples: %q", ex)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "  $ et devices") {
			t.Errorf("example %q does not start with \"  $ et devices\"", l)
			continue
		}
		args := strings.Fields(strings.TrimPrefix(l, "  $ et "))
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ran := false
			code, errOut := devicesExecute(t, args, func(context.Context, *devicesOptions) error { ran = true; return nil })
			if code != 0 || !ran {
				t.Errorf("exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// devicesTestEnv is one TestDevicesRun setup.
type devicesTestEnv struct {
	scenario string // pcie fixture, "" for none
	sysemu   string // "", "installed" or "incomplete"
	nodes    func(dev string) map[string]*pcie.FakeNode
}

// devicesTestOpts builds options on fixtures and fakes, and returns a
// function that replaces the temporary paths in output.
func devicesTestOpts(t *testing.T, f *factory, env devicesTestEnv) (*devicesOptions, func(string) string) {
	t.Helper()
	sys, dev := t.TempDir(), t.TempDir()
	if env.scenario != "" {
		sys, dev = devicesFixture(t, env.scenario)
	}
	// The prefix is relative to the (injected) current directory, so
	// tables do not depend on the temporary directory's name.
	cwd := t.TempDir()
	prefix := "et-install"
	if env.sysemu != "" {
		if err := os.Mkdir(filepath.Join(cwd, prefix), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := &pcie.Fake{}
	if env.nodes != nil {
		fake.Nodes = env.nodes(dev)
	}
	t.Cleanup(func() {
		if fake.OpenNow != 0 || fake.MaxOpen > 1 {
			t.Errorf("device nodes: %d left open, %d open at once", fake.OpenNow, fake.MaxOpen)
		}
	})
	opts := &devicesOptions{
		IO:        f.IO,
		SysfsRoot: sys,
		DevRoot:   dev,
		Prefix:    prefix,
		Verbose:   f.Global.Verbose,
		Getenv:    func(string) string { return "" },
		Getwd:     func() (string, error) { return cwd, nil },
		Nodes:     fake,
		ScanPCIe:  pcie.Scan,
		CheckSysemu: func(_ context.Context, o sysemu.Options) sysemu.Report {
			if o.Prefix.Dir != prefix {
				t.Errorf("sysemu checked %q, want %q", o.Prefix.Dir, prefix)
			}
			rep := sysemu.Report{Prefix: o.Prefix, Results: []sysemu.Result{{ID: "prefix", Status: sysemu.StatusOK}}}
			if env.sysemu == "incomplete" {
				rep.Results = append(rep.Results,
					sysemu.Result{ID: "firmware.bl2", Status: sysemu.StatusFail, Detail: "missing"},
					sysemu.Result{ID: "sys_emu", Status: sysemu.StatusFail, Detail: "missing"})
			}
			return rep
		},
		f: f,
	}
	clean := func(s string) string {
		s = strings.ReplaceAll(s, dev, "$DEV")
		s = strings.ReplaceAll(s, sys, "$SYS")
		return strings.ReplaceAll(s, cwd, "$CWD")
	}
	return opts, clean
}

func twoDeviceNodes(dev string) map[string]*pcie.FakeNode {
	n0, n1 := devicesTestNode("0000:01:00.0"), devicesTestNode("0000:41:00.0")
	n1.State = pcie.StatePendingCommands
	return map[string]*pcie.FakeNode{
		filepath.Join(dev, "et0_mgmt"): n0, filepath.Join(dev, "et0_ops"): n0,
		filepath.Join(dev, "et1_mgmt"): n1, filepath.Join(dev, "et1_ops"): {OpenErr: syscall.EBUSY},
	}
}

func TestDevicesRun(t *testing.T) {
	tests := []struct {
		name       string
		env        devicesTestEnv
		output     string
		verbose    bool
		probe      bool
		kinds      []driver.Kind
		wantStderr string
	}{
		{name: "ref_only", output: "table"},
		{name: "two_devices", env: devicesTestEnv{scenario: "two-devices", sysemu: "installed"}, output: "table"},
		{name: "two_devices_verbose", env: devicesTestEnv{scenario: "two-devices", sysemu: "installed"}, output: "table", verbose: true,
			wantStderr: "et: pcie: 2 ET device(s) under $SYS\net: sysemu: install at $CWD/et-install (from --prefix): installed\n"},
		{name: "two_devices_json", env: devicesTestEnv{scenario: "two-devices", sysemu: "installed"}, output: "json"},
		{name: "two_devices_yaml", env: devicesTestEnv{scenario: "two-devices"}, output: "yaml"},
		{name: "two_devices_csv", env: devicesTestEnv{scenario: "two-devices", sysemu: "installed"}, output: "csv"},
		{name: "two_devices_markdown", env: devicesTestEnv{scenario: "two-devices", sysemu: "installed"}, output: "markdown"},
		{name: "probe_verbose", env: devicesTestEnv{scenario: "two-devices", nodes: twoDeviceNodes}, output: "table", verbose: true, probe: true,
			kinds: []driver.Kind{driver.KindPCIe}, wantStderr: "et: pcie: 2 ET device(s) under $SYS\n"},
		{name: "probe_json", env: devicesTestEnv{scenario: "two-devices", nodes: twoDeviceNodes}, output: "json", probe: true,
			kinds: []driver.Kind{driver.KindPCIe}},
		{name: "no_driver", env: devicesTestEnv{scenario: "no-driver"}, output: "table"},
		{name: "recovery", env: devicesTestEnv{scenario: "recovery"}, output: "table",
			wantStderr: "et: warning: 1 et*_mgmt but 0 et*_ops nodes in $DEV: the runtime refuses every device (\"Only Mgmt can be enabled in recovery mode\")\n"},
		{name: "old_driver", env: devicesTestEnv{scenario: "old-driver"}, output: "table"},
		{name: "bound_verbose", env: devicesTestEnv{scenario: "bound"}, output: "table", verbose: true, kinds: []driver.Kind{driver.KindPCIe},
			wantStderr: "et: pcie: 1 ET device(s) under $SYS\n"},
		{name: "sysemu_incomplete", env: devicesTestEnv{sysemu: "incomplete"}, output: "table", kinds: []driver.Kind{driver.KindSysemu}},
		{name: "sysemu_incomplete_json", env: devicesTestEnv{sysemu: "incomplete"}, output: "json", kinds: []driver.Kind{driver.KindSysemu}},
		{name: "empty", env: devicesTestEnv{scenario: "no-driver"}, output: "json", kinds: []driver.Kind{driver.KindSysemu}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := testFactory(nil)
			f.Global.Output, f.Global.Verbose = tt.output, tt.verbose
			opts, clean := devicesTestOpts(t, f, tt.env)
			opts.Probe, opts.Kinds = tt.probe, tt.kinds
			if err := devicesRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if got := clean(errOut.String()); got != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", got, tt.wantStderr)
			}
			plain := clean(out.String())
			assertGolden(t, "devices/"+tt.name, []byte(plain))
			if tt.output == "json" {
				var v map[string]any
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("invalid JSON: %v", err)
				}
				if v["schema"] != "et.devices/v1" {
					t.Errorf("schema = %v", v["schema"])
				}
			}
			if tt.output != "table" {
				return
			}
			// The same run on a terminal differs only by colour.
			f2, out2, _ := testFactory(nil)
			f2.Global.Output, f2.Global.Verbose = tt.output, tt.verbose
			f2.IO.OutTTY, f2.IO.Color = true, true
			opts2, clean2 := devicesTestOpts(t, f2, tt.env)
			opts2.Probe, opts2.Kinds = tt.probe, tt.kinds
			if err := devicesRun(context.Background(), opts2); err != nil {
				t.Fatal(err)
			}
			if got := stripANSI(clean2(out2.String())); got != plain {
				t.Errorf("TTY output differs beyond colour:\n%s\n--- non-TTY\n%s", got, plain)
			}
		})
	}
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// TestDevicesJSONKeys pins the key set of et.devices/v1: adding a key is
// fine (update the list), renaming or removing one needs /v2.
func TestDevicesJSONKeys(t *testing.T) {
	keys := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				keys[path+"."+k] = true
				walk(path+"."+k, c)
			}
		case []any:
			for _, c := range x {
				walk(path+"[]", c)
			}
		}
	}
	// Between them, these runs produce every key.
	for _, env := range []devicesTestEnv{
		{scenario: "two-devices", sysemu: "installed", nodes: func(dev string) map[string]*pcie.FakeNode {
			n := twoDeviceNodes(dev)
			n[filepath.Join(dev, "et1_mgmt")] = &pcie.FakeNode{OpenErr: syscall.EBUSY}
			return n
		}},
		{scenario: "recovery"},
	} {
		f, out, _ := testFactory(nil)
		f.Global.Output = "json"
		opts, _ := devicesTestOpts(t, f, env)
		opts.Probe = true
		if err := devicesRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		walk("", v)
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	sort.Strings(got)
	want := []string{
		".devices", ".devices[].assumed_properties", ".devices[].bdf",
		".devices[].counters", ".devices[].counters[].file", ".devices[].counters[].name",
		".devices[].counters[].unit", ".devices[].counters[].value",
		".devices[].detail", ".devices[].devnum", ".devices[].driver", ".devices[].driver_version",
		".devices[].driver_version_ok", ".devices[].index", ".devices[].kind", ".devices[].name",
		".devices[].nodes", ".devices[].nodes.mgmt", ".devices[].nodes.ops",
		".devices[].numa_node", ".devices[].pci_id",
		".devices[].pcie_link", ".devices[].pcie_link.max_speed", ".devices[].pcie_link.max_width",
		".devices[].pcie_link.speed", ".devices[].pcie_link.width",
		".devices[].prefix",
		".devices[].probe", ".devices[].probe.mgmt", ".devices[].probe.mgmt.error",
		".devices[].probe.mgmt.pci_name", ".devices[].probe.mgmt.result", ".devices[].probe.mgmt.sq_count",
		".devices[].probe.mgmt.state",
		".devices[].probe.ops", ".devices[].probe.ops.error", ".devices[].probe.ops.p2p_bitmap",
		".devices[].probe.ops.pci_name", ".devices[].probe.ops.result", ".devices[].probe.ops.sq_count",
		".devices[].probe.ops.state",
		".devices[].properties", ".devices[].properties.arch", ".devices[].properties.available_shires",
		".devices[].properties.cache_line_bytes", ".devices[].properties.compute_shire_mask",
		".devices[].properties.dram_base", ".devices[].properties.form_factor",
		".devices[].properties.frequency_mhz", ".devices[].properties.l2_bytes",
		".devices[].properties.l2_cache_banks", ".devices[].properties.l3_bytes",
		".devices[].properties.memory_bandwidth_mbps", ".devices[].properties.memory_bytes",
		".devices[].properties.scratchpad_bytes", ".devices[].properties.spare_shire_id",
		".devices[].properties.tdp_w",
		".devices[].status", ".devices[].usable",
		".schema", ".warnings",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("JSON keys changed:\n got: %q\nwant: %q", got, want)
	}
	for _, k := range got {
		last := k[strings.LastIndex(k, ".")+1:]
		if last != strings.ToLower(last) || strings.Contains(last, "-") {
			t.Errorf("key %s is not snake_case", k)
		}
	}
}

func TestDevicesRequire(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		args     []string
		want     int
		wantErr  string
	}{
		{"ref satisfies 1", "no-driver", []string{"--require", "1"}, 0, ""},
		{"no usable pcie", "no-driver", []string{"--kind", "pcie", "--require", "1"}, exitUnavailable,
			"et: --require 1: 0 usable device(s) of kind pcie\n"},
		{"two pcie ready", "two-devices", []string{"--kind", "pcie", "--require", "2"}, 0, ""},
		{"three wanted", "two-devices", []string{"--kind", "pcie", "--kind", "ref", "--require", "4"}, exitUnavailable,
			"et: --require 4: 3 usable device(s) of kind pcie|ref\n"},
		{"recovery is not usable", "recovery", []string{"--kind", "pcie", "--require", "1", "-o", "json"}, exitUnavailable,
			"et: warning: 1 et*_mgmt but 0 et*_ops nodes in $DEV: the runtime refuses every device (\"Only Mgmt can be enabled in recovery mode\")\net: --require 1: 0 usable device(s) of kind pcie\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys, dev := devicesFixture(t, tt.scenario)
			args := append([]string{"devices", "--sysfs-root", sys, "--dev-root", dev, "--prefix", filepath.Join(t.TempDir(), "none")}, tt.args...)
			code, out, errOut := runCLI(t, nil, args...)
			if code != tt.want {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.want, errOut)
			}
			if got := strings.ReplaceAll(errOut, dev, "$DEV"); got != tt.wantErr {
				t.Errorf("stderr = %q, want %q", got, tt.wantErr)
			}
			if out == "" {
				t.Error("nothing printed: the list comes before the verdict")
			}
		})
	}
}

// TestDevicesDefault is what a new user sees on a machine with no ET
// hardware and no install: the reference device.
func TestDevicesDefault(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "devices", "--sysfs-root", t.TempDir(), "--dev-root", t.TempDir(), "--prefix", filepath.Join(t.TempDir(), "none"))
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	assertGolden(t, "devices/default", []byte(out))
}

func TestFmtBytes(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {12 << 20, "12 MiB"},
		{1 << 35, "32 GiB"}, {17085497344, "15.9 GiB"}, {0x7FA600000, "31.9 GiB"},
	}
	for _, tt := range tests {
		if got := fmtBytes(tt.in); got != tt.want {
			t.Errorf("fmtBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestDevicesBadFlags runs the real command: a bad flag exits 2 with one
// error line (plus the usage hint) before anything is scanned.
func TestDevicesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"devices", "--kind", "bogus"},
		{"devices", "--require", "-3"},
		{"devices", "--probe=maybe"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != exitUsage || out != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "et: ") ||
				lines[1] != "Run 'et devices --help' for usage." {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}
