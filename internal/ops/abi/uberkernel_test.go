package abi

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func TestBatch(t *testing.T) {
	rms, _ := LookupLayout("rms_norm")
	glu, _ := LookupLayout("glu")
	p1, err := rms.Encode(fullValues(rms))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := glu.Encode(fullValues(glu))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBatch(nil)
	if _, err := b.Add("rms_norm_f32", p1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add("glu_f32", p2); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add("unary_f32", p1); err == nil || !strings.Contains(err.Error(), "cannot be batched") {
		t.Errorf("unary_f32: err = %v", err)
	}
	// 680 rounds up to 704 (11*64); 704+1024 = 1728.
	want := []Inst{{KernelID: 24, ParamsOffset: 0, ParamsSize: 680}, {KernelID: 10, ParamsOffset: 704, ParamsSize: 1024}}
	if got := b.Insts(); !reflect.DeepEqual(got, want) {
		t.Errorf("insts = %+v, want %+v", got, want)
	}
	blob := b.Blob()
	if len(blob) != 1728 || !bytes.Equal(blob[:680], p1) || !isZero(blob[680:704]) || !bytes.Equal(blob[704:], p2) {
		t.Errorf("blob layout wrong (len %d)", len(blob))
	}
	// Hand-written records: u16 id, u16 flags, u32 offset, u32 size.
	wantInsts := "1800" + "0000" + "00000000" + "a8020000" + "0a00" + "0000" + "c0020000" + "00040000"
	if got := hex.EncodeToString(b.InstBytes()); got != wantInsts {
		t.Errorf("inst bytes = %s, want %s", got, wantInsts)
	}
	insts, err := DecodeInsts(b.InstBytes(), 2, InstSize)
	if err != nil || !reflect.DeepEqual(insts, want) {
		t.Errorf("DecodeInsts = %+v, %v", insts, err)
	}
	for i, in := range insts {
		k, p, err := Default().Params(in, blob)
		if err != nil {
			t.Fatal(err)
		}
		if k != []string{"rms_norm_f32", "glu_f32"}[i] || !bytes.Equal(p, [][]byte{p1, p2}[i]) {
			t.Errorf("inst %d: kernel %s, %d params bytes", i, k, len(p))
		}
	}
	// The launch args agree with the generic layout.
	l := b.Launch(0x8000100000, 0x8000200000)
	lb := EncodeLaunch(l)
	ul, _ := LookupLayout("uberkernel")
	var v Values
	v.SetUint("num_insts", 2)
	v.SetUint("inst_stride", 12)
	v.SetUint("insts", 0x8000100000)
	v.SetUint("params_blob", 0x8000200000)
	gb, err := ul.Encode(v)
	if err != nil || !bytes.Equal(lb, gb) {
		t.Errorf("EncodeLaunch = %x, layout = %x (%v)", lb, gb, err)
	}
	if back, err := DecodeLaunch(lb); err != nil || back != l {
		t.Errorf("DecodeLaunch = %+v, %v", back, err)
	}
	// Records agree with the generic layout too.
	il, _ := LookupLayout("uberkernel_inst")
	iv, err := il.Decode(b.InstBytes()[InstSize:])
	if err != nil || iv.Uint("kernel_id") != 10 || iv.Uint("params_offset") != 704 || iv.Uint("params_size") != 1024 {
		t.Errorf("inst via layout = %+v, %v", iv, err)
	}
	b.Reset()
	if b.Len() != 0 || len(b.Blob()) != 0 {
		t.Error("Reset left data")
	}
}

func TestUberkernelDecodeErrors(t *testing.T) {
	m := Default()
	blob := make([]byte, 2048)
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"stride", func() error { _, err := DecodeInsts(make([]byte, 24), 2, 8); return err }, "inst_stride 8"},
		{"short array", func() error { _, err := DecodeInsts(make([]byte, 23), 2, 12); return err }, "need 24"},
		{"huge count", func() error { _, err := DecodeInsts(nil, 1<<31, 1<<31); return err }, "need"},
		{"unknown id", func() error { _, _, err := m.Params(Inst{KernelID: 99}, blob); return err }, "kernel id 99 is unknown"},
		{"id 0", func() error { _, _, err := m.Params(Inst{}, blob); return err }, "kernel id 0 is unknown"},
		{"past blob", func() error {
			_, _, err := m.Params(Inst{KernelID: 24, ParamsOffset: 1536, ParamsSize: 680}, blob)
			return err
		}, "past the end"},
		{"misaligned", func() error {
			_, _, err := m.Params(Inst{KernelID: 24, ParamsOffset: 8, ParamsSize: 680}, blob)
			return err
		}, "not 64-byte aligned"},
		{"wrong size", func() error {
			_, _, err := m.Params(Inst{KernelID: 24, ParamsOffset: 0, ParamsSize: 672}, blob)
			return err
		}, "params size 672, want 680"},
		{"overflow", func() error {
			_, _, err := m.Params(Inst{KernelID: 24, ParamsOffset: 0xffffffc0, ParamsSize: 0xffffffff}, blob)
			return err
		}, "past the end"},
		{"launch size", func() error { _, err := DecodeLaunch(make([]byte, 16)); return err }, "16 bytes, want 24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
