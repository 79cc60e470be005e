package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
)

// update rewrites golden files: go test ./cmd/et -run TestX -update
var update = flag.Bool("update", false, "rewrite golden files")

// assertGolden compares got with testdata/<name>.golden (shared helper for
// every command test in this package).
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// testFactory builds a factory for tests: no TTY, captured streams, an
// empty environment unless env is given.
func testFactory(env map[string]string) (*factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	f.Getenv = func(k string) string { return env[k] }
	f.IO = newIOStreams(strings.NewReader(""), &out, &errOut, f.Getenv)
	return f, &out, &errOut
}

// runCLI runs et with args on a test factory and returns the exit code
// and both streams.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := testFactory(env)
	code := execute(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

// openWrapped is run-op's device open (registry.Open) with each device
// wrapped by wrap: runOpOptions.OpenDevice for tests.
func openWrapped(wrap func(driver.Device) driver.Device) func(context.Context, registry.Spec) (*registry.Handle, error) {
	return func(ctx context.Context, s registry.Spec) (*registry.Handle, error) {
		h, err := registry.Open(ctx, s)
		if err == nil {
			h.Device = wrap(h.Device)
		}
		return h, err
	}
}
