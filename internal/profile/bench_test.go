package profile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ainekko/et/internal/kernelmap"
)

// benchTrace generates a trace of at least mb MiB into a temp directory
// (once per benchmark) and returns its path and kernel map.
func benchTrace(b *testing.B, mb int64) (string, *kernelmap.Map) {
	b.Helper()
	if testing.Short() {
		b.Skip("generates a large trace")
	}
	if p := os.Getenv("ET_BENCH_TRACE"); p != "" {
		return p, nil
	}
	path := filepath.Join(b.TempDir(), "et_runtime_trace.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	res, err := Generate(f, GenOptions{Bytes: mb << 20, Devices: 2, Kernels: 12, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %s: %d events, %d bytes, %d launches", path, res.Events, res.Bytes, res.Launches)
	return path, kernelmap.New(res.Kernels...)
}

func benchReport(b *testing.B, views []string) {
	mb := int64(210)
	if s := os.Getenv("ET_BENCH_MB"); s != "" {
		mb, _ = strconv.ParseInt(s, 10, 64)
	}
	path, km := benchTrace(b, mb)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := BuildReport([]Input{{File: path, R: f}}, ReportOptions{Views: views, Kernels: km, Device: -1})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.Launches == 0 {
			b.Fatal("no launches")
		}
	}
}

// BenchmarkReport measures the default report (summary, kernels, memcpy)
// over a generated trace of ≥ 200 MB: go test -bench Report -benchmem -run '^$' ./internal/profile
func BenchmarkReport(b *testing.B) { benchReport(b, nil) }

// BenchmarkReportAll is BenchmarkReport with every view.
func BenchmarkReportAll(b *testing.B) { benchReport(b, AllViews) }

// BenchmarkDecode measures the decoder alone on the sample.
func BenchmarkDecode(b *testing.B) {
	data := readFixture(b, "two_devices.json")
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, _, _, err := decodeAll(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteBenchTrace writes the benchmark trace to $ET_GEN_TRACE (and its
// kernel map beside it), for measuring the et binary and python:
//
//	ET_GEN_TRACE=/tmp/big/et_runtime_trace.json go test -run WriteBenchTrace ./internal/profile
func TestWriteBenchTrace(t *testing.T) {
	path := os.Getenv("ET_GEN_TRACE")
	if path == "" {
		t.Skip("set ET_GEN_TRACE to write the benchmark trace")
	}
	mb := int64(300)
	if s := os.Getenv("ET_BENCH_MB"); s != "" {
		mb, _ = strconv.ParseInt(s, 10, 64)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generate(f, GenOptions{Bytes: mb << 20, Devices: 2, Kernels: 12, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	km, err := os.Create(filepath.Join(filepath.Dir(path), "kernel_id.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer km.Close()
	if err := writeKernelMap(km, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events, %d bytes, %d launches", res.Events, res.Bytes, res.Launches)
}
