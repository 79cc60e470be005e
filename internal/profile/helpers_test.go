package profile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and generated fixtures")

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run with -update to create it): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch (run with -update after review)\n--- want\n%.3000s\n--- got\n%.3000s", path, want, got)
	}
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeAll decodes b and returns the events, stats, warnings and error.
func decodeAll(b []byte) ([]Event, Stats, *Warnings, error) {
	var w Warnings
	var evs []Event
	st, err := Decode(bytes.NewReader(b), Options{File: "t.json", Warnings: &w}, func(e Event) error {
		evs = append(evs, e)
		return nil
	})
	return evs, st, &w, err
}
