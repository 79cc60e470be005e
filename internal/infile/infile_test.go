package infile

import (
	"testing"
)

// sizeText writes sizes as et's tables do (the bound in the error of an
// endless input).
func TestSizeText(t *testing.T) {
	for b, want := range map[uint64]string{512: "512 B", MaxText: "64 MiB", MaxTrace: "4 GiB", 1536: "1.5 KiB"} {
		if got := SizeText(b); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", b, got, want)
		}
	}
}
