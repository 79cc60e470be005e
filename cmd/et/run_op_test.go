package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/etrt"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/runner"
)

func TestNewRunOpCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(*testing.T, *runOpOptions)
	}{
		{name: "files", args: []string{"-f", "a.yaml", "-f", "dir", "--uberkernel", "--seed", "7"}, check: func(t *testing.T, o *runOpOptions) {
			if !reflect.DeepEqual(o.Files, []string{"a.yaml", "dir"}) || !o.Uberkernel || o.Seed != 7 || !o.SeedSet {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "op flags", args: []string{"rms_norm", "--src", "x=f32:64x2", "--param", "eps=1e-5"}, check: func(t *testing.T, o *runOpOptions) {
			if o.Op != "rms_norm" || len(o.Srcs) != 1 || len(o.Params) != 1 || o.Backend != "ref" || o.SeedSet {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "case string", args: []string{"MUL_MAT(type_a=q8_0,type_b=f32,m=32,n=1,k=32)", "--perf", "--perf-runs", "3"}, check: func(t *testing.T, o *runOpOptions) {
			if !o.Perf || o.PerfRuns != 3 {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "nothing", args: nil, wantErr: "nothing to run"},
		{name: "both", args: []string{"add", "-f", "x.yaml"}, wantErr: "give either files"},
		{name: "case strings and --cases", args: []string{"ADD(type=f32)", "--cases", "c.txt"}, wantErr: "give either files"},
		{name: "two ops", args: []string{"add", "mul"}, wantErr: `"add" is not a case string OP(k=v,...): several arguments must all be case strings`},
		{name: "case string and op", args: []string{"ADD(type=f32)", "mul"}, wantErr: `"mul" is not a case string`},
		{name: "case strings", args: []string{"ADD(type=f32)", "MUL(type=f32)"}, check: func(t *testing.T, o *runOpOptions) {
			if o.Op != "" || !reflect.DeepEqual(o.CaseArgs, []string{"ADD(type=f32)", "MUL(type=f32)"}) {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "cases file", args: []string{"--cases", "a.txt", "--cases", "b.txt"}, check: func(t *testing.T, o *runOpOptions) {
			if o.Op != "" || !reflect.DeepEqual(o.CaseFiles, []string{"a.txt", "b.txt"}) {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "src without op", args: []string{"-f", "x.yaml", "--src", "a=f32:4"}, wantErr: "--src and --param go with an op name"},
		{name: "bad backend", args: []string{"-f", "x.yaml", "--backend", "gpu"}, wantErr: `invalid --backend "gpu"`},
		{name: "bad runs", args: []string{"-f", "x.yaml", "--perf-runs", "0"}, wantErr: "--perf-runs"},
		{name: "bad perf time", args: []string{"-f", "x.yaml", "--perf-time", "-1s"}, wantErr: "--perf-time"},
		{name: "bad flag", args: []string{"-f", "x.yaml", "--bogus"}, wantErr: "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, errOut := testFactory(nil)
			var got *runOpOptions
			root := newRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "run-op" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(newRunOpCmd(f, func(_ context.Context, o *runOpOptions) error { got = o; return nil }))
			code := executeRoot(context.Background(), f, root, append([]string{"run-op"}, tt.args...))
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

func TestRunOpAllTestcasesPass(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 4096-wide llama layer")
	}
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	cases := map[string]int{}
	for _, r := range doc.Results {
		cases[r.Case]++
		if r.Status == "FAIL" {
			t.Errorf("%s/%s failed: %s", r.Case, r.Node, r.Detail)
		}
	}
	for _, want := range []string{"mul_mat", "binary", "norm", "soft_max", "rope", "glu", "unary", "get_rows", "copy", "flash_attn", "views", "llama_layer_small", "llama_layer_4096"} {
		if cases[want] == 0 {
			t.Errorf("case %s produced no results", want)
		}
	}
}

func TestRunOpJSONKeys(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/norm.yaml", "-o", "json", "--perf", "--perf-runs", "2", "--perf-warmup", "0", "--perf-time", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "et.run-op/v1" {
		t.Errorf("schema %v", doc["schema"])
	}
	assertKeys(t, "top", doc, "abi_checked", "backend", "counts", "device", "launches", "numerics", "perf", "phases", "results", "schema")
	assertKeys(t, "counts", doc["counts"].(map[string]any), "fail", "fallback", "outputs", "pass", "skip", "xfail", "xpass")
	res := doc["results"].([]any)
	fused := res[len(res)-1].(map[string]any)
	assertKeys(t, "result", fused, "case", "drift_nmse", "fusion", "kernel", "max_abs_err", "max_nmse", "nmse", "node", "op", "output", "status", "time_ns")
	assertKeys(t, "perf", doc["perf"].([]any)[0].(map[string]any), "batch", "bytes", "bytes_per_s", "case", "clock", "flops", "kernel", "max_ns", "median_ns", "min_ns", "nodes", "runs", "shires")
	// Every launch of the judged runs has its row; the phases add up to
	// the total.
	if n := len(doc["launches"].([]any)); n == 0 {
		t.Errorf("no launches")
	}
	ph := doc["phases"].(map[string]any)
	sum := 0.0
	for _, k := range []string{"boot_ns", "inputs_ns", "upload_ns", "launch_ns", "perf_ns", "download_ns", "judge_ns", "other_ns"} {
		sum += ph[k].(float64)
	}
	if sum != ph["total_ns"].(float64) || sum <= 0 {
		t.Errorf("phases %v add up to %v, want total_ns > 0", ph, sum)
	}
}

func assertKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s keys = %v, want %v", what, got, want)
	}
}

func TestRunOpExplainGolden(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/mul_mat.yaml", "--explain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	assertGolden(t, "run_op_explain_mul_mat", []byte(out))
	code, out, _ = runCLI(t, nil, "run-op", "-f", "../../testcases/llama_layer_small.yaml", "--explain", "--uberkernel", "-o", "markdown")
	if code != 0 {
		t.Fatal(code)
	}
	assertGolden(t, "run_op_explain_llama_small_md", []byte(out))
}

func TestRunOpForms(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"op flags", []string{"rms_norm", "--src", "x=f32:64x3", "--param", "eps=1e-5"}, "rms_norm_f32"},
		{"unary shorthand", []string{"silu", "--src", "x=f32:32x2"}, "unary_f32"},
		{"case string", []string{"MUL_MAT(type_a=q8_0,type_b=f32,m=32,n=2,k=64)"}, "mul_mat_Q8_0"},
		{"uberkernel", []string{"-f", "../../testcases/norm.yaml", "--uberkernel"}, "rms_norm_mul_f32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, append([]string{"run-op"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, tt.want) || !strings.Contains(out, "PASS") {
				t.Errorf("output lacks %q/PASS:\n%s", tt.want, out)
			}
		})
	}
}

func TestRunOpErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ntensors:\n  x: {type: f32, ne: [64]}\nnodes:\n  - {name: y, op: rms_norm, src: [x], params: {epz: 1}}\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"bad case", []string{"-f", bad}, 2, "bad.yaml:5:"},
		{"missing file", []string{"-f", filepath.Join(dir, "nope.yaml")}, 2, "nope.yaml: cannot read"},
		{"empty dir", []string{"-f", t.TempDir()}, 2, "no *.yaml"},
		{"unknown op", []string{"frobnicate", "--src", "x=f32:4"}, 2, "frobnicate"},
		{"bad case string", []string{"MUL_MAT(type_a=q8_0,bogus=1)"}, 2, "bogus"},
		{"sysemu not built", []string{"-f", "../../testcases/norm.yaml", "--backend", "sysemu"}, 3, "not built"},
		{"no such ref device", []string{"-f", "../../testcases/norm.yaml", "--device", "1"}, 3, "no such device"},
		{"timeout", []string{"-f", "../../testcases/norm.yaml", "--timeout", "1ns"}, 4, "timed out"},
		{"bad abi", []string{"-f", "../../testcases/norm.yaml", "--abi", bad}, 2, "bad.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "sysemu not built" && etrt.Built {
				t.Skip("this binary has a runtime shim (see backend_etrtfake_test.go)")
			}
			code, out, errOut := runCLI(t, nil, append([]string{"run-op"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, errOut)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.wantErr)
			}
			if strings.Count(strings.TrimSpace(strings.SplitN(errOut, "Run '", 2)[0]), "\n") > 0 {
				t.Errorf("error is not one line: %q", errOut)
			}
			if tt.wantCode != 0 && out != "" {
				t.Errorf("stdout not empty on error: %q", out)
			}
		})
	}
}

// corruptDevice wraps a device and flips bits in everything read back, so
// comparisons fail.
type corruptDevice struct{ driver.Device }

func (d corruptDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	if err := d.Device.Read(ctx, src, dst); err != nil {
		return err
	}
	for i := 0; i+3 < len(dst); i += 4 {
		dst[i+3] ^= 0x40 // flip an exponent bit of every f32
	}
	return nil
}

func TestRunOpMismatchExits1(t *testing.T) {
	f, out, _ := testFactory(nil)
	junit := filepath.Join(t.TempDir(), "r.xml")
	saved := t.TempDir()
	opts := &runOpOptions{Files: []string{"../../testcases/binary.yaml"}, backendOptions: backendOptions{Backend: "ref"}, PerfRuns: 1, JUnit: junit, SaveOutputs: saved,
		OpenDevice: openWrapped(func(d driver.Device) driver.Device { return corruptDevice{d} })}
	err := runOpRun(context.Background(), f, opts)
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (err %v), want 1", exitCode(err), err)
	}
	if !strings.Contains(out.String(), "FAIL") || !strings.Contains(out.String(), "0/4 outputs passed") {
		t.Errorf("table lacks the failures:\n%s", out)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites runner.JUnitSuites
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatal(err)
	}
	if len(suites.Suites) != 1 || suites.Suites[0].Failures != 4 || suites.Suites[0].Tests != 4 {
		t.Errorf("junit %+v", suites)
	}
	// --save-outputs keeps what the device produced next to the reference.
	got, err := graph.ReadNpyFile(filepath.Join(saved, "add_row.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := graph.ReadNpyFile(filepath.Join(saved, "add_row.ref.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(got.Data, want.Data) {
		t.Error("saved device output equals the reference although the device corrupted it")
	}
}

func TestRunOpSaveOutputs(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/norm.yaml", "--save-outputs", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"rms", "nrm", "scaled", "xnw"} {
		a, err := graph.ReadNpyFile(filepath.Join(dir, name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Shape, []int64{2, 5, 128}) {
			t.Errorf("%s shape %v, want [2 5 128] (ne reversed)", name, a.Shape)
		}
	}
}

// Planning alone (--explain, ops explain) generates and reads no data: a
// case whose .npy input is missing still explains, and only a run fails.
func TestExplainNeedsNoData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodata.yaml")
	os.WriteFile(path, []byte("name: nodata\ntensors:\n  x: {type: f32, ne: [64, 2], init: {npy: missing.npy}}\nnodes:\n  - {name: y, op: rms_norm, src: [x]}\n"), 0o644)
	for _, args := range [][]string{{"run-op", "--explain", "-f", path}, {"ops", "explain", "-f", path}} {
		if code, _, errOut := runCLI(t, nil, args...); code != 0 {
			t.Errorf("%v: exit %d (%s)", args, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, nil, "run-op", "-f", path); code != exitUsage || !strings.Contains(errOut, "missing.npy") {
		t.Errorf("run: exit %d (%s), want 2 naming missing.npy", code, errOut)
	}
}

// --abi reaches both sides: with ADD and SUB swapped in the manifest, the
// plan encodes dst.op with the swapped values and the reference device
// decodes them with the same manifest, so binary.yaml still passes. (A
// device left on the built-in manifest would run SUB for ADD and fail.)
func TestRunOpABIOverride(t *testing.T) {
	b, err := os.ReadFile("../../internal/ops/abi/manifest/ggml-d99724f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(strings.Replace(string(b), "\n  ADD: 2\n", "\n  ADD: 6\n", 1), "\n  SUB: 6\n", "\n  SUB: 2\n", 1)
	if !strings.Contains(s, "\n  ADD: 6\n") || !strings.Contains(s, "\n  SUB: 2\n") {
		t.Fatal("manifest layout changed: ADD/SUB lines not found")
	}
	path := filepath.Join(t.TempDir(), "swapped.yaml")
	os.WriteFile(path, []byte(s), 0o644)
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--abi", path)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	opts := &runOpOptions{Files: []string{"../../testcases/binary.yaml"}, ABI: path, PerfRuns: 1,
		backendOptions: backendOptions{Backend: "ref"},
		OpenDevice: func(ctx context.Context, s registry.Spec) (*registry.Handle, error) {
			s.Manifest = abi.Default()
			return registry.Open(ctx, s)
		}}
	f, _, _ := testFactory(nil)
	if err := runOpRun(context.Background(), f, opts); exitCode(err) != exitNegative {
		t.Errorf("device on the built-in manifest: err %v, want a mismatch", err)
	}
}

// A case's graph_nmse reaches the verdict (drift_max_nmse in JSON), an
// in-place node runs aliased on the reference device and passes, and
// --save-outputs writes the chained reference beside the node's.
func TestRunOpGraphToleranceAndInPlace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte(`name: c
tensors:
  x: {type: f32, ne: [64, 4]}
  g: {type: f32, ne: [64]}
nodes:
  - {name: xn, op: rms_norm, src: [x], params: {eps: 1.0e-6}, inplace: true}
  - {name: xs, op: scale, src: [xn], params: {scale: 2, bias: 0}, inplace: true}
  - {name: y, op: mul, src: [xs, g]}
outputs: [xn, y]
tolerance: {graph_nmse: 1.0e-6}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "out")
	code, out, errOut := runCLI(t, nil, "run-op", "-f", file, "-o", "json", "--save-outputs", saved)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 2 {
		t.Fatalf("results %+v", doc.Results)
	}
	for _, r := range doc.Results {
		if r.Status != "PASS" || r.DriftMaxNMSE != 1e-6 || r.DriftNMSE != 0 {
			t.Errorf("%s: %s drift %g (max %g)", r.Node, r.Status, r.DriftNMSE, r.DriftMaxNMSE)
		}
	}
	for _, name := range []string{"xn.npy", "xn.ref.npy", "xn.graph.npy", "y.graph.npy"} {
		if _, err := os.Stat(filepath.Join(saved, name)); err != nil {
			t.Error(err)
		}
	}
	code, out, errOut = runCLI(t, nil, "run-op", "RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=1)")
	if code != 0 || !strings.Contains(out, "PASS") {
		t.Errorf("in-place case string on the reference device: exit %d\n%s%s", code, out, errOut)
	}
}
