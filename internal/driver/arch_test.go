package driver

import "testing"

// The ET architecture enum is decoded in one place, both ways.
func TestArch(t *testing.T) {
	for v, name := range map[int]string{0: "etsoc1", 1: "pantero", 2: "gepardo", 3: "", -1: ""} {
		if got := ArchName(v); got != name {
			t.Errorf("ArchName(%d) = %q, want %q", v, got, name)
		}
		if name != "" && ArchValue(name) != v {
			t.Errorf("ArchValue(%q) = %d, want %d", name, ArchValue(name), v)
		}
	}
	if ArchValue("unknown") != -1 || ArchValue("") != -1 {
		t.Error("ArchValue of an unknown name is not -1")
	}
}
