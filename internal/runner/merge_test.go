package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/graph"
)

// fakeRun is a run of cases named c0..cN-1 where case i gives i%3
// results, perf entries for every even case, and a fault for every fifth
// case: what Run gives, without a device.
func fakeRun(cases []*graph.Case, backend string) (Report, []Span) {
	r := Report{Schema: ReportSchema, Backend: backend, Device: "ref0", Numerics: "reference", Results: []Result{}}
	var spans []Span
	for _, c := range cases {
		var i int
		fmt.Sscanf(c.Name, "c%d", &i)
		var sp Span
		if i%5 == 4 {
			r.Faults = append(r.Faults, Fault{Case: c.Name, Step: "s"})
			sp.Faults = 1
		} else {
			for k := range i % 3 {
				r.Results = append(r.Results, Result{Case: c.Name, Output: fmt.Sprint("o", k), Status: "PASS"})
				sp.Results++
			}
			if i%2 == 0 {
				r.Perf = append(r.Perf, Timing{Case: c.Name, Kernel: "k"})
				sp.Perf++
			}
		}
		r.ABIChecked += sp.Results
		spans = append(spans, sp)
	}
	return r, spans
}

func fakeCases(n int) []*graph.Case {
	var cases []*graph.Case
	for i := range n {
		cases = append(cases, &graph.Case{Name: fmt.Sprint("c", i), File: fmt.Sprintf("d/c%d.yaml", i)})
	}
	return cases
}

// shardFiles runs the cases split n ways and returns the shard files as
// they come back from JSON.
func shardFiles(t *testing.T, cases []*graph.Case, n int) []ShardFile {
	t.Helper()
	var files []ShardFile
	for i := 1; i <= n; i++ {
		kept, info := Shard{i, n}.Select(cases)
		var planned []*Planned
		for _, c := range kept {
			planned = append(planned, &Planned{Case: c})
		}
		r, spans := fakeRun(kept, "ref")
		info.Fill(kept, planned, spans)
		r.Shard = info
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := DecodeShard(fmt.Sprintf("shard-%d.json", i), b)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, sf)
	}
	return files
}

func TestMergeEqualsOneRun(t *testing.T) {
	cases := fakeCases(23)
	want, _ := fakeRun(cases, "ref")
	for _, n := range []int{1, 2, 4, 7, 30} {
		files := shardFiles(t, cases, n)
		// Given in any order.
		files[0], files[len(files)-1] = files[len(files)-1], files[0]
		got, errs, err := Merge(files)
		if err != nil || len(errs) > 0 {
			t.Fatalf("n=%d: %v %v", n, err, errs)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("n=%d: merged\n%+v\nwant\n%+v", n, *got, want)
		}
	}
}

func TestMergeErrors(t *testing.T) {
	cases := fakeCases(9)
	files := func() []ShardFile { return shardFiles(t, cases, 3) }
	other := shardFiles(t, fakeCases(10), 3)
	for _, tt := range []struct {
		name   string
		shards func() []ShardFile
		want   string
	}{
		{"none", func() []ShardFile { return nil }, "merge: no shard files"},
		{"missing", func() []ShardFile { return files()[:2] }, "merge: missing shard(s) 3 of 3"},
		{"twice", func() []ShardFile { f := files(); return append(f, ShardFile{"again.json", f[1].Report}) }, "again.json: shard 2/3 again (also shard-2.json)"},
		{"other run", func() []ShardFile { f := files(); f[2] = other[2]; return f }, "shard-3.json: from another run than shard-1.json"},
		{"other split", func() []ShardFile {
			f := files()
			f = append(f[:2], shardFiles(t, cases, 4)[3])
			return f
		}, "shard-4.json: shard 4/4, but shard-1.json is a shard of 3"},
		{"other backend", func() []ShardFile { f := files(); f[1].Report.Backend = "sysemu"; return f }, "shard-2.json: backend sysemu, but shard-1.json ran on ref"},
		{"counts", func() []ShardFile { f := files(); f[1].Report.Shard.Cases[0].Results++; return f }, "shard-2.json: its shard.cases account for"},
		{"names", func() []ShardFile {
			f := files()
			f[0].Report.Shard.Cases[0].Name = "zz"
			return f
		}, "is \"zz\", but its entries are of case"},
		{"index", func() []ShardFile { f := files(); f[0].Report.Shard.Cases[0].Index = 99; return f }, "has index 99, not 0 to 8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Merge(tt.shards())
			var me *MergeError
			if err == nil || !errors.As(err, &me) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a MergeError with %q", err, tt.want)
			}
		})
	}
}

func TestDecodeShard(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "x.json: empty: no report"},
		{"{", "x.json: not JSON"},
		{`{"schema":"et.ops-explain/v1"}`, `schema "et.ops-explain/v1", want "et.run-op/v1"`},
		{`{"schema":"et.run-op/v1","results":[]}`, `not a shard`},
		{`{"schema":"et.run-op/v1","results":7}`, `field results`},
		{`{"schema":"et.run-op/v1","shard":{}} {}`, `more than one JSON document`},
	} {
		_, err := DecodeShard("x.json", []byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeShard(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestMergeErrorsOnce(t *testing.T) {
	files := shardFiles(t, fakeCases(4), 2)
	files[0].Report.Shard.Errors = []string{"bad.yaml:3: unknown op", "c1.yaml: too big"}
	files[1].Report.Shard.Errors = []string{"bad.yaml:3: unknown op"}
	_, errs, err := Merge(files)
	if err != nil || !reflect.DeepEqual(errs, []string{"bad.yaml:3: unknown op", "c1.yaml: too big"}) {
		t.Errorf("errs %q, err %v", errs, err)
	}
}

// maxFuzzShard bounds each of FuzzMerge's inputs: a shard of a case or
// two with an entry of each kind fits (the seeds are under 250 bytes);
// longer inputs only feed the fuzzer's minimiser, whose cost grows with
// the square of an input's length. Whole shard files (KiBs) are
// TestMergeBigInputs'.
const maxFuzzShard = 320

// fuzzShardSeeds are FuzzMerge's seeds: two shards of one 3-case run in
// compact JSON, entries of every kind, and a shard with bad counts.
var fuzzShardSeeds = [][2]string{
	{`{"schema":"et.run-op/v1","backend":"ref","results":[{"case":"a","output":"o"}],"perf":[{"case":"a"}],"shard":{"index":1,"count":2,"cases_total":3,"cases_digest":"d","cases":[{"index":0,"name":"a","results":1,"perf":1}]}}`,
		`{"schema":"et.run-op/v1","backend":"ref","results":[],"faults":[{"case":"b"}],"abi_mismatches":[{"case":"c"}],"shard":{"index":2,"count":2,"cases_total":3,"cases_digest":"d","cases":[{"index":1,"name":"b","faults":1},{"index":2,"name":"c","abi_mismatches":1}]}}`},
	{`{"schema":"et.run-op/v1","backend":"ref","results":[],"shard":{"index":1,"count":2,"cases_total":2,"cases_digest":"d","cases":[{"index":0,"name":"a"}],"errors":["x.yaml: bad"]}}`,
		`{"schema":"et.run-op/v1","backend":"ref","results":[],"shard":{"index":2,"count":2,"cases_total":2,"cases_digest":"d","cases":[{"index":1,"results":9223372036854775807},{"index":-1}]}}`},
}

// FuzzMerge: whatever the shard files say, Merge returns a report or an
// error, never panics; a report it returns has every entry of every shard.
func FuzzMerge(f *testing.F) {
	for _, s := range fuzzShardSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > maxFuzzShard || len(b) > maxFuzzShard {
			return // see maxFuzzShard
		}
		checkMerge(t, a, b)
	})
}

// TestMergeBigInputs runs FuzzMerge's checks on whole shard files (the
// seeds are small) and checks that the seeds merge.
func TestMergeBigInputs(t *testing.T) {
	files := shardFiles(t, fakeCases(5), 2)
	var in [2][]byte
	for i, sf := range files {
		b, err := json.Marshal(sf.Report)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= maxFuzzShard {
			t.Fatalf("shard %d is %d bytes, not past maxFuzzShard", i, len(b))
		}
		in[i] = b
	}
	checkMerge(t, in[0], in[1])
	for i, s := range fuzzShardSeeds {
		if len(s[0]) > maxFuzzShard || len(s[1]) > maxFuzzShard {
			t.Errorf("seed %d is past maxFuzzShard", i)
		}
	}
	s := fuzzShardSeeds[0]
	var shards []ShardFile
	for i, in := range []string{s[0], s[1]} {
		sf, err := DecodeShard(fmt.Sprint(i), []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, sf)
	}
	if m, _, err := Merge(shards); err != nil || len(m.Results) != 1 || len(m.Perf) != 1 || len(m.Faults) != 1 || len(m.ABIMismatches) != 1 {
		t.Fatalf("seed 0 does not merge: %v", err)
	}
}

// checkMerge is FuzzMerge's body.
func checkMerge(t *testing.T, a, b []byte) {
	var shards []ShardFile
	for i, in := range [][]byte{a, b} {
		sf, err := DecodeShard(fmt.Sprint(i), in)
		if err != nil {
			return
		}
		shards = append(shards, sf)
	}
	m, _, err := Merge(shards)
	if err != nil {
		return
	}
	n := 0
	for _, sf := range shards {
		n += len(sf.Report.Results)
	}
	if len(m.Results) != n {
		t.Errorf("merged %d results of %d", len(m.Results), n)
	}
}
