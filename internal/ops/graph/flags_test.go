package graph

import (
	"errors"
	"strings"
	"testing"
)

func TestFromFlags(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		srcs   []string
		params []string
		want   string
	}{
		{"mul_mat", "mul_mat", []string{"w=q8_0:4096x4096", "x=f32:4096x7"}, nil,
			"w:q8_0[4096 4096] x:f32[4096 7] | out=mul_mat(w,x)[4096 7 1 1]"},
		{"params and init", "rms_norm", []string{"x=f32:64X2:normal(0, 2)"}, []string{"eps=1e-5"},
			"x:f32[64 2]=normal(0, 2) | out=rms_norm(x){eps=1e-05}[64 2 1 1]"},
		{"unary shorthand", "SILU", []string{"x=f16:32"}, nil,
			"x:f16[32] | out=unary(x){op=silu}[32 1 1 1]"},
		{"glu shorthand", "swiglu", []string{"x=f32:32x2"}, []string{"swapped=true"},
			"x:f32[32 2] | out=glu(x){alpha=1.702,limit=7,op=swiglu,swapped=true}[16 2 1 1]"},
		{"list param", "permute", []string{"x=f32:2x3x4"}, []string{"axes=1,0,2,3"},
			"x:f32[2 3 4] | out=permute(x){axes=[1 0 2 3]}[3 2 4 1]"},
		{"bracket list and enum", "rope", []string{"x=f32:64x4x3", "p=i32:3:arange(0)"}, []string{"n_dims=64", "mode=neox", "sections=[0,0,0,0]"},
			"x:f32[64 4 3] p:i32[3]=arange(0) | out=rope(x,p){attn_factor=1,beta_fast=32,beta_slow=1,ext_factor=0,freq_base=10000,freq_scale=1,mode=neox,n_ctx_orig=0,n_dims=64,n_offs=0,sections=[0 0 0 0]}[64 4 3 1]"},
		{"npy init", "cont", []string{"x=f32:3x2:data/x.npy"}, nil,
			"x:f32[3 2]={npy: data/x.npy} | out=cont(x)[3 2 1 1]"},
		{"type param", "cpy", []string{"x=f32:64"}, []string{"type=f16"},
			"x:f32[64] | out=cpy(x){type=f16}[64 1 1 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromFlags(tt.op, tt.srcs, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(c); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestFromFlagsErrors(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		srcs   []string
		params []string
		want   string
	}{
		{"unknown op", "matmul", nil, nil, `run-op matmul: unknown op "matmul"`},
		{"no equals", "cont", []string{"f32:4"}, nil, "--src f32:4: want NAME=TYPE:NE0xNE1"},
		{"no shape", "cont", []string{"x=f32"}, nil, "--src x=f32: want NAME=TYPE:NE0xNE1"},
		{"bad type", "cont", []string{"x=f8:4"}, nil, `--src x=f8:4: unknown type "f8"`},
		{"bad shape", "cont", []string{"x=f32:4xa"}, nil, `--src x=f32:4xa: bad shape "4xa"`},
		{"zero dim", "cont", []string{"x=f32:4x0"}, nil, "--src x=f32:4x0: ne1 = 0, want a positive size"},
		{"block size", "cont", []string{"x=q4_0:48"}, nil, "ne0 = 48 is not a multiple of the q4_0 block size 32"},
		{"bad init", "cont", []string{"x=f32:4:uniform(1)"}, nil, "uniform takes 2 arguments"},
		{"bad name", "cont", []string{"x/y=f32:4"}, nil, `name "x/y"`},
		{"too few sources", "mul_mat", []string{"x=f32:4"}, nil, "run-op mul_mat: node out: mul_mat takes 2 sources [a, b], got 1"},
		{"duplicate source name", "add", []string{"x=f32:4", "x=f32:4"}, nil, `duplicate name "x"`},
		{"bad param", "rms_norm", []string{"x=f32:4"}, []string{"eps"}, "--param eps: want KEY=VALUE"},
		{"unknown param", "rms_norm", []string{"x=f32:4"}, []string{"epsilon=1"}, "rms_norm: param epsilon: unknown parameter"},
		{"param twice", "rms_norm", []string{"x=f32:4"}, []string{"eps=1", "eps=2"}, "--param eps=2: eps given twice"},
		{"param kind", "rms_norm", []string{"x=f32:4"}, []string{"eps=small"}, "param eps: got small (string), want a number"},
		{"shape", "add", []string{"a=f32:4", "b=f32:3"}, nil, "node out: add:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromFlags(tt.op, tt.srcs, tt.params)
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
