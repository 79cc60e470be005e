package graph

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// summary renders a case compactly: leaves, then nodes with their params
// (sorted) and result shapes.
func summary(c *Case) string {
	var parts []string
	for _, s := range c.Tensors {
		init := ""
		if s.Init.Func != "" && s.Init.String() != "uniform(-1, 1)" {
			init = "=" + s.Init.String()
		}
		parts = append(parts, fmt.Sprintf("%s:%s%v%s", s.Name, s.Type, s.Ne, init))
	}
	parts = append(parts, "|")
	for _, n := range c.Nodes {
		var ps []string
		for k, v := range n.Params {
			ps = append(ps, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(ps)
		p := ""
		if len(ps) > 0 {
			p = "{" + strings.Join(ps, ",") + "}"
		}
		if n.InPlace {
			p += "!inplace"
		}
		parts = append(parts, fmt.Sprintf("%s=%s(%s)%s%v", n.Name, n.Op, strings.Join(n.Src, ","), p, n.Ne))
	}
	return strings.Join(parts, " ")
}

func TestParseCaseString(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"MUL_MAT(type_a=q8_0,type_b=f32,m=4096,n=1,k=4096)",
			"a:q8_0[4096 4096 1 1] b:f32[4096 1 1 1] | out=mul_mat(a,b)[4096 1 1 1]"},
		{"MUL_MAT(type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=0)",
			"a:q8_0[256 16 1 1] b:f32[256 1 1 1] | out=mul_mat(a,b)[16 1 1 1]"},
		{"MUL_MAT(type_a=f16,type_b=f32,m=16,n=8,k=32,bs=[2,3],nr=[2,1])",
			"a:f16[32 16 2 3] b:f32[32 8 4 3] | out=mul_mat(a,b)[16 8 4 3]"},
		{"MUL_MAT(type_a=f32,type_b=f32,m=16,n=8,k=32,bs=[2,3],nr=[1,1],per=[0,2,1,3])",
			"a:f32[32 2 16 3] b:f32[32 2 8 3] | a_perm=permute(a){axes=[0 2 1 3]}[32 16 2 3] b_perm=permute(b){axes=[0 2 1 3]}[32 8 2 3] out=mul_mat(a_perm,b_perm)[16 8 2 3]"},
		{"MUL_MAT(type_a=f32,type_b=f32,m=4,n=2,k=32,k_v=64)",
			"a:f32[64 4 1 1] b:f32[64 2 1 1] | a_view=view(a){nb=[256 1024 1024],ne=[32 4 1 1],offset=0}[32 4 1 1] b_view=view(b){nb=[256 512 512],ne=[32 2 1 1],offset=0}[32 2 1 1] out=mul_mat(a_view,b_view)[4 2 1 1]"},
		{"MUL_MAT(type_a=f32,type_b=f32,m=32,n=4,k=96,bs=[3,2],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=1)",
			"base:f32[192 32 3 2] | a=view(base){nb=[768 24576 73728],ne=[96 32 3 2],offset=0}[96 32 3 2] b=view(base){nb=[768 24576 73728],ne=[96 4 3 2],offset=384}[96 4 3 2] out=mul_mat(a,b)[32 4 3 2]"},
		{"MUL_MAT(type_a=f16,type_b=f32,m=16,n=2,k=32,o=3)",
			"a:f16[32 16 1 1] b:f32[32 2 1 1] | mm=mul_mat(a,b)[16 2 1 1] mm2=mul_mat(a,b)[16 2 1 1] sum1=add(mm,mm2)[16 2 1 1] mm3=mul_mat(a,b)[16 2 1 1] out=add(sum1,mm3)[16 2 1 1]"},
		{"MUL_MAT_HADAMARD(type_a=f32,type_b=f32,m=4,n=1,k=4,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=0)",
			"a:f32[4 4 1 1]=hadamard() b:f32[4 1 1 1] | out=mul_mat(a,b)[4 1 1 1]"},
		{"ADD(type=f32,ne=[4096,1,1,1],nr=[1,512,1,1],nf=1,perm1=0,src_overlap=0)",
			"a:f32[4096 512 1 1] b:f32[4096 1 1 1] | out=add(a,b)[4096 512 1 1]"},
		{"MUL(type=f32,ne=[10,5,4,3],nr=[2,1,1,1],nf=3)",
			"a:f32[20 5 4 3]=uniform(0.9, 1.1) b0:f32[10 5 4 3]=uniform(0.9, 1.1) b1:f32[10 5 4 3]=uniform(0.9, 1.1) b2:f32[10 5 4 3]=uniform(0.9, 1.1) | out0=mul(a,b0)[20 5 4 3] out1=mul(out0,b1)[20 5 4 3] out=mul(out1,b2)[20 5 4 3]"},
		{"ADD(type=f32,ne=[4,3,2,1],nr=[1,1,1,1],nf=1,perm1=1,src_overlap=0)",
			"a:f32[4 3 2 1] b:f32[3 2 4 1] | b_perm=permute(b){axes=[1 2 0 3]}[4 3 2 1] out=add(a,b_perm)[4 3 2 1]"},
		{"SUB(type=f32,ne=[4,3,2,6],nr=[2,1,1,1],nf=2,perm1=0,src_overlap=1)",
			"a:f32[8 3 2 6] | a_view=view(a){nb=[32 96 192],ne=[4 3 2 4],offset=0}[4 3 2 4] b0=view(a){nb=[32 96 192],ne=[4 3 2 4],offset=384}[4 3 2 4] out0=sub(a_view,b0)[4 3 2 4] b1=view(a){nb=[32 96 192],ne=[4 3 2 4],offset=384}[4 3 2 4] out=sub(out0,b1)[4 3 2 4]"},
		{"SUB(type=f16)", "a:f16[10 10 1 1] b:f16[10 10 1 1] | out=sub(a,b)[10 10 1 1]"},
		{"RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=0)",
			"a:f32[64 5 4 3] | out=rms_norm(a){eps=1e-06}[64 5 4 3]"},
		{"RMS_NORM(type=f32,ne=[64,5,4,3],v=1,eps=0.000010,inplace=1)",
			"a:f32[64 5 4 3] | a_view=view(a){nb=[256 1280 5120],ne=[32 2 2 1],offset=0}[32 2 2 1] out=rms_norm(a_view){eps=1e-05}!inplace[32 2 2 1]"},
		{"RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=1)",
			"a:f32[64 5 4 3] | out=rms_norm(a){eps=1e-06}!inplace[64 5 4 3]"},
		{"SCALE(type=f32,ne=[16,2,1,1],scale=2.000000,bias=0.000000,inplace=1)",
			"a:f32[16 2 1 1] | out=scale(a){bias=0,scale=2}!inplace[16 2 1 1]"},
		{"NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001)", "a:f32[64 5 4 3] | out=norm(a){eps=1e-06}[64 5 4 3]"},
		{"SCALE(type=f32,ne=[10,10,10,10],scale=2.000000,bias=0.500000,inplace=0)",
			"a:f32[10 10 10 10] | out=scale(a){bias=0.5,scale=2}[10 10 10 10]"},
		{"SOFT_MAX(type=f32,ne=[32,2,3,1],mask=1,sinks=1,m_prec=f16,nr23=[2,1],scale=0.100000,max_bias=8.000000,inplace=0)",
			"a:f32[32 2 6 1] mask:f16[32 2 3 1] sinks:f32[6] | out=soft_max(a,mask,sinks){max_bias=8,scale=0.1,sinks=true}[32 2 6 1]"},
		{"SOFT_MAX(type=f32,ne=[16,2,1,1],mask=0,sinks=0,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0)",
			"a:f32[16 2 1 1] | out=soft_max(a){max_bias=0,scale=1,sinks=false}[16 2 1 1]"},
		{"SOFT_MAX(type=f32,ne=[16,2,3,1],mask=0,sinks=1,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0)",
			"a:f32[16 2 3 1] sinks:f32[3] | out=soft_max(a,sinks){max_bias=0,scale=1,sinks=true}[16 2 3 1]"},
		{"ROPE(type=f32,ne_a=[128,32,2,1],n_dims=128,mode=2,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=1,v=0,inplace=0)",
			"a:f32[128 32 2 1] pos:i32[2]=randint(0, 512) freq_factors:f32[64]=uniform(0.9, 1.1) | out=rope(a,pos,freq_factors){attn_factor=1,beta_fast=1,beta_slow=1,ext_factor=0,freq_base=10000,freq_scale=1,mode=neox,n_ctx_orig=0,n_dims=128,n_offs=0,sections=[0 0 0 0]}[128 32 2 1]"},
		{"ROPE(type=f16,ne_a=[64,4,3,1],n_dims=32,mode=0,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=0,v=1,inplace=0)",
			"a:f16[128 16 9 1] pos:i32[3]=randint(0, 512) | a_view=view(a){nb=[256 4096 36864],ne=[64 4 3 1],offset=0}[64 4 3 1] out=rope(a_view,pos){attn_factor=1,beta_fast=1,beta_slow=1,ext_factor=0,freq_base=10000,freq_scale=1,mode=normal,n_ctx_orig=0,n_dims=32,n_offs=0,sections=[0 0 0 0]}[64 4 3 1]"},
		// vision: ggml n_dims = n_dims/2, sections [n_dims/4, n_dims/4, 0, 0]; v=2: the second half of dim 0.
		{"ROPE(type=f32,ne_a=[128,12,2,1],n_dims=128,mode=24,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=0,v=2,inplace=0,n_offs=0)",
			"a:f32[256 12 2 1] pos:i32[8]=randint(0, 512) | a_view=view(a){nb=[1024 12288 24576],ne=[128 12 2 1],offset=512}[128 12 2 1] out=rope(a_view,pos){attn_factor=1,beta_fast=1,beta_slow=1,ext_factor=0,freq_base=10000,freq_scale=1,mode=vision,n_ctx_orig=0,n_dims=64,n_offs=0,sections=[32 32 0 0]}[128 12 2 1]"},
		{"ROPE(type=f32,ne_a=[128,12,2,1],n_dims=96,mode=8,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=0,v=0,inplace=0,n_offs=16)",
			"a:f32[128 12 2 1] pos:i32[8]=randint(0, 512) | out=rope(a,pos){attn_factor=1,beta_fast=1,beta_slow=1,ext_factor=0,freq_base=10000,freq_scale=1,mode=mrope,n_ctx_orig=0,n_dims=96,n_offs=16,sections=[32 32 32 0]}[128 12 2 1]"},
		{"SILU(type=f32,ne_a=[128,2,2,2],v=0)",
			"a:f32[128 2 2 2]=uniform(-150, 150) | out=unary(a){op=silu}[128 2 2 2]"},
		{"GELU_ERF(type=f16,ne_a=[16,1,1,1],v=1)",
			"a:f16[48 1 1 1]=uniform(-150, 150) | a_view=view(a){nb=[96 96 96],ne=[16 1 1 1],offset=0}[16 1 1 1] out=unary(a_view){op=gelu_erf}[16 1 1 1]"},
		{"SWIGLU(type=f32,ne_a=[128,2,2,2],v=0,swapped=1)",
			"a:f32[128 2 2 2]=uniform(-150, 150) | out=glu(a){alpha=1.702,limit=7,op=swiglu,swapped=true}[64 2 2 2]"},
		{"GEGLU(type=f32,ne_a=[128,2,2,2],v=0,split)",
			"a:f32[128 2 2 2]=uniform(-150, 150) b:f32[128 2 2 2]=uniform(-150, 150) | out=glu(a,b){alpha=1.702,limit=7,op=geglu,swapped=false}[128 2 2 2]"},
		{"SWIGLU_OAI(type=f32,ne_a=[128,2,2,2],v=0,alpha=1.500000,limit=6.000000)",
			"a:f32[128 2 2 2]=uniform(-150, 150) b:f32[128 2 2 2]=uniform(-150, 150) | out=glu(a,b){alpha=1.5,limit=6,op=swiglu_oai,swapped=false}[128 2 2 2]"},
		{"GET_ROWS(type=q4_0,n=256,m=5,r=4,b=2,v=0)",
			"data:q4_0[256 5 2 1] rows:i32[4 2 1]=randint(0, 5) | out=get_rows(data,rows)[256 4 2 1]"},
		{"GET_ROWS(type=i32,n=16,m=5,r=3,be1=2,be2=3,v=1)",
			"data:i32[16 5 2 3] rows:i32[3 2 3]=randint(0, 5) | rows_view=view(rows){nb=[12 24 72],ne=[1 2 3 1],offset=0}[1 2 3 1] out=get_rows(data,rows_view)[16 1 2 3]"},
		{"GET_ROWS(type=f32,n=10,m=5,r=4,b=1,v=1)",
			"data:f32[10 5 1 1] rows:i32[4 1 1]=randint(0, 5) | rows_view=view(rows){nb=[16 16 16],ne=[2 1 1 1],offset=0}[2 1 1 1] out=get_rows(data,rows_view)[10 2 1 1]"},
		{"SET_ROWS(type=f16,type_idx=i64,ne=[64,5,2,1],nr23=[1,1],r=2,v=0)",
			"dst:f16[64 5 2 1] src:f32[64 2 2 1] idx:i64[2 2 1]=perm(5) | out=set_rows(dst,src,idx)[64 5 2 1]"},
		{"SET_ROWS(type_src=f16,type_dst=f32,type_idx=i32,ne=[64,5,2,1],nr23=[1,2],r=3,v=1)",
			"dst:f32[64 5 2 2] src:f16[64 3 2 2] idx:i32[3 2 1]=perm(5) | src_view=view(src){nb=[128 384 768],ne=[64 1 2 2],offset=0}[64 1 2 2] idx_view=view(idx){nb=[12 24 24],ne=[1 2 1 1],offset=0}[1 2 1 1] out=set_rows(dst,src_view,idx_view)[64 5 2 2]"},
		{"NORM(type=f32,ne=[64,5,4,3],v=1,eps=0.000000,noncontig_rows=1)",
			"a:f32[5 64 4 3] | a_perm=permute(a){axes=[1 0 2 3]}[64 5 4 3] a_perm_view=view(a_perm){nb=[4 1280 5120],ne=[32 2 2 1],offset=0}[32 2 2 1] out=norm(a_perm_view){eps=0}[32 2 2 1]"},
		{"CONT(type=f32,ne=[2,3,5,7],use_view_slice=1,permute=[0,0,0,0])",
			"a:f32[2 3 5 7] | a_slice=view(a){nb=[8 24 120],ne=[2 1 5 7],offset=8}[2 1 5 7] out=cont(a_slice)[2 1 5 7]"},
		{"CONT(type=f16,ne=[2,3,5,7],use_view_slice=0,permute=[0,2,1,3])",
			"a:f16[2 3 5 7] | a_perm=permute(a){axes=[0 2 1 3]}[2 5 3 7] out=cont(a_perm)[2 5 3 7]"},
		{"FLOOR(type=f16,ne=[7,1,5,3])", "a:f16[7 1 5 3]=uniform(-10, 10) | out=unary(a){op=floor}[7 1 5 3]"},
		{"SWIGLU(type=f32,ne_a=[5,7,1,1],v=0,swapped=0)", "a:f32[5 7 1 1]=uniform(-150, 150) | out=glu(a){alpha=1.702,limit=7,op=swiglu,swapped=false}[2 7 1 1]"},
		{"CPY(type_src=f32,type_dst=q8_0,ne=[256,4,1,1],permute_src=[0,0,0,0],permute_dst=[0,0,0,0])",
			"src:f32[256 4 1 1]=uniform(-150, 150) | out=cpy(src){type=q8_0}[256 4 1 1]"},
		{"CPY(type_src=f32,type_dst=f16,ne=[8,4,2,1],permute_src=[1,0,2,3],permute_dst=[0,0,0,0])",
			"src:f32[8 4 2 1]=uniform(-150, 150) | src_permuted=permute(src){axes=[1 0 2 3]}[4 8 2 1] out=cpy(src_permuted){type=f16}[4 8 2 1]"},
		{"CPY(type_src=f32,type_dst=f32,ne_src=[1,2,3,4],permute_src=[0,3,1,2],permute_dst=[0,2,1,3],_src_transpose=0)",
			"src:f32[1 2 3 4]=uniform(-150, 150) dst:f32[1 3 4 2]=uniform(-150, 150) | src_permuted=permute(src){axes=[0 3 1 2]}[1 3 4 2] dst_permuted=permute(dst){axes=[0 2 1 3]}[1 4 3 2] out=cpy(src_permuted,dst_permuted){type=f32}[1 4 3 2]"},
		{"CPY(type_src=f16,type_dst=f16,ne_src=[128,2,3,1],ne_dst=[128,2,3,1],permute_src=[0,0,0,0],permute_dst=[0,0,0,0],_src_transpose=0,dst_alloc=[128,4,3,1])",
			"src:f16[128 2 3 1]=uniform(-150, 150) dst_buf:f16[128 4 3 1]=uniform(-150, 150) | dst_view=view(dst_buf){nb=[256 1024 3072],ne=[128 2 3 1],offset=0}[128 2 3 1] out=cpy(src,dst_view){type=f16}[128 2 3 1]"},
		{"CPY(type_src=f32,type_dst=f32,ne_src=[3,5,7,32],ne_dst=[32,7,5,3],permute_src=[0,0,0,0],permute_dst=[0,0,0,0],_src_transpose=1)",
			"src:f32[3 5 7 32]=uniform(-150, 150) dst:f32[32 7 5 3]=uniform(-150, 150) | src_transposed=transpose(src)[5 3 7 32] out=cpy(src_transposed,dst){type=f32}[32 7 5 3]"},
		{"CONT(type=f32,ne=[10,10,10,1])",
			"a:f32[10 10 10 1] | a_t=transpose(a)[10 10 10 1] out=cont(a_t)[10 10 10 1]"},
		{"FLASH_ATTN_EXT(hsk=64,hsv=64,nh=4,nr23=[2,1],kv=128,nb=3,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_KV=f16,permute=[0,1,2,3],kv_view=0)",
			"q:f32[64 3 8 1] k:f16[64 128 4 1] v:f16[64 128 4 1] mask:f16[128 3 1 1]=kq_mask() | out=flash_attn_ext(q,k,v,mask){logit_softcap=0,max_bias=0,scale=0.125,sinks=false}[64 8 3 1]"},
		// kv_view defaults to 1: k and v are the first half (in dim 1) of a cache twice as long.
		{"FLASH_ATTN_EXT(hsk=64,hsv=64,nh=4,nr23=[2,1],kv=128,nb=3,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_K=f16,type_V=f16,permute=[0,1,2,3])",
			"q:f32[64 3 8 1] k_cache:f16[64 256 4 1] v_cache:f16[64 256 4 1] mask:f16[128 3 1 1]=kq_mask() | k_view=view(k_cache){nb=[128 32768 131072],ne=[64 128 4 1],offset=0}[64 128 4 1] v_view=view(v_cache){nb=[128 32768 131072],ne=[64 128 4 1],offset=0}[64 128 4 1] out=flash_attn_ext(q,k_view,v_view,mask){logit_softcap=0,max_bias=0,scale=0.125,sinks=false}[64 8 3 1]"},
		// permute: built as [64, nh, nb, 1] and permuted back; v the first 32 columns of k; sinks without a mask.
		{"FLASH_ATTN_EXT(hsk=64,hsv=32,nh=2,nr23=[1,1],kv=16,nb=3,mask=0,sinks=1,max_bias=0.000000,logit_softcap=0.000000,prec=def,type_K=f16,type_V=f16,permute=[0,2,1,3],kv_view=1,v_is_view_of_k=1)",
			"q:f32[64 2 3 1] k_cache:f16[64 4 16 1] sinks:f32[2]=uniform(-10, 10) | q_perm=permute(q){axes=[0 2 1 3]}[64 3 2 1] k_view=view(k_cache){nb=[128 512 8192],ne=[64 2 16 1],offset=0}[64 2 16 1] k_perm=permute(k_view){axes=[0 2 1 3]}[64 16 2 1] v_of_k=view(k_perm){nb=[512 128 8192],ne=[32 16 2 1],offset=0}[32 16 2 1] out=flash_attn_ext(q_perm,k_perm,v_of_k,sinks){logit_softcap=0,max_bias=0,scale=0.125,sinks=true}[32 2 3 1]"},
		// logit_softcap does not change the scale (ggml's CPU divides by it).
		{"FLASH_ATTN_EXT(hsk=64,hsv=64,nh=1,nr23=[1,1],kv=16,nb=1,mask=0,sinks=0,max_bias=0.000000,logit_softcap=10.000000,prec=f32,type_K=f32,type_V=q8_0,permute=[0,1,2,3],kv_view=0,v_is_view_of_k=0)",
			"q:f32[64 1 1 1] k:f32[64 16 1 1] v:q8_0[64 16 1 1] | out=flash_attn_ext(q,k,v){logit_softcap=10,max_bias=0,scale=0.125,sinks=false}[64 1 1 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseCaseString(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(c); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
			if c.Name != tt.in || len(c.Outputs) != 1 || c.Outputs[0] != "out" {
				t.Errorf("name %q outputs %v", c.Name, c.Outputs)
			}
		})
	}
}

func TestParseCaseStringErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "empty case string"},
		{"MUL_MAT(m=4", "missing ')' at the end"},
		{"MUL MAT(m=4)", `bad op name "MUL MAT"`},
		{"(m=4)", "missing op name"},
		{"WIN_PART(type=f32)", `unknown op "WIN_PART" in case string`},
		{"MUL_MAT(type_a=q8_0,zz=1)", `MUL_MAT: unknown key "zz" (want bs, k, k_v, m, n, nr, o, per, src_overlap, type_a, type_b)`},
		{"MUL_MAT(m=4,m=5)", `duplicate key "m"`},
		{"MUL_MAT(m=x)", `MUL_MAT: m: want an integer, got "x"`},
		{"MUL_MAT(m=0)", "MUL_MAT: m: want a positive size, got 0"},
		{"MUL_MAT(type_a=q7_1)", `MUL_MAT: type_a: unknown type "q7_1"`},
		{"MUL_MAT(bs=[1,1,1])", "MUL_MAT: bs: want 2 values"},
		{"MUL_MAT(bs=1)", "MUL_MAT: bs: want a list [n,n]"},
		{"MUL_MAT(bs=[[1],1])", "nested '['"},
		{"MUL_MAT(bs=[1,1)", "unbalanced '['"},
		{"MUL_MAT(o=17)", "MUL_MAT: o = 17, want 1 to 16"},
		{"MUL_MAT(type_a=f16,src_overlap=1)", "MUL_MAT: src_overlap=1 needs type_a == type_b"},
		{"MUL_MAT(per=[0,1,1,3])", "MUL_MAT: per=[0 1 1 3] is not a permutation of 0..3"},
		{"MUL_MAT(type_a=q8_0,k=48)", "tensor a: ne0 = 48 is not a multiple of the q8_0 block size 32"},
		{"MUL_MAT(m=4,,n=4)", "empty item"},
		{"RMS_NORM(eps=nan)", `RMS_NORM: eps: want a finite number, got "nan"`},
		{"RMS_NORM(v=2)", `RMS_NORM: v: want 0 or 1, got "2"`},
		{"ROPE(mode=4)", "ROPE: mode=4 is not a ggml rope mode"},
		{"ROPE(v=3)", "ROPE: v = 3, want 0, 1 (strided view) or 2 (second half of dim 0)"},
		{"ROPE(n_dims=7)", "rope: param n_dims: 7, want an even number"},
		{"FLASH_ATTN_EXT(permute=[0,2,2,3])", "FLASH_ATTN_EXT: permute=[0 2 2 3] is not a permutation of 0..3"},
		{"FLASH_ATTN_EXT(type_K=f16,type_V=f32,v_is_view_of_k=1)", "v_is_view_of_k=1 needs type_K == type_V and hsv <= hsk"},
		{"FLASH_ATTN_EXT(type_KV=f16,type_K=f16)", "type_KV cannot be mixed with type_K and type_V"},
		{"FLASH_ATTN_EXT(prec=f16)", `prec: want def or f32, got "f16"`},
		{"CPY(permute_dst=[1,1,2,3])", "CPY: permute_dst=[1 1 2 3] is not a permutation of 0..3"},
		{"CPY(ne=[4,1,1,1],ne_src=[4,1,1,1])", "CPY: ne and ne_src cannot be mixed"},
		{"SET_ROWS(ne=[16,5,1,1],r=6)", "SET_ROWS: r = 6 is more than the 5 rows of dst"},
		{"GET_ROWS(b=2,be1=2)", "GET_ROWS: b and be1 cannot be mixed"},
		{"ADD(nf=0)", "ADD: nf = 0, want 1 to 16"},
		{"ADD(ne=[4,3,2,2],src_overlap=1)", "ADD: src_overlap=1 needs ne3 >= 3"},
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

// TestHadamardInit: MUL_MAT_HADAMARD's a is test-backend-ops' Walsh-Hadamard
// matrix: ±1/sqrt(k), negative where row & column has an odd bit count.
func TestHadamardInit(t *testing.T) {
	c, err := ParseCaseString("MUL_MAT_HADAMARD(type_a=f32,type_b=f32,m=4,n=1,k=4)")
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := Materialize(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{
		0.5, 0.5, 0.5, 0.5,
		0.5, -0.5, 0.5, -0.5,
		0.5, 0.5, -0.5, -0.5,
		0.5, -0.5, -0.5, 0.5,
	}
	got := leaves["a"].ToF32()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("a = %v, want %v", got, want)
		}
	}
}

// TestCaseStringsMaterialize: every builder's leaves can be filled.
func TestCaseStringsMaterialize(t *testing.T) {
	for _, s := range []string{
		"GET_ROWS(type=q8_0,n=64,m=5,r=4,b=2,v=0)",
		"SET_ROWS(type=f32,type_idx=i32,ne=[16,9,2,1],r=9)",
		"ROPE(type=f32,ne_a=[64,4,3,1],n_dims=32,mode=40,n_ctx=100,ff=1)",
	} {
		c, err := ParseCaseString(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if _, err := Materialize(c); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}
