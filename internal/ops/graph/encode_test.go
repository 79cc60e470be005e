package graph

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"
)

// sameCase compares what a case file says (not where it came from).
func sameCase(t *testing.T, what string, a, b *Case) {
	t.Helper()
	if a.Name != b.Name || a.Seed != b.Seed || !reflect.DeepEqual(a.Outputs, b.Outputs) || !reflect.DeepEqual(a.Tolerance, b.Tolerance) {
		t.Errorf("%s: header differs: %q %d %v %+v / %q %d %v %+v", what, a.Name, a.Seed, a.Outputs, a.Tolerance, b.Name, b.Seed, b.Outputs, b.Tolerance)
	}
	if len(a.Tensors) != len(b.Tensors) || len(a.Nodes) != len(b.Nodes) {
		t.Fatalf("%s: %d tensors %d nodes, then %d and %d", what, len(a.Tensors), len(a.Nodes), len(b.Tensors), len(b.Nodes))
	}
	for i, x := range a.Tensors {
		y := b.Tensors[i]
		if x.Name != y.Name || x.Type != y.Type || !reflect.DeepEqual(x.Ne, y.Ne) || x.Init.String() != y.Init.String() {
			t.Errorf("%s: tensor %s differs: %+v / %+v", what, x.Name, x, y)
		}
	}
	for i, x := range a.Nodes {
		y := b.Nodes[i]
		if x.Name != y.Name || x.Op != y.Op || !reflect.DeepEqual(x.Src, y.Src) || !reflect.DeepEqual(x.Params, y.Params) ||
			x.InPlace != y.InPlace || x.Type != y.Type || x.Ne != y.Ne {
			t.Errorf("%s: node %s differs:\n%+v\n%+v", what, x.Name, x, y)
		}
	}
}

// Every case file of testcases/ and every case string below, written by
// EncodeCase, loads back into the same case.
func TestEncodeCaseRoundTrip(t *testing.T) {
	var cases []*Case
	files, _ := filepath.Glob("../../../testcases/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testcases")
	}
	for _, f := range files {
		c, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	for _, s := range []string{
		"MUL_MAT(type_a=q8_0,type_b=f32,m=64,n=3,k=64)",
		"ROPE(type=f32,ne_a=[128,4,2,1],n_dims=128,mode=2,n_ctx=512,fs=1.4245,ef=0.7465,af=1.4245,ff=1,v=0,inplace=0)",
		"SOFT_MAX(type=f32,ne=[32,4,2,1],mask=1,m_prec=f32,nr23=[1,1],scale=0.1,max_bias=8)",
		"FLASH_ATTN_EXT(hsk=64,hsv=64,nh=4,nr23=[1,1],kv=64,nb=3,mask=1,max_bias=0,logit_softcap=0,prec=f32,type_KV=f16,permute=[0,1,2,3])",
		"GET_ROWS(type=q4_0,n=256,m=5,r=4,b=1,v=0)",
		"CPY(type_src=f32,type_dst=f16,ne=[64,4,3,1],permute_src=[0,0,0,0],permute_dst=[0,0,0,0])",
		"SCALE(type=f32,ne=[10,10,10,10],scale=2,bias=0,inplace=1)",
		"CLAMP(type=f32,ne=[10,5,4,3],min=-0.5,max=0.5)",
	} {
		c, err := ParseCaseString(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := EncodeCase(&b, c, nil); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		back, err := LoadBytes("saved.yaml", b.Bytes(), filepath.Dir(c.File))
		if err != nil {
			t.Fatalf("%s: the written case does not load: %v\n%s", c.Name, err, b.String())
		}
		sameCase(t, c.Name, c, back)
	}
}
