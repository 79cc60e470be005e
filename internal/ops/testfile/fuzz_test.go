package testfile

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
)

// FuzzParse: any text gives cases and file:line errors, never a panic;
// every case has its output node and validates again.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(llamaFile)
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte("35 0 3 5 1 1 0 1 0 3 5 1 1 20 4 60 60 t\n"))
	f.Add([]byte("42 1 8 6 1 1 0 3 0 8 4 1 1 0 0 0 0 27 4 1 1 1 0 0 0 0 1 8 6 1 1 0 0 0 0 s"))
	f.Add([]byte("25 0 8\n\n9999 0 1 1 1 1 0 0 -\r\n"))
	m := abi.Default()
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, errs := Parse("fuzz.txt", data, m)
		for _, err := range errs {
			var ge *graph.Error
			if !errors.As(err, &ge) || ge.File != "fuzz.txt" || ge.Line < 1 {
				t.Fatalf("error %v (%T) has no file:line", err, err)
			}
		}
		for _, c := range cs {
			if len(c.Outputs) != 1 || c.Node(c.Outputs[0]) == nil || c.OpDesc == "" {
				t.Fatalf("incomplete case %+v", c)
			}
		}
	})
}
