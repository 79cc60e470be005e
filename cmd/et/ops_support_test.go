package main

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// et ops support -o csv writes test-backend-ops' support CSV column for
// column; the rows here are the real tool's (support -b ET0 --output csv
// at ggml d99724f2) for these cases.
func TestOpsSupportCSV(t *testing.T) {
	want := `backend_name,op_name,op_params,test_mode,supported,error_message,backend_reg_name
ET,RMS_NORM,"type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=0",support,1,yes,ET
ET,MUL_MAT,"type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=0",support,1,yes,ET
ET,GELU,"type=f16,ne_a=[128,2,2,2],v=0",support,0,no,ET
`
	code, out, errOut := runCLI(t, nil, "ops", "support", "-o", "csv",
		"RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=0)",
		"MUL_MAT(type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=0)",
		"GELU(type=f16,ne_a=[128,2,2,2],v=0)")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != want {
		t.Errorf("csv:\n%s\nwant:\n%s", out, want)
	}
	// The same as test-backend-ops' own quoting of every field, field by field.
	tbo := strings.ReplaceAll(`"backend_name","op_name","op_params","test_mode","supported","error_message","backend_reg_name"
"ET","GELU","type=f16,ne_a=[128,2,2,2],v=0","support","0","no","ET"`, "\r", "")
	a, _ := csv.NewReader(strings.NewReader(tbo)).ReadAll()
	b, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	if !slices.Equal(a[0], b[0]) || !slices.Equal(a[1], b[3]) {
		t.Errorf("fields differ from test-backend-ops': %q / %q", a, b)
	}
}

// llama.cpp's scripts/create_ops_docs.py reads docs/ops/*.csv with
// Python's csv.DictReader, keeping rows whose test_mode is support and
// reading backend_name, op_name, error_message ("yes"/"no") and
// backend_reg_name. The same reader takes et's CSV.
func TestOpsSupportCSVReadByPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	code, out, errOut := runCLI(t, nil, "ops", "support", "-o", "csv", "RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=0)", "GELU(type=f16,ne_a=[128,2,2,2],v=0)")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "ET.csv")
	os.WriteFile(path, []byte(out), 0o644)
	script := `import csv, sys
for row in csv.DictReader(open(sys.argv[1], newline='')):
    if row.get('test_mode') != 'support':
        continue
    print(row['backend_reg_name'] or row['backend_name'], row['op_name'], row['error_message'].strip().lower() == 'yes')
`
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, "-c", script, path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python: %v: %s", err, stderr.String())
	}
	if got := stdout.String(); got != "ET RMS_NORM True\nET GELU False\n" {
		t.Errorf("python read %q", got)
	}
}

// Without cases, ops support judges test-backend-ops' whole eval list.
func TestOpsSupportWholeList(t *testing.T) {
	_, out, _ := runCLI(t, nil, "ops", "support", "-o", "csv", "--op", "RMS_NORM")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows)-1 != 51 {
		t.Errorf("%d RMS_NORM rows, want test-backend-ops' 51", len(rows)-1)
	}
}

// The whole of et ops support -o csv is, row for row and field for field,
// what the real test-backend-ops support -b ET0 --output csv wrote
// (internal/runner/testdata, from the same ggml version).
func TestOpsSupportEqualsTestBackendOps(t *testing.T) {
	fh, err := os.Open("../../internal/runner/testdata/tbo-support-et0.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	want, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, nil, "ops", "support", "-o", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %.500s", code, errOut)
	}
	got, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, test-backend-ops has %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("row %d: %q, test-backend-ops: %q", i+1, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows differ", bad, len(want))
	}
}
