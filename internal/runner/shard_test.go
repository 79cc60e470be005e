package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/graph"
)

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"1/4", Shard{1, 4}, ""},
		{"4/4", Shard{4, 4}, ""},
		{" 1/1 ", Shard{1, 1}, ""},
		{"0/4", Shard{}, "index must be 1 to 4"},
		{"5/4", Shard{}, "index must be 1 to 4"},
		{"1/0", Shard{}, "count must be 1 to"},
		{"1/10001", Shard{}, "count must be 1 to"},
		{"1", Shard{}, "want I/N"},
		{"a/4", Shard{}, "whole numbers"},
		{"1/4/2", Shard{}, "whole numbers"},
		{"", Shard{}, "want I/N"},
	} {
		got, err := ParseShard(tt.in)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		var ie interface{ InputError() }
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseShard(%q) error %v, want one with %q", tt.in, err, tt.err)
		} else if !errors.As(err, &ie) {
			t.Errorf("ParseShard(%q): %T is not an input error", tt.in, err)
		}
	}
}

func TestShardFromIndex(t *testing.T) {
	for _, tt := range []struct {
		index, count string
		want         Shard
		err          string
	}{
		{"0", "4", Shard{1, 4}, ""},
		{"3", "4", Shard{4, 4}, ""},
		{"4", "4", Shard{}, "not below the count 4"},
		{"-1", "4", Shard{}, "whole number from 0"},
		{"x", "4", Shard{}, "whole number from 0"},
		{"0", "0", Shard{}, "whole number from 1"},
		{"0", "four", Shard{}, "whole number from 1"},
	} {
		got, err := ShardFromIndex(tt.index, tt.count, "env")
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ShardFromIndex(%s, %s) = %v, %v; want %v", tt.index, tt.count, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ShardFromIndex(%s, %s) error %v, want %q", tt.index, tt.count, err, tt.err)
		}
	}
}

func yamlCase(dir, name string) *graph.Case {
	return &graph.Case{Name: name, File: dir + name + ".yaml"}
}

// testcasesNames are the case files of testcases/ (one case each, named
// as the file).
var testcasesNames = []string{"binary", "conv", "copy", "flash_attn", "gated_delta_net", "get_rows", "glu", "inplace",
	"llama_layer_4096", "llama_layer_small", "misc_ops", "mul_mat", "mul_mat_id", "norm", "rope", "rwkv", "soft_max", "ssm", "unary", "views"}

// TestShardPinned pins the 4-way split of testcases/: the same on every
// machine and in every implementation. The want table was computed
// independently, with Python's hashlib: the keys "<file>|<name>" ranked
// by the first 8 bytes of their SHA-256 (big-endian), dealt out in turn.
func TestShardPinned(t *testing.T) {
	want := map[int][]string{
		1: {"conv", "get_rows", "llama_layer_small", "misc_ops", "unary"},
		2: {"binary", "mul_mat", "rwkv", "soft_max", "ssm"},
		3: {"copy", "flash_attn", "glu", "inplace", "llama_layer_4096"},
		4: {"gated_delta_net", "mul_mat_id", "norm", "rope", "views"},
	}
	for _, dir := range []string{"testcases/", "../../testcases/", "/home/ci/work/et/testcases/"} {
		var cases []*graph.Case
		for _, n := range testcasesNames {
			cases = append(cases, yamlCase(dir, n))
		}
		for i := 1; i <= 4; i++ {
			kept, info := Shard{i, 4}.Select(cases)
			var got []string
			for _, c := range kept {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, want[i]) {
				t.Errorf("%s shard %d/4 = %v, want %v", dir, i, got, want[i])
			}
			if info.CasesTotal != 20 || info.Index != i || info.Count != 4 || len(info.Cases) != len(kept) {
				t.Errorf("%s shard %d/4: info %+v", dir, i, info)
			}
		}
	}
}

// TestShardPartition: for any count, the shards are disjoint, cover every
// case once, differ in size by at most one, keep the input order, and do
// not depend on the order the cases are listed in.
func TestShardPartition(t *testing.T) {
	var cases []*graph.Case
	for i := range 37 {
		cases = append(cases, yamlCase("d/", fmt.Sprintf("case%02d", i)))
	}
	// The same file name in two directories, a line repeated in a test
	// file, a case string and an op from flags.
	cases = append(cases, yamlCase("other/", "case03"), &graph.Case{Name: "t.txt:4 ADD", File: "t.txt"},
		&graph.Case{Name: "t.txt:4 ADD", File: "t.txt"}, &graph.Case{Name: "ADD(type=f32)", File: "ADD(type=f32)"},
		&graph.Case{Name: "add", File: "run-op flags"})
	reversed := slices.Clone(cases)
	slices.Reverse(reversed)
	for n := 1; n <= 8; n++ {
		seen := map[*graph.Case]int{}
		var digest string
		for i := 1; i <= n; i++ {
			kept, info := Shard{i, n}.Select(cases)
			if len(kept) < len(cases)/n || len(kept) > len(cases)/n+1 {
				t.Errorf("%d/%d: %d cases of %d", i, n, len(kept), len(cases))
			}
			last := -1
			for j, c := range kept {
				seen[c]++
				if info.Cases[j].Index <= last || cases[info.Cases[j].Index] != c {
					t.Errorf("%d/%d: case %d out of order or misindexed", i, n, j)
				}
				last = info.Cases[j].Index
			}
			if digest == "" {
				digest = info.CasesDigest
			} else if info.CasesDigest != digest {
				t.Errorf("%d/%d: digest differs between shards", i, n)
			}
			// Listed in the other order, the shard has the same keys.
			_, rinfo := Shard{i, n}.Select(reversed)
			keys := func(info *ShardInfo) []string {
				var ks []string
				for _, c := range info.Cases {
					ks = append(ks, strings.TrimSuffix(c.Key, "#2"))
				}
				slices.Sort(ks)
				return ks
			}
			if !slices.Equal(keys(info), keys(rinfo)) {
				t.Errorf("%d/%d: %v, reversed input %v", i, n, keys(info), keys(rinfo))
			}
		}
		for _, c := range cases {
			if seen[c] != 1 {
				t.Errorf("n=%d: case %s in %d shards", n, c.Name, seen[c])
			}
		}
	}
	keys := shardKeys(cases)
	if len(slices.Compact(slices.Sorted(slices.Values(keys)))) != len(keys) {
		t.Errorf("keys are not unique: %v", keys)
	}
}

func TestCaseKey(t *testing.T) {
	for _, tt := range []struct {
		c    graph.Case
		want string
	}{
		{graph.Case{Name: "norm", File: "testcases/norm.yaml"}, "norm.yaml|norm"},
		{graph.Case{Name: "norm", File: "/abs/x/norm.yaml"}, "norm.yaml|norm"},
		{graph.Case{Name: "ADD(type=f32,ne=[1,2,3,4])", File: "ADD(type=f32,ne=[1,2,3,4])"}, "ADD(type=f32,ne=[1,2,3,4])"},
		{graph.Case{Name: "rms_norm", File: "run-op flags"}, "rms_norm"},
		{graph.Case{Name: "models/ops.txt:12 MUL_MAT attn_q", File: "models/ops.txt"}, "ops.txt|:12 MUL_MAT attn_q"},
	} {
		if got := CaseKey(&tt.c); got != tt.want {
			t.Errorf("CaseKey(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}
