package expect

import (
	"strings"
	"testing"
)

const sample = `# known defects
expected_failures:
  - case: norm
    output: n_rows1
    backend: sysemu
    measured: "NMSE 2.1e-01 (limit 1e-07)"
    why: norm_f32 is wrong with few rows
  - case: unary
    output: "*"
    uberkernel: true
    measured: NMSE 3e-7
    why: gelu family
  - case: unary
    output: round
    measured: NMSE 1e-2
    why: halfway cases
`

func TestParseAndMatch(t *testing.T) {
	s, err := Parse("x.yaml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != 3 {
		t.Fatalf("entries = %d", len(s.Entries))
	}
	if e := s.Entries[0]; e.Line != 3 || e.Where() != "x.yaml:3" || e.Backend != "sysemu" || e.Uberkernel != nil {
		t.Errorf("entry 0 = %+v", e)
	}
	sys := Run{Backend: "sysemu"}
	sysU := Run{Backend: "sysemu", Uberkernel: true}
	cases := []struct {
		run          Run
		cas, out     string
		wantLine     int // 0 = no match
		wantMatching string
	}{
		{sys, "norm", "n_rows1", 3, ""},
		{Run{Backend: "ref"}, "norm", "n_rows1", 0, "backend differs"},
		{sys, "norm", "n_rows2", 0, "other output"},
		{sys, "unary", "gelu", 0, "wildcard only with --uberkernel"},
		{sysU, "unary", "gelu", 8, ""},
		{sysU, "unary", "round", 13, "a named output wins over *"},
		{sys, "unary", "round", 13, ""},
	}
	for _, c := range cases {
		e := s.Match(c.run, c.cas, c.out)
		got := 0
		if e != nil {
			got = e.Line
		}
		if got != c.wantLine {
			t.Errorf("Match(%+v, %s, %s) = line %d, want %d (%s)", c.run, c.cas, c.out, got, c.wantLine, c.wantMatching)
		}
	}
	var nilSet *Set
	if nilSet.Match(sys, "norm", "n_rows1") != nil {
		t.Error("nil set matched")
	}
}

func TestUnused(t *testing.T) {
	s, err := Parse("x.yaml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	run := Run{Backend: "sysemu"}
	matched := map[*Entry]bool{&s.Entries[2]: true}
	un := s.Unused(run, map[string]bool{"norm": true, "unary": true}, matched)
	// entry 0 applies and ran but matched nothing; entry 1 needs
	// --uberkernel; entry 2 matched.
	if len(un) != 1 || un[0].Line != 3 {
		t.Errorf("unused = %v", un)
	}
	if un := s.Unused(run, map[string]bool{}, nil); len(un) != 0 {
		t.Errorf("entries of cases that did not run are not unused: %v", un)
	}
}

func TestParseErrors(t *testing.T) {
	entry := "  - {case: a, output: b, measured: m, why: w}\n"
	cases := []struct{ doc, want string }{
		{"expected_failures: [\n", "x.yaml:1: did not find expected node content"},
		{"other: 1\n", `x.yaml:1: unknown key "other"`},
		{"- a\n", "want a mapping with key expected_failures"},
		{"expected_failures: 3\n", "want a list of entries"},
		{"expected_failures:\n  - 3\n", "x.yaml:2: entry: want a mapping"},
		{"expected_failures:\n  - {case: a, output: b, why: w}\n", "x.yaml:2: entry has no measured"},
		{"expected_failures:\n  - {case: a, output: b, measured: m, why: ' '}\n", "entry has no why"},
		{"expected_failures:\n  - {output: b, measured: m, why: w}\n", "entry has no case"},
		{"expected_failures:\n  - {case: a, output: b, measured: m, why: w, nmse: 1}\n", `unknown key "nmse"`},
		{"expected_failures:\n  - {case: a, output: b, measured: m, why: w, backend: gpu}\n", `backend "gpu"`},
		{"expected_failures:\n  - {case: a, output: b, measured: m, why: w, uberkernel: 'yes'}\n", `uberkernel "yes"`},
		{"expected_failures:\n  - {case: [a], output: b, measured: m, why: w}\n", "case: want a scalar"},
		{"expected_failures:\n" + entry + entry, "x.yaml:3: same case, output, backend and uberkernel as the entry at line 2"},
		{"expected_failures:\n  - {case: a, output: b, measured: m, why: w, uberkernel: true}\n" + entry, "x.yaml:3: same case"},
	}
	for _, c := range cases {
		_, err := Parse("x.yaml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want %q", c.doc, err, c.want)
		}
	}
	// One entry with uberkernel: true and one with false do not collide.
	ok := "expected_failures:\n  - {case: a, output: b, measured: m, why: w, uberkernel: true}\n  - {case: a, output: b, measured: m, why: w, uberkernel: false}\n"
	if _, err := Parse("x.yaml", []byte(ok)); err != nil {
		t.Errorf("uberkernel true and false entries: %v", err)
	}
	for _, empty := range []string{"", "# nothing\n", "expected_failures:\n", "expected_failures: []\n"} {
		s, err := Parse("x.yaml", []byte(empty))
		if err != nil || len(s.Entries) != 0 {
			t.Errorf("Parse(%q) = %v, %v", empty, s, err)
		}
	}
}

// maxFuzzBytes bounds FuzzParse's inputs: two flow-style entries (about
// 70 bytes each, enough for the duplicate check) and a few stray keys fit;
// longer inputs only feed the fuzzer's minimiser, whose cost grows with the
// square of an input's length. sample (longer) is TestParseBigInputs'.
const maxFuzzBytes = 192

func FuzzParse(f *testing.F) {
	f.Add([]byte("expected_failures:\n  - case: norm\n    output: \"*\"\n    backend: sysemu\n    uberkernel: true\n    measured: m\n    why: w\n"))
	f.Add([]byte("expected_failures:\n  - {case: a, output: b, measured: m, why: w}\n"))
	f.Add([]byte("expected_failures:\n  - {case: a, output: b, measured: m, why: w}\n  - {case: a, output: b, measured: n, why: v}\n"))
	f.Add([]byte("expected_failures: [\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzBytes {
			return // see maxFuzzBytes
		}
		checkParse(t, b)
	})
}

// TestParseBigInputs runs FuzzParse's checks on an input past its bound.
func TestParseBigInputs(t *testing.T) {
	if len(sample) <= maxFuzzBytes {
		t.Fatalf("sample is %d bytes, not past maxFuzzBytes", len(sample))
	}
	checkParse(t, []byte(sample))
}

// checkParse is FuzzParse's body: Parse fails with an error naming the
// file, or returns complete entries.
func checkParse(t *testing.T, b []byte) {
	s, err := Parse("f.yaml", b)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "f.yaml") {
			t.Fatalf("error without the file name: %v", err)
		}
		return
	}
	for _, e := range s.Entries {
		if e.Case == "" || e.Output == "" || e.Line <= 0 {
			t.Fatalf("bad entry %+v", e)
		}
	}
}
