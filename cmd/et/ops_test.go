package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestNewOpsExplainCmd: argv goes in, the options or a usage error come out.
func TestNewOpsExplainCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    opsExplainOptions
		wantErr string
	}{
		{name: "case string", args: []string{"RMS_NORM(ne=[100,4,1,1])"}, want: opsExplainOptions{Op: "RMS_NORM(ne=[100,4,1,1])"}},
		{name: "op with flags", args: []string{"rms_norm", "--src", "x=f32:100x4", "--param", "eps=1e-5"},
			want: opsExplainOptions{Op: "rms_norm", Srcs: []string{"x=f32:100x4"}, Params: []string{"eps=1e-5"}}},
		{name: "files", args: []string{"-f", "a.yaml", "-f", "dir", "--abi", "m.yaml"},
			want: opsExplainOptions{Files: []string{"a.yaml", "dir"}, ABI: "m.yaml"}},
		{name: "nothing", args: nil, wantErr: "nothing to run"},
		{name: "two args", args: []string{"a", "b"}, wantErr: `"a" is not a case string`},
		{name: "case strings", args: []string{"RMS_NORM(ne=[100,4,1,1])", "ADD(type=f32)"},
			want: opsExplainOptions{caseSources: caseSources{CaseArgs: []string{"RMS_NORM(ne=[100,4,1,1])", "ADD(type=f32)"}}}},
		{name: "op and file", args: []string{"rms_norm", "-f", "x.yaml"}, wantErr: "give either files"},
		{name: "src with case string", args: []string{"RMS_NORM(ne=[16,1,1,1])", "--src", "x=f32:4"}, wantErr: "--src and --param go with an op name"},
		{name: "src with files", args: []string{"-f", "x.yaml", "--param", "eps=1"}, wantErr: "--src and --param go with an op name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, errOut := testFactory(nil)
			var got *opsExplainOptions
			root := newRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "ops" {
					root.RemoveCommand(c)
				}
			}
			ops := newOpsCmd(f)
			for _, c := range ops.Commands() {
				if c.Name() == "explain" {
					ops.RemoveCommand(c)
				}
			}
			ops.AddCommand(newOpsExplainCmd(f, func(_ context.Context, o *opsExplainOptions) error { got = o; return nil }))
			root.AddCommand(ops)
			code := executeRoot(context.Background(), f, root, append([]string{"ops", "explain"}, tt.args...))
			if tt.wantErr != "" {
				if code != exitUsage || !strings.Contains(errOut.String(), tt.wantErr) {
					t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tt.wantErr)
				}
				return
			}
			if code != 0 || got == nil {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if got.Op != tt.want.Op || !slices.Equal(got.Files, tt.want.Files) || !slices.Equal(got.Srcs, tt.want.Srcs) ||
				!slices.Equal(got.Params, tt.want.Params) || got.ABI != tt.want.ABI {
				t.Errorf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// TestOpsListGolden pins et ops list in its text and machine forms.
func TestOpsListGolden(t *testing.T) {
	for _, format := range []string{"table", "json", "csv"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "ops", "list", "-o", format)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			assertGolden(t, "ops_list_"+format, []byte(out))
		})
	}
}

// TestOpsDocUpToDate: docs/ops.md is exactly `et ops list -o markdown`.
func TestOpsDocUpToDate(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "ops", "list", "-o", "markdown")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	path := filepath.Join("..", "..", "docs", "ops.md")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (generate it with `%s` from the repository root): %v", path, opsRegenerate, err)
	}
	if !bytes.Equal(want, []byte(out)) {
		t.Errorf("docs/ops.md is stale: regenerate it from the repository root with\n\t%s\n--- got\n%s", opsRegenerate, out)
	}
}

func TestOpsExplainGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"ops_explain_rms_norm", []string{"ops", "explain", "RMS_NORM(type=f32,ne=[100,4,1,1])"}},
		{"ops_explain_flash_attn_json", []string{"ops", "explain", "FLASH_ATTN_EXT(hsk=128,hsv=128,nh=8,kv=256,nb=1,type_KV=f32)", "-o", "json"}},
		{"ops_explain_llama_small", []string{"ops", "explain", "-f", "../../testcases/llama_layer_small.yaml"}},
		{"ops_explain_two_cases_md", []string{"ops", "explain", "-f", "../../testcases/norm.yaml", "-f", "../../testcases/misc_ops.yaml", "-o", "markdown"}},
		{"ops_explain_pad", []string{"ops", "explain", "PAD(type=f32,ne_a=[100,4,1,1],pad_0=0,pad_1=1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			assertGolden(t, tt.name, []byte(out))
		})
	}
}

// TestOpsExplainExitCodes: explain informs (exit 0 for unsupported
// nodes) and fails only on bad input (exit 2).
func TestOpsExplainExitCodes(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("name: x\nnodes:\n  - {name: y, op: rms_norm, src: [nope]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badABI := filepath.Join(dir, "abi.yaml")
	if err := os.WriteFile(badABI, []byte("ggml: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"unsupported", []string{"ops", "explain", "MUL_MAT(type_a=q4_K,type_b=f32,m=16,n=1,k=256)"}, 0, ""},
		{"supported", []string{"ops", "explain", "RMS_NORM(type=f32,ne=[64,4,1,1])"}, 0, ""},
		{"unknown op", []string{"ops", "explain", "BOGUS(x=1)"}, 2, `unknown op "BOGUS"`},
		{"unknown key", []string{"ops", "explain", "SQR(v=1)"}, 2, `unknown key "v"`},
		{"bad source", []string{"ops", "explain", "-f", badYAML}, 2, `unknown source "nope"`},
		{"missing file", []string{"ops", "explain", "-f", filepath.Join(dir, "none.yaml")}, 2, "cannot read"},
		{"bad abi", []string{"ops", "explain", "SQR", "--abi", badABI}, 2, "abi.yaml"},
		{"bad abi list", []string{"ops", "list", "--abi", badABI}, 2, "abi.yaml"},
		{"list args", []string{"ops", "list", "x"}, 2, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tt.code, tt.wantErr)
			}
		})
	}
}

// jsonKeys returns the sorted keys of a JSON object.
func jsonKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestOpsJSONKeys pins the key sets of et.ops-list/v1 and et.ops-explain/v1.
func TestOpsJSONKeys(t *testing.T) {
	_, out, _ := runCLI(t, nil, "ops", "list", "-o", "json")
	var list struct {
		Schema  string            `json:"schema"`
		Ops     []json.RawMessage `json:"ops"`
		SubOps  []json.RawMessage `json:"sub_ops"`
		Fusions []json.RawMessage `json:"fusions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if list.Schema != "et.ops-list/v1" || len(list.Ops) == 0 || len(list.SubOps) == 0 || len(list.Fusions) == 0 {
		t.Fatalf("schema %q, %d ops, %d sub-ops, %d fusions", list.Schema, len(list.Ops), len(list.SubOps), len(list.Fusions))
	}
	check := func(what string, got []string, want string) {
		t.Helper()
		if strings.Join(got, ",") != want {
			t.Errorf("%s keys = %s, want %s", what, strings.Join(got, ","), want)
		}
	}
	check("ops-list", jsonKeys(t, json.RawMessage(out)), "fusions,ggml,ggml_commit,ops,schema,sub_ops")
	check("ops-list op", jsonKeys(t, list.Ops[0]), "constraints,ggml_op,host_math,implemented,kernels,modelled,op,types,uberkernel,view")
	var op struct{ Kernels []json.RawMessage }
	json.Unmarshal(list.Ops[0], &op)
	check("ops-list kernel", jsonKeys(t, op.Kernels[0]), "layout,name,params_bytes,uberkernel_batchable,uberkernel_id")
	check("ops-list sub-op", jsonKeys(t, list.SubOps[0]), "name,op,supported")
	check("ops-list fusion", jsonKeys(t, list.Fusions[0]), "constraints,fusion,kernel")

	_, out, _ = runCLI(t, nil, "ops", "explain", "-f", "../../testcases/llama_layer_small.yaml", "-o", "json")
	var ex struct {
		Schema string            `json:"schema"`
		Nodes  []json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatal(err)
	}
	if ex.Schema != "et.ops-explain/v1" || len(ex.Nodes) == 0 {
		t.Fatalf("schema %q, %d nodes", ex.Schema, len(ex.Nodes))
	}
	check("ops-explain", jsonKeys(t, json.RawMessage(out)), "nodes,schema")
	check("ops-explain fused node", jsonKeys(t, ex.Nodes[0]),
		"action,case,failures,fused_with,fusion,kernel,node,op,params_bytes,shire_mask,supported,uberkernel_batchable,uberkernel_id")
	_, out, _ = runCLI(t, nil, "ops", "explain", "MUL_MAT(type_a=q4_K,m=16,n=1,k=256)", "-o", "json")
	json.Unmarshal([]byte(out), &ex)
	check("ops-explain fallback node", jsonKeys(t, ex.Nodes[0]), "action,case,failures,node,op,supported,uberkernel_batchable")
	var node struct{ Failures []json.RawMessage }
	json.Unmarshal(ex.Nodes[0], &node)
	if len(node.Failures) == 0 {
		t.Fatal("no failures for a q4_K mul_mat")
	}
	check("ops-explain failure", jsonKeys(t, node.Failures[0]), "code,condition,have,subject,suggestion,want")
}

// shellFields splits an example command line: whitespace-separated, with
// '...' quoting, stopping at a redirection or pipe.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			in, have = !in, true
		case !in && (r == ' ' || r == '\t'):
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		case !in && (r == '>' || r == '|'):
			return out
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

// TestOpsExamples runs every Example: line of et ops list and explain.
func TestOpsExamples(t *testing.T) {
	f, _, _ := testFactory(nil)
	for _, c := range newOpsCmd(f).Commands() {
		lines := strings.Split(c.Example, "\n")
		if len(lines) < 3 {
			t.Errorf("%s: too few examples: %q", c.Name(), c.Example)
		}
		for _, l := range lines {
			prefix := "  $ et ops " + c.Name()
			if !strings.HasPrefix(l, prefix) {
				t.Errorf("example %q does not start with %q", l, prefix)
				continue
			}
			args := shellFields(strings.TrimPrefix(l, "  $ et "))
			for i, a := range args {
				if strings.HasPrefix(a, "testcases/") {
					args[i] = "../../" + a
				}
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, errOut := runCLI(t, nil, args...)
				if code != 0 || out == "" {
					t.Errorf("exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
				}
			})
		}
	}
}

func TestOpsExplainInPlace(t *testing.T) {
	for inplace, want := range map[string]bool{"0": false, "1": true} {
		code, out, errOut := runCLI(t, nil, "ops", "explain", "RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace="+inplace+")", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var d struct {
			Nodes []struct {
				InPlace bool `json:"in_place"`
			}
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Nodes) != 1 || d.Nodes[0].InPlace != want {
			t.Errorf("inplace=%s: in_place %+v (%v), want %v", inplace, d.Nodes, err, want)
		}
	}
}
