package graph

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// hostCaseStrings are case strings of test-backend-ops' list (support -b
// CPU) for the ops ggml-et does not implement, with the type and shape of
// the output that ggml's constructor gives (worked out by hand from
// ggml.c's formulas, not by et).
var hostCaseStrings = []struct {
	in  string
	typ ops.Type
	ne  [4]int64
}{
	{"DIV(type=f16,ne=[1,1,8,1],nr=[1,1,1,1],nf=1,perm1=0,src_overlap=0)", ops.F16, [4]int64{1, 1, 8, 1}},
	{"SQRT(type=f16,ne=[7,1,5,3])", ops.F16, [4]int64{7, 1, 5, 3}},
	{"LOG(type=f32,ne=[10,5,4,3])", ops.F32, [4]int64{10, 5, 4, 3}},
	{"SIN(type=f32,ne=[10,2,2,2])", ops.F32, [4]int64{10, 2, 2, 2}},
	{"COS(type=f16,ne=[7,1,5,3])", ops.F16, [4]int64{7, 1, 5, 3}},
	{"XIELU(type=f16,ne=[10,5,4,3])", ops.F16, [4]int64{10, 5, 4, 3}},
	{"LEAKY_RELU(type=f32,ne_a=[10,5,4,3],negative_slope=0.100000)", ops.F32, [4]int64{10, 5, 4, 3}},
	{"SUM(type=f32,ne=[11,5,6,3],permute=[0,2,1,3])", ops.F32, [4]int64{1, 1, 1, 1}},
	{"DUP(type=f32,ne=[10,10,5,1],permute=[0,2,1,3])", ops.F32, [4]int64{10, 5, 10, 1}},
	{"ARGMAX(type=f32,ne=[32,513,1,1])", ops.I32, [4]int64{513, 1, 1, 1}},
	{"COUNT_EQUAL(type=f32,ne=[4,500,1,1])", ops.I64, [4]int64{1, 1, 1, 1}},
	{"ARGSORT(type=f32,ne=[4,1,1,1],order=1)", ops.I32, [4]int64{4, 1, 1, 1}},
	{"TOP_K(type=f32,ne=[12,1,2,1],k=3,ties=1)", ops.I32, [4]int64{3, 1, 2, 1}},
	{"ACC(type=f32,ne_a=[256,17,2,3],ne_b=[64,16,2,3],stride_dim=3)", ops.F32, [4]int64{256, 17, 2, 3}},
	{"ADD_ID(type_a=f32,type_b=f32,n_embd=32,n_experts=4,n_experts_used=1,n_token=32)", ops.F32, [4]int64{32, 1, 32, 1}},
	{"ARANGE(type=f32,start=0.000000,stop=1048576.000000,step=1.000000)", ops.F32, [4]int64{1048576, 1, 1, 1}},
	{"DIAG_MASK_INF(type=f32,ne=[10,10,3,1],n_past=5)", ops.F32, [4]int64{10, 10, 3, 1}},
	{"TIMESTEP_EMBEDDING(type=f32,ne_a=[2,1,1,1],dim=320,max_period=10000)", ops.F32, [4]int64{320, 2, 1, 1}},
	{"PAD_REFLECT_1D(type=f32,ne_a=[512,34,2,1],pad_0=10,pad_1=9)", ops.F32, [4]int64{531, 34, 1, 1}},
	{"ROLL(shift0=3,shift1=-2,shift3=1,shift4=-1,permute=1)", ops.F32, [4]int64{10, 4, 5, 3}},
	{"OUT_PROD(type_a=f32,type_b=f32,m=256,n=1,k=1,bs=[1,1],nr=[1,2],trans_b=0)", ops.F32, [4]int64{256, 1, 1, 2}},
	{"OUT_PROD(type_a=f16,type_b=f32,m=32,n=16,k=8,bs=[2,1],nr=[2,1],trans_b=1)", ops.F32, [4]int64{32, 16, 4, 1}},
	{"SILU_BACK(type=f32,ne=[64,5,4,3],eps=0.000001)", ops.F32, [4]int64{64, 5, 4, 3}},
	{"RMS_NORM_BACK(type=f32,ne=[1025,5,4,3],eps=0.000000)", ops.F32, [4]int64{1025, 5, 4, 3}},
	{"SOFT_MAX_BACK(type=f32,ne=[15,15,1,1],scale=1.000000,max_bias=8.000000)", ops.F32, [4]int64{15, 15, 1, 1}},
	{"REPEAT_BACK(type=f32,ne=[8,6,4,2],nr=[2,1,1,1],v=1)", ops.F32, [4]int64{8, 6, 4, 2}},
	{"GET_ROWS_BACK(type=f32,n=1,m=70000,r=4,b=1,v=1)", ops.F32, [4]int64{1, 70000, 1, 1}},
	{"ROPE_BACK(type=f16,ne_a=[128,40,2,1],n_dims=128,mode=24,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=1,v=2,inplace=0,n_offs=32)", ops.F16, [4]int64{128, 40, 2, 1}},
	{"CROSS_ENTROPY_LOSS(type=f32,ne=[30000,1,1,1])", ops.F32, [4]int64{1, 1, 1, 1}},
	{"CROSS_ENTROPY_LOSS_BACK(type=f32,ne=[10,5,4,3])", ops.F32, [4]int64{10, 5, 4, 3}},
	{"OPT_STEP_ADAMW(type=f32,ne=[10,5,4,3])", ops.F32, [4]int64{10, 5, 4, 3}},
	{"OPT_STEP_SGD(type=f32,ne=[10,5,4,3])", ops.F32, [4]int64{10, 5, 4, 3}},
	// (197 - 1)·1 + 16 = 212.
	{"CONV_TRANSPOSE_1D(ne_input=[197,32,1,1],ne_kernel=[16,32,32,1],s0=1,p0=0,d0=1)", ops.F32, [4]int64{212, 32, 1, 1}},
	// (10 - 1)·2 + 3 = 21.
	{"CONV_TRANSPOSE_2D(kernel_type=f32,ne_input=[10,10,9,1],ne_kernel=[3,3,1,9],stride=2)", ops.F32, [4]int64{21, 21, 1, 1}},
	{"CONV_2D_DW(ne_input=[17,34,9,1],ne_kernel=[3,3,1,9],type_kernel=f32,stride=1,padding=0,dilation=1,cwhn=1)", ops.F32, [4]int64{15, 32, 9, 1}},
	// OW = (20 + 4 - 4 - 1)/2 + 1 = 10, OH = 22, OD = (18 + 2 - 4 - 1) + 1 = 16.
	{"CONV_3D(N=1,IC=1,ID=18,IH=22,IW=20,OC=1,KD=3,KH=1,KW=5,s0=2,s1=1,s2=1,p0=2,p1=0,p2=1,d0=1,d1=1,d2=2,type_kernel=f16)", ops.F32, [4]int64{10, 22, 16, 1}},
	{"IM2COL_3D(type_input=f32,type_kernel=f32,dst_type=f32,ne_input=[20,20,10,3],ne_kernel=[3,3,3,3],IC=3,s0=1,s1=1,s2=1,p0=1,p1=1,p2=1,d0=1,d1=1,d2=1,v=0)", ops.F32, [4]int64{81, 20, 20, 10}},
	// With v the input is [18, 18, 8, 1]: N = 1/3 = 0, as in ggml.
	{"IM2COL_3D(type_input=f32,type_kernel=f32,dst_type=f16,ne_input=[20,20,10,3],ne_kernel=[3,3,3,3],IC=3,s0=1,s1=1,s2=1,p0=1,p1=1,p2=1,d0=1,d1=1,d2=1,v=1)", ops.F16, [4]int64{81, 18, 18, 0}},
	// (197 - 1)·8 + 16 = 1584.
	{"COL2IM_1D(type=f32,K=16,OC=32,T_in=197,s0=8,p0=0)", ops.F32, [4]int64{1584, 32, 1, 1}},
	{"POOL_1D(pool_type=max,type_input=f32,ne_input=[11,1,3,2],k0=3,s0=2,p0=1)", ops.F32, [4]int64{6, 1, 3, 2}},
	{"POOL_2D(pool_type=avg,type_input=f32,ne_input=[10,10,3,1],k0=3,k1=3,s0=2,s1=1,p0=1,p1=0)", ops.F32, [4]int64{5, 8, 3, 1}},
	{"UPSCALE(type=f32,ne=[4,6,3,2],scale_factor=3,mode=bilinear|antialias,transpose=1)", ops.F32, [4]int64{18, 12, 3, 2}},
	{"UPSCALE(type=f32,ne=[5,7,11,13],ne_tgt=[2,5,7,11],mode=bicubic|align_corners)", ops.F32, [4]int64{2, 5, 7, 11}},
	{"GATED_LINEAR_ATTN(type=f32,head_count=32,head_size=64,n_seq_tokens=32,n_seqs=1)", ops.F32, [4]int64{2048, 96, 1, 1}},
	{"LIGHTNING_INDEXER(hsk=128,nh=32,kv=256,nb=1,ns=1,nm=1,type_K=f16)", ops.F32, [4]int64{256, 1, 1, 1}},
	{"DSV4_HC_COMB(n_tokens=17,n_iter=4,eps=0.000001)", ops.F32, [4]int64{4, 4, 17, 1}},
	{"DSV4_HC_PRE(n_embd=31,n_tokens=17)", ops.F32, [4]int64{31, 17, 1, 1}},
	{"DSV4_HC_POST(n_embd=31,n_tokens=17)", ops.F32, [4]int64{31, 4, 17, 1}},
}

func TestParseCaseStringHost(t *testing.T) {
	seen := map[string]bool{}
	for _, tt := range hostCaseStrings {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseCaseString(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			out := c.Node("out")
			if out == nil || len(c.Outputs) != 1 || c.Outputs[0] != "out" {
				t.Fatalf("no single output node out: %s", summary(c))
			}
			if out.Type != tt.typ || [4]int64(out.Ne) != tt.ne {
				t.Errorf("out is %s %v, want %s %v\n%s", out.Type, out.Ne, tt.typ, tt.ne, summary(c))
			}
			name, _, _ := strings.Cut(tt.in, "(")
			seen[name] = true
		})
	}
	for name := range hostCaseBuilders {
		if !seen[name] {
			t.Errorf("no case string of %s in hostCaseStrings", name)
		}
	}
}

// TestParseCaseStringHostGraphs pins the graph of a few builders whose
// views and permutes follow test-backend-ops' build_graph.
func TestParseCaseStringHostGraphs(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ACC(type=f32,ne_a=[8,3,1,1],ne_b=[4,2,1,1],stride_dim=1)",
			"a:f32[8 3 1 1] b_pad:f32[4 3 1 1] | b=view(b_pad){nb=[16 48 48],ne=[4 2 1 1],offset=16}[4 2 1 1] out=acc(a,b){nb1=32,nb2=96,nb3=96,offset=0}[8 3 1 1]"},
		{"GET_ROWS_BACK(type=f32,n=3,m=5,r=4,b=1,v=1)",
			"rows:i32[4 1]=randint(0, 5) grad:f32[3 4 1] | rows_view=view(rows){nb=[16 16 16],ne=[2 1 1 1],offset=0}[2 1 1 1] out=get_rows_back(grad,rows_view){ne=[3 5]}[3 5 1 1]"},
		{"CONV_2D_DW(ne_input=[5,4,3,1],ne_kernel=[3,3,1,3],cwhn=1)",
			"input:f32[5 4 3 1] kernel:f32[3 3 1 3] | input_p=permute(input){axes=[1 2 0 3]}[3 5 4 1] input_cwhn=cont(input_p)[3 5 4 1] input_whcn=permute(input_cwhn){axes=[2 0 1 3]}[5 4 3 1] kernel_p=permute(kernel){axes=[2 3 1 0]}[3 1 3 3] kernel_cwhn=cont(kernel_p)[3 1 3 3] kernel_whcn=permute(kernel_cwhn){axes=[3 2 0 1]}[3 3 1 3] out=conv_2d_dw(kernel_whcn,input_whcn){d0=1,d1=1,p0=0,p1=0,s0=1,s1=1}[3 2 3 1]"},
	} {
		c, err := ParseCaseString(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := summary(c); got != tt.want {
			t.Errorf("%s: got\n  %s\nwant\n  %s", tt.in, got, tt.want)
		}
	}
	// The labels go through soft_max (whose params are not pinned here).
	c, err := ParseCaseString("CROSS_ENTROPY_LOSS(type=f32,ne=[10,5,1,1])")
	if err != nil {
		t.Fatal(err)
	}
	if sm, out := c.Node("labels_normalized"), c.Node("out"); sm == nil || sm.Op != ops.OpSoftMax || strings.Join(sm.Src, ",") != "labels" ||
		out.Op != ops.OpCrossEntropyLoss || strings.Join(out.Src, ",") != "logits,labels_normalized" {
		t.Errorf("cross_entropy_loss graph: %s", summary(c))
	}
	for _, in := range []string{"LEAKY_RELU", "OPT_STEP_SGD", "OPT_STEP_ADAMW"} {
		c, err := ParseCaseString(in)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Node("out").InPlace {
			t.Errorf("%s: out is not in place (ggml builds it as a view of a)", in)
		}
	}
}

func TestParseCaseStringHostErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"CONV_3D(N=1,IC=1)", "ID: missing"},
		{"UPSCALE(mode=trilinear)", `unknown scale mode "trilinear"`},
		{"UPSCALE(mode=bilinear|sharp)", `unknown scale flag "sharp"`},
		{"POOL_1D(pool_type=median)", `pool_type: unknown value "median"`},
		{"TOP_K(ne=[4,1,1,1],k=5)", "k: must be in [1, x.ne0]"},
		{"PAD_REFLECT_1D(ne_a=[4,2,1,1],pad_0=4)", "p0 = 4"},
		{"ROPE_BACK(v=4)", "v=4"},
		{"ARANGE(type=f16)", "ggml_arange makes f32"},
	} {
		_, err := ParseCaseString(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}
