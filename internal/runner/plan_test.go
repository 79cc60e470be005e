package runner

import (
	"errors"
	"runtime"
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

// TestPlanAllocatesNoData plans a case of 1 GiB of leaves and results
// (and explains it): planning works on tensors without data, so it
// allocates a few KiB, not the tensors (et ops explain and --explain of
// a 64 GiB case used to die of an out-of-memory crash).
func TestPlanAllocatesNoData(t *testing.T) {
	c, err := graph.ParseCaseString("ADD(type=f32,ne=[4096,4096,8,1],nr=[1,1,1,1],nf=1)")
	if err != nil {
		t.Fatal(err)
	}
	if need := CaseBytes(c); need < 1<<30 {
		t.Fatalf("CaseBytes = %d, want a case of at least 1 GiB", need)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pc, err := PlanCase(c, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = pc.Plan.Explain()
	runtime.ReadMemStats(&after)
	// The data would be 1.5 GiB; the bound leaves room for anything else
	// the process allocates meanwhile.
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Errorf("planning allocated %d bytes, want no tensor data (under 256 MiB)", got)
	}
	for i, v := range pc.Graph.Values {
		if v.T.Buf != nil {
			t.Errorf("value %d (%s) has %d bytes of data after planning", i, v.Name, len(v.T.Buf))
		}
	}
	out := pc.Graph.Values[pc.Graph.Outputs[0]].T
	if want := uint64(4096 * 4096 * 8 * 4); out.BufLen() != want {
		t.Errorf("output BufLen = %d, want %d", out.BufLen(), want)
	}
}
