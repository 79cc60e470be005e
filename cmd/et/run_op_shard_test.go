package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"
)

// shardCaseDir is a directory of a few small cases of testcases/, and
// optionally one bad case file.
func shardCaseDir(t *testing.T, withBad bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"binary", "norm", "views", "glu", "copy"} {
		b, err := os.ReadFile("../../testcases/" + n + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n+".yaml"), b, 0o644)
	}
	if withBad {
		b, _ := os.ReadFile("../../testcases/binary.yaml")
		bad := strings.Replace(strings.Replace(string(b), "name: binary", "name: bad", 1), "op: sub,", "op: no_such_op,", 1)
		os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644)
	}
	return dir
}

// runShards runs args split n ways into dir/shard-<i>.json and returns
// the files and each shard's exit code.
func runShards(t *testing.T, n int, args ...string) ([]string, []int) {
	t.Helper()
	out := t.TempDir()
	var files []string
	var codes []int
	for i := 1; i <= n; i++ {
		code, stdout, stderr := runCLI(t, nil, append(args, "--shard", strconv.Itoa(i)+"/"+strconv.Itoa(n), "-o", "json")...)
		if stdout == "" {
			t.Fatalf("shard %d/%d printed no report (exit %d): %s", i, n, code, stderr)
		}
		f := filepath.Join(out, "shard-"+strconv.Itoa(i)+".json")
		os.WriteFile(f, []byte(stdout), 0o644)
		files, codes = append(files, f), append(codes, code)
	}
	return files, codes
}

func reportOf(t *testing.T, s string) runner.Report {
	t.Helper()
	var r runner.Report
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	for i := range r.Results {
		r.Results[i].TimeNS = 0
	}
	return r
}

// TestShardMergeExitStatus: merge exits as the unsharded run does: 1 for
// an XPASS in one shard, 2 for a case no shard could run (reported once).
func TestShardMergeExitStatus(t *testing.T) {
	xf := filepath.Join(t.TempDir(), "xfail.yaml")
	os.WriteFile(xf, []byte("expected_failures:\n  - {case: norm, output: \"*\", measured: NMSE 1, why: was broken}\n"), 0o644)
	for _, tt := range []struct {
		name    string
		bad     bool
		extra   []string
		want    int
		wantErr string
	}{
		{"pass", false, nil, 0, ""},
		{"xpass", false, []string{"--expected-failures", xf}, 1, ""},
		{"bad case", true, nil, 2, "could not be run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := shardCaseDir(t, tt.bad)
			args := append([]string{"run-op", "-f", dir}, tt.extra...)
			code, stdout, _ := runCLI(t, nil, append(args, "-o", "json")...)
			if code != tt.want {
				t.Fatalf("unsharded exit %d, want %d", code, tt.want)
			}
			files, codes := runShards(t, 3, args...)
			if tt.bad && (codes[0] != 2 || codes[1] != 2 || codes[2] != 2) {
				t.Errorf("shard exits %v: every shard reads the bad file", codes)
			}
			mcode, mout, merr := runCLI(t, nil, append([]string{"run-op", "merge", "-o", "json"}, files...)...)
			if mcode != tt.want {
				t.Errorf("merge exit %d, want %d: %s", mcode, tt.want, merr)
			}
			if tt.wantErr != "" && (!strings.Contains(merr, tt.wantErr) || strings.Count(merr, "no_such_op") != 1) {
				t.Errorf("merge stderr:\n%s", merr)
			}
			if got, want := reportOf(t, mout), reportOf(t, stdout); !reflect.DeepEqual(got, want) {
				t.Errorf("merged report\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestShardMergeBadInput(t *testing.T) {
	dir := shardCaseDir(t, false)
	files, _ := runShards(t, 3, "run-op", "-f", dir)
	other, _ := runShards(t, 3, "run-op", "-f", "../../testcases/binary.yaml")
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	_, one, _ := runCLI(t, nil, "run-op", "-f", dir, "-o", "json")
	unsharded := filepath.Join(tmp, "one.json")
	os.WriteFile(unsharded, []byte(one), 0o644)
	for _, tt := range []struct {
		name  string
		files []string
		want  string
	}{
		{"missing", files[:2], "et: merge: missing shard(s) 3 of 3: have 2 of 3 files\n"},
		{"twice", slices.Concat(files, files[1:2]), "et: " + files[1] + ": shard 2/3 again (also " + files[1] + ")\n"},
		{"other cases", []string{files[0], files[1], other[2]}, "et: " + other[2] + ": from another run than " + files[0]},
		{"empty", slices.Concat(files, []string{empty}), "et: " + empty + ": empty: no report"},
		{"unsharded", []string{unsharded}, "et: " + unsharded + ": not a shard"},
		{"unreadable", []string{files[0], filepath.Join(tmp, "nope.json")}, "et: " + filepath.Join(tmp, "nope.json") + ": cannot read: no such file or directory\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"run-op", "merge"}, tt.files...)...)
			if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tt.want)
			}
		})
	}
	if code, _, _ := runCLI(t, nil, "run-op", "merge"); code != exitUsage {
		t.Errorf("merge without files: exit %d", code)
	}
}

// TestShardFlags: the flag and the Indexed Job environment name the same
// shard; bad values are usage errors; more shards than cases leave empty,
// valid reports.
func TestShardFlags(t *testing.T) {
	dir := shardCaseDir(t, false)
	_, byFlag, _ := runCLI(t, nil, "run-op", "-f", dir, "--shard", "2/3", "-o", "json")
	_, byEnv, _ := runCLI(t, map[string]string{envShardIndex: "1", envShardCount: "3"}, "run-op", "-f", dir, "-o", "json")
	if !reflect.DeepEqual(reportOf(t, byFlag), reportOf(t, byEnv)) || reportOf(t, byFlag).Shard.Index != 2 {
		t.Errorf("--shard 2/3 and JOB_COMPLETION_INDEX=1 of 3 differ:\n%s\n%s", byFlag, byEnv)
	}
	_, flagWins, _ := runCLI(t, map[string]string{envShardIndex: "0", envShardCount: "3"}, "run-op", "-f", dir, "--shard", "2/3", "-o", "json")
	if reportOf(t, flagWins).Shard.Index != 2 {
		t.Errorf("--shard does not win over the environment")
	}
	if _, s, _ := runCLI(t, map[string]string{envShardIndex: "1"}, "run-op", "-f", dir, "-o", "json"); reportOf(t, s).Shard != nil {
		t.Errorf("JOB_COMPLETION_INDEX alone sharded the run")
	}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--shard", "4/3"}, "--shard: the shard index must be 1 to 3"},
		{nil, []string{"--shard", "1-3"}, "--shard: want I/N"},
		{map[string]string{envShardCount: "3"}, nil, "$ET_SHARD_COUNT=3 is set but $JOB_COMPLETION_INDEX is not"},
		{map[string]string{envShardCount: "3", envShardIndex: "3"}, nil, "the index 3 is not below the count 3"},
	} {
		code, _, stderr := runCLI(t, tt.env, append([]string{"run-op", "-f", dir}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want %q", tt.env, tt.args, code, stderr, tt.want)
		}
	}
	files, codes := runShards(t, 7, "run-op", "-f", dir)
	empty := 0
	for i, f := range files {
		b, _ := os.ReadFile(f)
		if r := reportOf(t, string(b)); len(r.Shard.Cases) == 0 {
			empty++
			if codes[i] != 0 || r.Numerics != "reference" || len(r.Results) != 0 {
				t.Errorf("empty shard %d: exit %d, %+v", i+1, codes[i], r)
			}
		}
	}
	if empty != 2 {
		t.Errorf("%d empty shards of 7 for 5 cases", empty)
	}
	if code, _, stderr := runCLI(t, nil, append([]string{"run-op", "merge"}, files...)...); code != 0 {
		t.Errorf("merge of 7 shards with empty ones: exit %d: %s", code, stderr)
	}
}

// TestOpsExplainShard: the shards of ops explain together explain every
// node once, each saying which shard it is.
func TestOpsExplainShard(t *testing.T) {
	dir := shardCaseDir(t, false)
	code, out, _ := runCLI(t, nil, "ops", "explain", "-f", dir, "-o", "json")
	var all opsExplainDoc
	if err := json.Unmarshal([]byte(out), &all); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	seen := map[string]bool{}
	total := 0
	for i := 1; i <= 2; i++ {
		code, out, stderr := runCLI(t, nil, "ops", "explain", "-f", dir, "--shard", strconv.Itoa(i)+"/2", "-o", "json")
		var d opsExplainDoc
		if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
			t.Fatalf("shard %d: exit %d, %v: %s", i, code, err, stderr)
		}
		if d.Shard == nil || d.Shard.Index != i || d.Shard.CasesTotal != 5 {
			t.Fatalf("shard %d: %+v", i, d.Shard)
		}
		for _, c := range d.Shard.Cases {
			seen[c.Name] = true
		}
		total += len(d.Nodes)
	}
	if len(seen) != 5 || total != len(all.Nodes) {
		t.Errorf("shards explained %d cases, %d nodes; want 5 and %d", len(seen), total, len(all.Nodes))
	}
	// run-op --explain explains the same shard.
	_, a, _ := runCLI(t, nil, "ops", "explain", "-f", dir, "--shard", "2/2", "-o", "json")
	_, b, _ := runCLI(t, nil, "run-op", "--explain", "-f", dir, "--shard", "2/2", "-o", "json")
	if a != b || !strings.Contains(b, `"shard": {`) {
		t.Errorf("ops explain --shard 2/2:\n%s\nrun-op --explain --shard 2/2:\n%s", a, b)
	}
}

// TestShardTestFile: a test file's lines are split as cases (after the
// --op filter) and the merged shards are the unsharded run.
func TestShardTestFile(t *testing.T) {
	for _, extra := range [][]string{nil, {"--op", "MUL_MAT,ROPE,SET_ROWS"}} {
		args := append([]string{"run-op", "--test-file", "../../testcases/test-files/llama_layer_small.txt"}, extra...)
		code, one, stderr := runCLI(t, nil, append(args, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		files, codes := runShards(t, 3, args...)
		total := 0
		for i, f := range files {
			b, _ := os.ReadFile(f)
			r := reportOf(t, string(b))
			total += len(r.Shard.Cases)
			if codes[i] != 0 || r.Shard.CasesTotal != len(reportOf(t, one).Results) {
				t.Errorf("%v shard %d: exit %d, cases_total %d", extra, i+1, codes[i], r.Shard.CasesTotal)
			}
		}
		code, merged, stderr := runCLI(t, nil, append([]string{"run-op", "merge", "-o", "json"}, files...)...)
		if code != 0 || !reflect.DeepEqual(reportOf(t, merged), reportOf(t, one)) {
			t.Errorf("%v: merge exit %d (%s); merged report differs from the unsharded one", extra, code, stderr)
		}
		if total != len(reportOf(t, one).Results) {
			t.Errorf("%v: the shards ran %d cases, the unsharded run %d", extra, total, len(reportOf(t, one).Results))
		}
	}
}
