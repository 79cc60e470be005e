package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlBlocks are the ```yaml blocks of a Markdown page, parsed.
func yamlBlocks(t *testing.T, page string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for _, part := range strings.Split(string(b), "```yaml\n")[1:] {
		body, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatalf("%s: unterminated yaml block", page)
		}
		var d map[string]any
		if err := yaml.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("%s: yaml block: %v\n%s", page, err, body)
		}
		docs = append(docs, d)
	}
	return docs
}

// get walks a parsed YAML document by map keys and list indices.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not a map", path, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: %T is not a list of > %d", path, v, k)
			}
			v = l[k]
		}
	}
	return v
}

// runDocLine runs one documented shell line of et (`[./]et ARGS [> FILE |
// >> FILE]`, no quoting beyond "..." around a redirect target) with env,
// and returns the exit code and stderr.
func runDocLine(t *testing.T, line string, env map[string]string) (int, string) {
	t.Helper()
	fields := strings.Fields(line)
	if len(fields) == 0 || (fields[0] != "et" && fields[0] != "./et") {
		t.Fatalf("documented line %q does not run et", line)
	}
	args, out, appendOut := fields[1:], "", false
	for i, a := range args {
		if a == ">" || a == ">>" {
			if i+2 != len(args) {
				t.Fatalf("documented line %q: the redirect must come last", line)
			}
			out, appendOut, args = strings.Trim(args[i+1], `"`), a == ">>", args[:i]
			break
		}
	}
	code, stdout, stderr := runCLI(t, env, args...)
	if out != "" {
		flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if appendOut {
			flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		fh, err := os.OpenFile(out, flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(stdout)
		fh.Close()
	}
	return code, stderr
}

var timeAttr = regexp.MustCompile(`time="[^"]*"`)

// untimed is a run-op JSON report without its measured times.
func untimed(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"time_ns", "median_ns", "min_ns", "max_ns", "flops_per_s", "bytes_per_s"} {
				delete(x, k)
			}
			for k, e := range x {
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	return strip(v)
}

func untimedJUnit(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return timeAttr.ReplaceAllString(string(b), `time=""`)
}

// ciDir is a scratch directory where the documented commands run as from
// the repository root: testcases/ is the repository's.
func ciDir(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs("../../testcases")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(abs, filepath.Join(dir, "testcases")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// TestCIDocExamples runs docs/ci.md's GitHub Actions workflow and
// Kubernetes Jobs as CI would: every et step with each matrix value or
// completion index, then the merges; the merged report and JUnit file
// equal those of one unsharded run (modulo measured times).
func TestCIDocExamples(t *testing.T) {
	blocks := yamlBlocks(t, "../../docs/ci.md")
	if len(blocks) != 3 {
		t.Fatalf("docs/ci.md has %d yaml blocks, want the workflow and two Jobs", len(blocks))
	}
	dir := ciDir(t)
	if code, stderr := runDocLine(t, "et run-op -f testcases/ -o json --junit one.xml > one.json", nil); code != 0 {
		t.Fatalf("unsharded run: exit %d: %s", code, stderr)
	}
	want, wantJUnit := untimed(t, "one.json"), untimedJUnit(t, "one.xml")

	t.Run("github actions", func(t *testing.T) {
		wf := blocks[0]
		shards := get(t, wf, "jobs", "run-op", "strategy", "matrix", "shard").([]any)
		if len(shards) != 4 {
			t.Fatalf("matrix shards %v", shards)
		}
		ran := 0
		for _, s := range shards {
			for _, st := range get(t, wf, "jobs", "run-op", "steps").([]any) {
				run, _ := st.(map[string]any)["run"].(string)
				if !strings.HasPrefix(run, "./et ") {
					continue
				}
				line := strings.ReplaceAll(run, "${{ matrix.shard }}", strconv.Itoa(s.(int)))
				if code, stderr := runDocLine(t, line, nil); code != 0 {
					t.Fatalf("%s: exit %d: %s", line, code, stderr)
				}
				ran++
			}
		}
		summary := filepath.Join(dir, "step-summary.md")
		merges := 0
		for _, st := range get(t, wf, "jobs", "merge", "steps").([]any) {
			run, _ := st.(map[string]any)["run"].(string)
			if !strings.HasPrefix(run, "./et ") {
				continue
			}
			line := strings.ReplaceAll(run, `"$GITHUB_STEP_SUMMARY"`, summary)
			if code, stderr := runDocLine(t, line, nil); code != 0 {
				t.Fatalf("%s: exit %d: %s", line, code, stderr)
			}
			merges++
		}
		if ran != 4 || merges != 2 {
			t.Fatalf("ran %d shard steps and %d merge steps, want 4 and 2", ran, merges)
		}
		if got := untimed(t, "results.json"); !reflect.DeepEqual(got, want) {
			t.Errorf("merged results.json differs from the unsharded report")
		}
		if got := untimedJUnit(t, "junit.xml"); got != wantJUnit {
			t.Errorf("merged junit.xml differs from the unsharded one:\n%s\nwant\n%s", got, wantJUnit)
		}
		if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "| case ") || !strings.Contains(string(b), "outputs passed") {
			t.Errorf("step summary:\n%s", b)
		}
	})

	t.Run("kubernetes indexed job", func(t *testing.T) {
		job, merge := blocks[1], blocks[2]
		if get(t, job, "spec", "completionMode") != "Indexed" {
			t.Fatal("not an Indexed Job")
		}
		completions := get(t, job, "spec", "completions").(int)
		c := get(t, job, "spec", "template", "spec", "containers", 0)
		env := map[string]string{}
		for _, e := range get(t, c, "env").([]any) {
			env[e.(map[string]any)["name"].(string)] = e.(map[string]any)["value"].(string)
		}
		if env[envShardCount] != strconv.Itoa(completions) {
			t.Fatalf("%s = %q, completions %d", envShardCount, env[envShardCount], completions)
		}
		results := filepath.Join(dir, "results")
		os.Mkdir(results, 0o755)
		line := get(t, c, "args", 0).(string)
		for i := range completions {
			env[envShardIndex] = strconv.Itoa(i)
			l := strings.ReplaceAll(strings.ReplaceAll(line, "$"+envShardIndex, env[envShardIndex]), "/results", results)
			if code, stderr := runDocLine(t, l, env); code != 0 {
				t.Fatalf("%s: exit %d: %s", l, code, stderr)
			}
		}
		ml := get(t, merge, "spec", "template", "spec", "containers", 0, "args", 0).(string)
		if code, stderr := runDocLine(t, strings.ReplaceAll(ml, "/results", results), nil); code != 0 {
			t.Fatalf("%s: exit %d: %s", ml, code, stderr)
		}
		if got := untimedJUnit(t, filepath.Join(results, "junit.xml")); got != wantJUnit {
			t.Errorf("merged junit.xml differs from the unsharded one")
		}
		b, _ := os.ReadFile(filepath.Join(results, "summary.md"))
		if n := strings.Count(string(b), "| PASS"); n == 0 || !strings.Contains(string(b), "outputs passed") {
			t.Errorf("summary.md:\n%s", b)
		}
		// Each pod's report is the shard the index names.
		for i := range completions {
			var r struct {
				Shard struct{ Index, Count int }
			}
			b, _ := os.ReadFile(filepath.Join(results, "shard-"+strconv.Itoa(i)+".json"))
			if err := json.Unmarshal(b, &r); err != nil || r.Shard.Index != i+1 || r.Shard.Count != completions {
				t.Errorf("shard-%d.json: shard %+v (%v)", i, r.Shard, err)
			}
		}
	})
}
