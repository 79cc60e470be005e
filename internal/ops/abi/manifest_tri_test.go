package abi

import (
	"strings"
	"testing"
)

func TestTriTypes(t *testing.T) {
	m := Default()
	for _, tt := range []struct {
		name string
		want int32
	}{
		{"upper_diag", 0}, {"upper", 1}, {"lower_diag", 2}, {"lower", 3},
		{"LOWER", 3}, {"GGML_TRI_TYPE_UPPER", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := m.TriValue(tt.name)
			if !ok || v != tt.want {
				t.Fatalf("TriValue(%q) = %d, %v; want %d", tt.name, v, ok, tt.want)
			}
			n, ok := m.TriName(v)
			if !ok || n != strings.TrimPrefix(strings.ToUpper(tt.name), "GGML_TRI_TYPE_") {
				t.Errorf("TriName(%d) = %q, %v", v, n, ok)
			}
		})
	}
	if _, ok := m.TriValue("diag"); ok {
		t.Error("TriValue(diag) is ok")
	}
	if _, ok := m.TriName(4); ok {
		t.Error("TriName(4) is ok")
	}
}

// TestTriTypesOptional: a manifest written before the tri_types section
// existed still loads; it just has no tri values.
func TestTriTypesOptional(t *testing.T) {
	y := string(DefaultYAML())
	start := strings.Index(y, "tri_types:")
	end := strings.Index(y, "# The uberkernel dispatcher")
	if start < 0 || end < start {
		t.Fatal("embedded manifest has no tri_types section before the uberkernel section")
	}
	m, err := Parse("old.yaml", []byte(y[:start]+y[end:]))
	if err != nil {
		t.Fatalf("manifest without tri_types: %v", err)
	}
	if _, ok := m.TriValue("lower"); ok {
		t.Error("TriValue(lower) is ok without a tri_types section")
	}
	// A present section is checked like the other enums.
	bad := strings.Replace(y, "  UPPER: 1\n", "  UPPER: 0\n", 1)
	if _, err := Parse("dup.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "already used by") {
		t.Errorf("duplicate tri value: err = %v", err)
	}
}
