package etrt

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRealShimCompiles checks the real shim, which CI cannot link, against
// API stubs of the runtime headers (shim/testdata/include, restated from
// the reference): g++ -std=c++17 accepts it, and the package builds with
// -tags etrt (compiling realshim.cpp through cgo, without linking).
func TestRealShimCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles C++")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	inc, err := filepath.Abs("shim/testdata/include")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
		"-I"+inc, "shim/etshim.cpp").CombinedOutput()
	if err != nil {
		t.Fatalf("g++ -std=c++17 shim/etshim.cpp: %v\n%s", err, out)
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skip("no go tool")
	}
	if v, err := exec.Command(goTool, "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(v)) != "1" {
		t.Skip("cgo disabled")
	}
	cmd := exec.Command(goTool, "build", "-tags", "etrt", ".")
	cmd.Env = append(os.Environ(), "CGO_CXXFLAGS=-I"+inc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags etrt: %v\n%s", err, out)
	}
}
