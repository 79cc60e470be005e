// Package tbocases is the list of test-backend-ops' eval cases at the ggml
// version of et's built-in ABI manifest: every case string its
// `support --output csv` names (19,726 at ggml d99724f2), in its order.
// et ops support judges them all when given no other cases; regen.sh
// regenerates the list from the real tool.
package tbocases

//go:generate sh regen.sh

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"sync"
)

//go:embed cases.csv.gz
var casesGz []byte

// Case is one case: the op name and the displayed params, as
// test-backend-ops prints them ("MUL_MAT" and "type_a=f16,...").
type Case struct {
	Op     string
	Params string
}

// String is the case string, OP(params).
func (c Case) String() string { return c.Op + "(" + c.Params + ")" }

var all = sync.OnceValues(func() ([]Case, error) {
	zr, err := gzip.NewReader(bytes.NewReader(casesGz))
	if err != nil {
		return nil, fmt.Errorf("tbocases: %w", err)
	}
	r := csv.NewReader(zr)
	var out []Case
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tbocases: %w", err)
		}
		if len(rec) != 2 {
			return nil, fmt.Errorf("tbocases: line %d has %d fields, want 2", line, len(rec))
		}
		if line == 1 {
			continue // the header
		}
		out = append(out, Case{Op: rec[0], Params: rec[1]})
	}
})

// All returns every case, in test-backend-ops' order.
func All() ([]Case, error) { return all() }
