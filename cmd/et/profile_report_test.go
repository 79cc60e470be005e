package main

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestNewProfileReportCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    profileReportOptions
		wantErr string
	}{
		{"defaults", []string{"a.json"}, profileReportOptions{Traces: []string{"a.json"}, Views: []string{"summary", "kernels", "memcpy"}, Top: 10, Device: -1}, ""},
		{"all views", []string{"a.json", "--view", "all", "--top", "3", "-d", "1", "--merge", "--freq-mhz", "800", "b=b.json"},
			profileReportOptions{Traces: []string{"a.json", "b=b.json"}, Views: []string{"summary", "kernels", "memcpy", "gaps", "streams", "slowest"}, Top: 3, Device: 1, Merge: true, FreqMHz: 800}, ""},
		{"view order", []string{"a.json", "--view", "slowest,gaps"}, profileReportOptions{Traces: []string{"a.json"}, Views: []string{"gaps", "slowest"}, Top: 10, Device: -1}, ""},
		{"bad view", []string{"a.json", "--view", "flame"}, profileReportOptions{}, `unknown view "flame"`},
		{"bad top", []string{"a.json", "--top", "0"}, profileReportOptions{}, "--top must be at least 1"},
		{"no trace", []string{}, profileReportOptions{}, "requires at least 1 arg"},
		{"two stdin", []string{"-", "x=-"}, profileReportOptions{}, "only one trace can be read from stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, errb := testFactory(nil)
			var got *profileReportOptions
			root := newRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "profile" {
					root.RemoveCommand(c)
				}
			}
			p := newProfileCmd(f)
			for _, c := range p.Commands() {
				if c.Name() == "report" {
					p.RemoveCommand(c)
				}
			}
			p.AddCommand(newProfileReportCmd(f, func(_ context.Context, o *profileReportOptions) error { got = o; return nil }))
			root.AddCommand(p)
			root.SetArgs(append([]string{"profile", "report"}, tt.args...))
			err := root.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q (stderr %s)", err, tt.wantErr, errb)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.IO = nil
			g, w := *got, tt.want
			g.Output = ""
			if strings.Join(g.Traces, ",") != strings.Join(w.Traces, ",") || strings.Join(g.Views, ",") != strings.Join(w.Views, ",") ||
				g.Top != w.Top || g.Device != w.Device || g.Merge != w.Merge || g.FreqMHz != w.FreqMHz || g.KernelMap != w.KernelMap {
				t.Errorf("options = %+v, want %+v", g, w)
			}
		})
	}
}

func TestProfileReportRun(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"sample_table", []string{"profile", "report", "testdata/profile/et_runtime_trace.json"}, 0, ""},
		{"sample_json", []string{"profile", "report", "testdata/profile/et_runtime_trace.json", "-o", "json"}, 0, ""},
		{"sample_all", []string{"profile", "report", "testdata/profile/et_runtime_trace.json", "--view", "all"}, 0, ""},
		{"sample_markdown", []string{"profile", "report", "testdata/profile/et_runtime_trace.json", "-o", "markdown", "--view", "kernels,memcpy"}, 0, ""},
		{"truncated", []string{"profile", "report", "testdata/profile/truncated.json", "--kernel-map", "testdata/profile/kernel_id.json"}, 0,
			"et: warning: testdata/profile/truncated.json: trace truncated at byte 16384 after 17 complete events (the run did not stop the profiler); reporting what was recorded\n"},
		{"empty", []string{"profile", "report", "testdata/profile/empty.json"}, 0,
			"et: warning: testdata/profile/empty.json: trace is empty (0 events): the run may have crashed before the profiler flushed\n"},
		{"two_devices", []string{"profile", "report", "--view", "summary,kernels,gaps", "--top", "3", "--kernel-map", "../../internal/profile/testdata/two_devices_kernel_id.json", "testdata/profile/two_devices.json"}, 0, ""},
		{"side_by_side", []string{"profile", "report", "a=testdata/profile/et_runtime_trace.json", "b=testdata/profile/truncated.json", "--view", "kernels", "-o", "csv"}, 0,
			"et: warning: testdata/profile/truncated.json: trace truncated at byte 16384 after 17 complete events (the run did not stop the profiler); reporting what was recorded\n"},
		{"merged", []string{"profile", "report", "testdata/profile/et_runtime_trace.json", "testdata/profile/et_runtime_trace.json", "--merge", "--view", "summary,kernels"}, 0, ""},
		{"missing", []string{"profile", "report", "testdata/profile/nope.json"}, 2,
			"et: open trace testdata/profile/nope.json: no such file or directory\n"},
		{"malformed_map", []string{"profile", "report", "testdata/profile/et_runtime_trace.json", "--kernel-map", "testdata/profile/truncated.json"}, 2,
			"et: parsing kernel map: testdata/profile/truncated.json: byte 17: kernel \"value0\": id is not a number\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, tt.args...)
			if code != tt.code || errOut != tt.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, errOut, tt.code, tt.stderr)
			}
			if tt.code == 0 {
				assertGolden(t, "profile_report_"+tt.name, []byte(out))
			}
		})
	}
}

func TestProfileReportSyntaxError(t *testing.T) {
	f, out, errb := testFactory(nil)
	f.IO.In = strings.NewReader(`{"value0": {"type": ]}`)
	code := execute(context.Background(), f, []string{"profile", "report", "-"})
	if code != 2 || out.Len() != 0 || errb.String() != "et: parsing trace: stdin: byte 20: event 0: want a string, found ']'\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errb)
	}
}

// TestProfileReportJSONKeys pins the key set of the JSON document.
func TestProfileReportJSONKeys(t *testing.T) {
	code, out, _ := runCLI(t, nil, "profile", "report", "testdata/profile/et_runtime_trace.json", "--view", "all", "-o", "json")
	if code != 0 {
		t.Fatal(code)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				keys = append(keys, prefix+k)
				walk(prefix+k+".", vv)
			}
		case []any:
			if len(x) > 0 {
				walk(prefix+"[].", x[0])
			}
		}
	}
	walk("", doc)
	sort.Strings(keys)
	assertGolden(t, "profile_report_keys", []byte(strings.Join(keys, "\n")+"\n"))
	if doc["schema"] != "et.profile-report/v1" {
		t.Errorf("schema %v", doc["schema"])
	}
}

// --device keeps one device's launches: the two-device fixture's devices
// split its launches, and -d N reports only device N's.
func TestProfileReportDeviceFilter(t *testing.T) {
	launches := func(args ...string) map[float64]float64 {
		t.Helper()
		base := []string{"profile", "report", "--kernel-map", "../../internal/profile/testdata/two_devices_kernel_id.json",
			"testdata/profile/two_devices.json", "-o", "json"}
		code, out, errOut := runCLI(t, nil, append(base, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			Reports []struct {
				Summary struct {
					Devices []map[string]any `json:"devices"`
				} `json:"summary"`
			} `json:"reports"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		got := map[float64]float64{}
		for _, d := range doc.Reports[0].Summary.Devices {
			got[d["id"].(float64)] = d["launches"].(float64)
		}
		return got
	}
	all := launches()
	if len(all) != 2 {
		t.Fatalf("fixture devices %v, want 2", all)
	}
	for id, n := range all {
		got := launches("-d", strconv.Itoa(int(id)))
		if len(got) != 1 || got[id] != n {
			t.Errorf("-d %v: devices %v, want only %v with %v launches", id, got, id, n)
		}
	}
}
