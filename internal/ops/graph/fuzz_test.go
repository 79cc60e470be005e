package graph

import (
	"os"
	"path/filepath"
	"testing"
)

// maxFuzzYAML bounds FuzzLoadYAML's inputs: a case with two tensors and
// two nodes in flow style (base, about 200 bytes) fits; longer inputs only
// feed the fuzzer's minimiser, whose cost grows with the square of an
// input's length. The longer case files are TestLoadYAMLBigInputs'.
const maxFuzzYAML = 256

// FuzzLoadYAML: any input loads or fails with an error; a case that loads
// has defaults resolved and validates again.
func FuzzLoadYAML(f *testing.F) {
	addSmallFiles(f, filepath.Join("testdata", "cases", "*.yaml"), maxFuzzYAML)
	f.Add([]byte(base))
	f.Add([]byte("name: t\ntensors:\n  x: {type: f32, ne: [4], init: uniform(-1, 1)}\nnodes:\n  - {name: y, op: view, src: [x], params: {ne: [2], offset: 8}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzYAML {
			return // see maxFuzzYAML
		}
		checkLoadYAML(t, b)
	})
}

// TestLoadYAMLBigInputs runs FuzzLoadYAML's checks on the case files past
// its bound.
func TestLoadYAMLBigInputs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	n := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > maxFuzzYAML {
			n++
			checkLoadYAML(t, b)
		}
	}
	if n == 0 {
		t.Fatal("no case file past maxFuzzYAML")
	}
}

// checkLoadYAML is FuzzLoadYAML's body.
func checkLoadYAML(t *testing.T, b []byte) {
	c, err := LoadBytes("fuzz.yaml", b, "")
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error %T is not *Error: %v", err, err)
		}
		return
	}
	if c.Name == "" || len(c.Nodes) == 0 || len(c.Outputs) == 0 {
		t.Fatalf("loaded an incomplete case: %+v", c)
	}
}

// maxFuzzNpy bounds FuzzReadNpy's inputs: a header (128 bytes in the
// common case) and a few values reach every branch of DecodeNpy, and the
// fuzzer's minimiser, whose cost grows with the square of an input's
// length, would spend a minute on each new long input instead of
// fuzzing. Bigger files are the unit tests'.
const maxFuzzNpy = 256

// addSmallFiles adds the files matching pattern of at most max bytes as
// seeds.
func addSmallFiles(f *testing.F, pattern string, max int) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files for %s", pattern)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) <= max {
			f.Add(b)
		}
	}
}

// FuzzReadNpy: no input panics; what decodes has consistent sizes.
func FuzzReadNpy(f *testing.F) {
	addSmallFiles(f, filepath.Join("testdata", "npy", "*.npy"), maxFuzzNpy)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzNpy {
			return // see maxFuzzNpy
		}
		a, err := DecodeNpy(b)
		if err != nil {
			return
		}
		if a.Float() {
			if v, err := a.Float32s(); err != nil || int64(len(v)) != a.Len() {
				t.Fatalf("Float32s: %d values, %v; want %d", len(v), err, a.Len())
			}
		} else if v, err := a.Int64s(); err != nil || int64(len(v)) != a.Len() {
			t.Fatalf("Int64s: %d values, %v; want %d", len(v), err, a.Len())
		}
	})
}

// FuzzParseCaseString: no input panics; what parses is a valid case.
func FuzzParseCaseString(f *testing.F) {
	for _, s := range []string{
		"MUL_MAT(type_a=q8_0,type_b=f32,m=4096,n=1,k=4096)",
		"MUL_MAT(type_a=f32,type_b=f32,m=16,n=8,k=32,bs=[2,3],nr=[1,1],per=[0,2,1,3])",
		"ADD(type=f32,ne=[4096,1,1,1],nr=[1,512,1,1],nf=1,perm1=0,src_overlap=0)",
		"RMS_NORM(type=f32,ne=[64,5,4,3],v=1,eps=0.000001,inplace=0)",
		"SOFT_MAX(type=f32,ne=[32,2,3,1],mask=1,sinks=1,m_prec=f16,nr23=[2,1],scale=0.100000,max_bias=8.000000,inplace=0)",
		"ROPE(type=f32,ne_a=[128,32,2,1],n_dims=128,mode=2,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=1,v=1,inplace=0)",
		"SWIGLU(type=f32,ne_a=[128,2,2,2],v=1,split)",
		"GET_ROWS(type=q4_0,n=256,m=5,r=4,b=2,v=1)",
		"SET_ROWS(type=f16,type_idx=i64,ne=[64,5,2,1],nr23=[1,1],r=2,v=0)",
		"CPY(type_src=f32,type_dst=f16,ne=[8,4,2,1],permute_src=[1,0,2,3],permute_dst=[0,0,0,0])",
		"CONT(type=f32,ne=[10,10,10,1])",
		"FLASH_ATTN_EXT(hsk=64,hsv=64,nh=4,nr23=[2,1],kv=128,nb=3,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_KV=f16,permute=[0,1,2,3])",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCaseString(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			return
		}
		if len(c.Nodes) == 0 || len(c.Outputs) != 1 {
			t.Fatalf("parsed an incomplete case: %+v", c)
		}
	})
}
