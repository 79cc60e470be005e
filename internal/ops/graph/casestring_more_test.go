package graph

import (
	"errors"
	"strings"
	"testing"
)

// moreCaseStrings are test-backend-ops style strings of the ops of
// casestring_more.go with the graph each must build.
var moreCaseStrings = []struct {
	in   string
	want string
}{
	{"SQR(type=f32,ne=[16,5,4,3])", "a:f32[16 5 4 3] | out=sqr(a)[16 5 4 3]"},
	{"SQR", "a:f32[10 5 4 3] | out=sqr(a)[10 5 4 3]"},
	{"SUM_ROWS(type=f32,ne=[10,5,4,3],permute=0,slice=0)", "a:f32[10 5 4 3] | out=sum_rows(a)[1 5 4 3]"},
	{"SUM_ROWS(type=f32,ne=[10,5,4,3],permute=1,slice=1)",
		"a:f32[10 5 4 3] | a_slice=view(a){nb=[40 400 800],ne=[10 5 2 2],offset=800}[10 5 2 2] a_perm=permute(a_slice){axes=[0 2 3 1]}[10 2 5 2] out=sum_rows(a_perm)[1 2 5 2]"},
	{"MEAN(type=f32,ne=[10,5,4,3])", "a:f32[10 5 4 3]=uniform(-0.9, 1.1) | out=mean(a)[1 5 4 3]"},
	{"CLAMP(type=f32,ne=[10,5,4,3],min=-0.500000,max=0.500000)", "a:f32[10 5 4 3] | out=clamp(a){max=0.5,min=-0.5}[10 5 4 3]"},
	{"CUMSUM(type=f32,ne=[10,5,4,3])", "a:f32[10 5 4 3] | out=cumsum(a)[10 5 4 3]"},
	{"MUL_MAT_ID(type_a=q8_0,type_b=f32,n_mats=8,n_used=2,b=0,m=16,n=3,k=64)",
		"as:q8_0[64 16 8] ids:i32[8 3]=perm(8) b:f32[64 2 3] | ids_view=view(ids){nb=[32 96 96],ne=[2 3 1 1],offset=0}[2 3 1 1] out=mul_mat_id(as,b,ids_view)[16 2 3 1]"},
	{"MUL_MAT_ID(type_a=f16,type_b=f32,n_mats=4,n_used=4,b=1,m=16,n=2,k=32)",
		"as:f16[32 16 4] ids:i32[4 2]=perm(4) b:f32[32 1 2] | out=mul_mat_id(as,b,ids)[16 4 2 1]"},
	{"L2_NORM(type=f32,ne=[64,64,320,1],eps=0.000000,v=0,noncontig_rows=0)", "a:f32[64 64 320 1] | out=l2_norm(a){eps=0}[64 64 320 1]"},
	{"L2_NORM(type=f32,ne=[32,4,1,1],noncontig_rows=1)",
		"a:f32[4 32 1 1] | a_perm=permute(a){axes=[1 0 2 3]}[32 4 1 1] out=l2_norm(a_perm){eps=1e-12}[32 4 1 1]"},
	{"L2_NORM(type=f32,ne=[32,4,2,1],v=1)",
		"a:f32[32 4 2 1] | a_view=view(a){nb=[128 512 1024],ne=[16 2 1 1],offset=0}[16 2 1 1] out=l2_norm(a_view){eps=1e-12}[16 2 1 1]"},
	{"L2_NORM(type=f32,ne=[32,4,2,1],v=1,noncontig_rows=1)",
		"a:f32[4 32 2 1] | a_perm=permute(a){axes=[1 0 2 3]}[32 4 2 1] a_perm_view=view(a_perm){nb=[4 512 1024],ne=[16 2 1 1],offset=0}[16 2 1 1] out=l2_norm(a_perm_view){eps=1e-12}[16 2 1 1]"},
	{"GROUP_NORM(type=f32,ne=[64,64,320,1],num_groups=32,eps=0.000001)",
		"a:f32[64 64 320 1] | out=group_norm(a){eps=1e-06,n_groups=32}[64 64 320 1]"},
	{"IM2COL(type_input=f32,type_kernel=f16,dst_type=f32,ne_input=[10,10,3,1],ne_kernel=[3,3,3,1],s0=1,s1=1,p0=1,p1=1,d0=1,d1=1,is_2D=1)",
		"kernel:f16[3 3 3 1] input:f32[10 10 3 1] | out=im2col(kernel,input){d0=1,d1=1,dst_type=f32,is_2d=true,p0=1,p1=1,s0=1,s1=1}[27 10 10 1]"},
	{"IM2COL(ne_input=[10,3,1,1],ne_kernel=[3,3,1,1],is_2D=0,dst_type=f16)",
		"kernel:f16[3 3 1 1] input:f32[10 3 1 1] | out=im2col(kernel,input){d0=1,d1=1,dst_type=f16,is_2d=false,p0=1,p1=1,s0=1,s1=1}[9 10 1 1]"},
	{"CONV_2D(ne_input=[16,16,16,1],ne_kernel=[3,3,16,32],type_kernel=f32,stride0=2,stride1=1,padding0=1,padding1=0,dilation0=1,dilation1=1,cwhn=0)",
		"kernel:f32[3 3 16 32] input:f32[16 16 16 1] | out=conv_2d(kernel,input){d0=1,d1=1,p0=1,p1=0,s0=2,s1=1}[8 14 32 1]"},
	{"CONV_2D(ne_input=[5,4,3,1],ne_kernel=[2,2,3,2],type_kernel=f16,stride0=1,stride1=1,padding0=0,padding1=0,dilation0=1,dilation1=1,cwhn=1)",
		"kernel:f16[2 2 3 2] input:f32[5 4 3 1] | input_p=permute(input){axes=[1 2 0 3]}[3 5 4 1] input_cwhn=cont(input_p)[3 5 4 1] input_whcn=permute(input_cwhn){axes=[2 0 1 3]}[5 4 3 1] kernel_p=permute(kernel){axes=[2 3 1 0]}[2 3 2 2] kernel_cwhn=cont(kernel_p)[2 3 2 2] kernel_whcn=permute(kernel_cwhn){axes=[3 2 0 1]}[2 2 3 2] out=conv_2d(kernel_whcn,input_whcn){d0=1,d1=1,p0=0,p1=0,s0=1,s1=1}[4 3 2 1]"},
	{"CONV_2D", "kernel:f32[3 3 16 16] input:f32[64 64 16 1] | out=conv_2d(kernel,input){d0=1,d1=1,p0=0,p1=0,s0=1,s1=1}[62 62 16 1]"},
	{"CONCAT(type=f32,ne_a=[10,5,5,5],ne_b_d=5,dim=2,v=0)", "a:f32[10 5 5 5] b:f32[10 5 5 5] | out=concat(a,b){dim=2}[10 5 10 5]"},
	{"CONCAT(type=f32,ne_a=[16,2,1,1],ne_b_d=3,dim=0,v=3)",
		"a:f32[32 8 3 1] b:f32[9 4 4 1] | a_view=view(a){nb=[128 1024 3072],ne=[16 2 1 1],offset=0}[16 2 1 1] b_view=view(b){nb=[36 144 576],ne=[3 2 1 1],offset=0}[3 2 1 1] out=concat(a_view,b_view){dim=0}[19 2 1 1]"},
	{"CONCAT(type=f32,ne_a=[16,2,3,2],ne_b_d=5,dim=3,v=12)",
		"a:f32[16 2 6 8] b:f32[16 2 9 10] | a_view=view(a){nb=[64 128 768],ne=[16 2 3 2],offset=0}[16 2 3 2] b_view=view(b){nb=[64 128 1152],ne=[16 2 3 5],offset=0}[16 2 3 5] out=concat(a_view,b_view){dim=3}[16 2 3 7]"},
	{"REPEAT(type=f32,ne=[10,5,4,3],nr=[2,2,2,2])", "a:f32[10 5 4 3] | out=repeat(a){ne=[20 10 8 6]}[20 10 8 6]"},
	{"PAD(type=f32,ne_a=[512,512,1,1],pad_0=1,pad_1=1,circular=0)",
		"a:f32[512 512 1 1] | out=pad(a){circular=false,lp=[0 0 0 0],rp=[1 1 0 0]}[513 513 1 1]"},
	{"PAD(type=f32,ne_a=[16,4,3,1],lp0=0,rp0=0,lp1=1,rp1=2,lp2=0,rp2=1,lp3=0,rp3=0,tfrm=0,circular=0)",
		"a:f32[16 4 3 1] | out=pad(a){circular=false,lp=[0 1 0 0],rp=[0 2 1 0]}[16 7 4 1]"},
	{"PAD(type=f32,ne_a=[16,4,3,1],lp0=0,rp0=0,tfrm=1)",
		"a:f32[16 4 3 1] | a_view=view(a){nb=[64 256 768],ne=[8 2 2 1],offset=0}[8 2 2 1] out=pad(a_view){circular=false,lp=[0 1 1 1],rp=[0 1 1 1]}[8 4 4 3]"},
	{"PAD(type=f32,ne_a=[16,4,3,1],tfrm=2)",
		"a:f32[16 4 3 1] | a_perm=permute(a){axes=[2 1 0 3]}[3 4 16 1] out=pad(a_perm){circular=false,lp=[1 1 1 1],rp=[1 1 1 1]}[5 6 18 3]"},
	{"PAD(type=f32,ne_a=[33,17,2,1],pad_0=4,pad_1=3,circular=1)",
		"a:f32[33 17 2 1] | out=pad(a){circular=true,lp=[0 0 0 0],rp=[4 3 0 0]}[37 20 2 1]"},
	{"FILL(type=f32,ne=[10,10,4,3],c=2.000000)", "a:f32[10 10 4 3] | out=fill(a){c=2}[10 10 4 3]"},
	{"DIAG(type=f32,ne=[16,1,4,3])", "a:f32[16 1 4 3] | out=diag(a)[16 16 4 3]"},
	{"TRI(type=f32,ne=[10,10,4,3],tri_type=3)", "a:f32[10 10 4 3] | out=tri(a){type=lower}[10 10 4 3]"},
	{"TRI(type=f32,ne=[10,10,4,3],tri_type=0)", "a:f32[10 10 4 3] | out=tri(a){type=upper_diag}[10 10 4 3]"},
	{"TRI(tri_type=lower_diag)", "a:f32[10 10 4 3] | out=tri(a){type=lower_diag}[10 10 4 3]"},
	{"SOLVE_TRI(type=f32,ne_lhs=[10,10,4,3],ne_rhs=[3,10,4,3])",
		"a:f32[10 10 4 3]=uniform(0.1, 1) b:f32[3 10 4 3] | out=solve_tri(a,b){left=true,lower=true,uni=false}[3 10 4 3]"},
	{"SET(type_src=f32,type_dst=f32,ne=[6,5,4,3],dim=1,inplace=0)",
		"dst:f32[12 5 4 3] src:f32[6 5 4 3] | out=set(dst,src){inplace=false,nb1=24,nb2=120,nb3=480,offset=12}[12 5 4 3]"},
	{"SET(type_src=f32,type_dst=f32,ne=[16,5,4,3],dim=2,inplace=1)",
		"dst:f32[32 10 4 3] src:f32[16 5 4 3] | out=set(dst,src){inplace=true,nb1=64,nb2=320,nb3=1280,offset=288}[32 10 4 3]"},
	{"SSM_CONV(type=f32,ne_a=[6,64,2,1],ne_b=[4,64,1,1])", "sx:f32[6 64 2 1] c:f32[4 64 1 1] | out=ssm_conv(sx,c)[64 3 2 1]"},
	{"SSM_CONV", "sx:f32[10 10 10 1] c:f32[3 10 1 1] | out=ssm_conv(sx,c)[10 8 10 1]"},
	{"SSM_SCAN(type=f32,d_state=16,head_dim=4,n_head=8,n_group=2,n_seq_tokens=3,n_seqs=2,xbc_overlap=0)",
		"s:f32[16 4 8 2] dt:f32[8 3 2] A:f32[1 8]=uniform(-1, -0.5) x:f32[4 8 3 2] B:f32[16 2 3 2] C:f32[16 2 3 2] ids:i32[2]=perm(2) | out=ssm_scan(s,x,dt,A,B,C,ids){K=1}[1216 1 1 1]"},
	{"SSM_SCAN(type=f32,d_state=16,head_dim=4,n_head=8,n_group=2,n_seq_tokens=3,n_seqs=2,xbc_overlap=1,K=2)",
		"s:f32[16 4 8 2] dt:f32[8 3 2] A:f32[1 8]=uniform(-1, -0.5) xbc:f32[16 8 3 4] ids:i32[2]=perm(2) | x=view(xbc){nb=[64 512 1536],ne=[4 8 3 2],offset=1536}[4 8 3 2] B=view(xbc){nb=[64 512 1536],ne=[16 2 3 2],offset=0}[16 2 3 2] C=view(xbc){nb=[64 512 1536],ne=[16 2 3 2],offset=3072}[16 2 3 2] out=ssm_scan(s,x,dt,A,B,C,ids){K=2}[2240 1 1 1]"},
	{"RWKV_WKV6(type=f32,head_count=2,head_size=8,n_seq_tokens=3,n_seqs=2)",
		"r:f32[8 2 6] k:f32[8 2 6] v:f32[8 2 6] tf:f32[8 2] td:f32[8 2 6] state:f32[128 2] | out=rwkv_wkv6(k,v,r,tf,td,state)[16 22 1 1]"},
	{"RWKV_WKV7(type=f32,head_count=2,head_size=8,n_seq_tokens=3,n_seqs=2)",
		"r:f32[8 2 6] w:f32[8 2 6] k:f32[8 2 6] v:f32[8 2 6] a:f32[8 2 6] b:f32[8 2 6] state:f32[128 2] | a_norm=l2_norm(a){eps=1e-07}[8 2 6 1] b_norm=l2_norm(b){eps=1e-07}[8 2 6 1] out=rwkv_wkv7(r,w,k,v,a_norm,b_norm,state)[16 22 1 1]"},
	{"GATED_DELTA_NET(type=f32,head_count=4,head_size=16,n_seq_tokens=1,n_seqs=1,v_repeat=1,permuted=0,kda=0,K=1)",
		"q:f32[16 4 1 1] k:f32[16 4 1 1] v:f32[16 4 1 1]=uniform(-0.3, 5) g:f32[1 4 1 1]=uniform(-20, -0.0001) beta:f32[1 4 1 1]=uniform(0, 1) state:f32[16 16 4 1] | q_norm=l2_norm(q){eps=1e-06}[16 4 1 1] k_norm=l2_norm(k){eps=1e-06}[16 4 1 1] out=gated_delta_net(q_norm,k_norm,v,g,beta,state){K=1}[64 17 1 1]"},
	{"GATED_DELTA_NET(head_count=2,head_size=16,n_seq_tokens=3,n_seqs=1,v_repeat=2,permuted=1,kda=1,K=2)",
		"q:f32[16 3 2 1] k:f32[16 3 2 1] v:f32[16 3 4 1]=uniform(-0.3, 5) g:f32[16 4 3 1]=uniform(-20, -0.0001) beta:f32[1 4 3 1]=uniform(0, 1) state:f32[16 16 4 1] | q_perm=permute(q){axes=[0 2 1 3]}[16 2 3 1] k_perm=permute(k){axes=[0 2 1 3]}[16 2 3 1] v_perm=permute(v){axes=[0 2 1 3]}[16 4 3 1] q_norm=l2_norm(q_perm){eps=1e-06}[16 2 3 1] k_norm=l2_norm(k_perm){eps=1e-06}[16 2 3 1] out=gated_delta_net(q_norm,k_norm,v_perm,g,beta,state){K=2}[64 35 1 1]"},
}

func TestParseCaseStringMore(t *testing.T) {
	for _, tt := range moreCaseStrings {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseCaseString(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(c); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
			if len(c.Outputs) != 1 || c.Outputs[0] != "out" {
				t.Errorf("outputs %v, want [out]", c.Outputs)
			}
		})
	}
}

// TestCaseStringOpsListed: every builder is reachable by name and listed.
func TestCaseStringOpsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, op := range CaseStringOps() {
		listed[op] = true
	}
	for _, op := range []string{"SQR", "SUM_ROWS", "MEAN", "CLAMP", "CUMSUM", "MUL_MAT_ID", "L2_NORM", "GROUP_NORM",
		"IM2COL", "CONV_2D", "CONCAT", "REPEAT", "PAD", "FILL", "DIAG", "TRI", "SOLVE_TRI", "SET", "SSM_CONV",
		"SSM_SCAN", "RWKV_WKV6", "RWKV_WKV7", "GATED_DELTA_NET"} {
		if !listed[op] {
			t.Errorf("CaseStringOps() lacks %s", op)
		}
	}
}

func TestParseCaseStringMoreErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"SQR(type=f32,ne=[10,5,4,3],v=1)", `SQR: unknown key "v" (want ne, type)`},
		{"SUM_ROWS(ne=[10,5,1,3],slice=1)", "SUM_ROWS: slice=1 needs ne2 >= 2 and ne3 >= 2"},
		{"CLAMP(min=x)", `CLAMP: min: want a finite number, got "x"`},
		{"MUL_MAT_ID(n_mats=2,n_used=3)", "MUL_MAT_ID: n_used = 3 is more than n_mats = 2"},
		{"MUL_MAT_ID(o=2)", `MUL_MAT_ID: unknown key "o"`},
		{"L2_NORM(noncontig_rows=2)", `L2_NORM: noncontig_rows: want 0 or 1, got "2"`},
		{"L2_NORM(inplace=1)", `L2_NORM: unknown key "inplace"`},
		{"GROUP_NORM(num_groups=0)", "group_norm"},
		{"IM2COL(is_2D=2)", `IM2COL: is_2D: want 0 or 1, got "2"`},
		{"IM2COL(ne_kernel=[3,3,4,1])", "kernel.ne2 = 4 != data.ne2 = 3"},
		{"CONV_2D(cwhn=2)", `CONV_2D: cwhn: want 0 or 1, got "2"`},
		{"CONV_2D(ne_input=[2,2,16,1])", "too small"},
		{"CONCAT(dim=4)", "CONCAT: dim = 4, want 0 to 3"},
		{"CONCAT(v=16)", "CONCAT: v = 16, want 0 to 15"},
		{"REPEAT(nr=[0,1,1,1])", "REPEAT: nr: dim 0 is 0, want a positive size"},
		{"PAD(circular=2)", `PAD: circular: want 0 or 1, got "2"`},
		{"PAD(pad_0=1,lp0=1)", "PAD: pad_0 (test_pad) cannot be mixed with lp0..rp3"},
		{"PAD(lp1=-1)", "PAD: lp1: want a non-negative padding, got -1"},
		{"PAD(tfrm=3)", "PAD: tfrm = 3, want 0 (none), 1 (view) or 2 (permute)"},
		{"TRI(tri_type=7)", `TRI: tri_type: unknown value "7" (want 0 upper_diag, 1 upper, 2 lower_diag, 3 lower)`},
		{"TRI(tri_type=middle)", `TRI: tri_type: unknown value "middle"`},
		{"TRI(ne=[10,8,1,1])", "not square"},
		{"SOLVE_TRI(ne_rhs=[3,9,4,3])", "b.ne1 = 9 != a.ne1 = 10"},
		{"SET(dim=5)", "SET: dim = 5, want 0 to 4"},
		{"SET(type_src=f16)", "b is f16, want a's type f32"},
		{"SSM_CONV(ne_b=[3,3,1,1])", "sx.ne1 = 10 != c.ne1 = 3"},
		{"SSM_SCAN(K=0)", "SSM_SCAN: K: want a positive size, got 0"},
		{"SSM_SCAN(n_head=3,n_group=2)", "not a multiple of n_group"},
		{"RWKV_WKV6(head_size=0)", "RWKV_WKV6: head_size: want a positive size, got 0"},
		{"GATED_DELTA_NET(K=0)", "GATED_DELTA_NET: K: want a positive size, got 0"},
		{"GATED_DELTA_NET(kda=2)", `GATED_DELTA_NET: kda: want 0 or 1, got "2"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseCaseString(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			var ie interface{ InputError() }
			if !errors.As(err, &ie) {
				t.Errorf("error %T does not implement InputError", err)
			}
		})
	}
}

// TestCaseStringsMoreMaterialize: the leaves of every new builder can be
// filled (inits such as perm(n) fit their tensors).
func TestCaseStringsMoreMaterialize(t *testing.T) {
	for _, tt := range moreCaseStrings {
		c, err := ParseCaseString(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		big := false
		for _, s := range c.Tensors {
			n := int64(1)
			for _, d := range s.Ne {
				n *= d
			}
			big = big || n > 1<<20
		}
		if big {
			continue
		}
		if _, err := Materialize(c); err != nil {
			t.Errorf("%s: %v", tt.in, err)
		}
	}
}

// FuzzParseCaseStringMore: the new builders never panic; what parses is a
// complete case.
func FuzzParseCaseStringMore(f *testing.F) {
	for _, tt := range moreCaseStrings {
		f.Add(tt.in)
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
