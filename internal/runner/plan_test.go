package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/graph"
)

func TestCheckMemory(t *testing.T) {
	c, err := graph.ParseCaseString("MUL_MAT(type_a=f32,type_b=f32,m=1024,n=1,k=1024)")
	if err != nil {
		t.Fatal(err)
	}
	need := CaseBytes(c)
	if need < 2*4*1024*1024 {
		t.Fatalf("CaseBytes = %d, want at least twice the 4 MiB weight", need)
	}
	var ge *graph.Error
	if err := CheckMemory(c, need-1); !errors.As(err, &ge) || !strings.Contains(err.Error(), "host memory") {
		t.Errorf("too little memory: err %v, want a *graph.Error about host memory", err)
	}
	if err := CheckMemory(c, need); err != nil {
		t.Errorf("enough memory: %v", err)
	}
	if err := CheckMemory(c, 0); err != nil {
		t.Errorf("unknown memory: %v", err)
	}
}
