package abi

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// sizes23 is reference/ggml-et-backend.md §2.3 (and §3 for the uberkernel
// records), copied by hand.
var sizes23 = map[string]int{
	"binary": 1008, "elmap": 1008, "im2col": 1008, "get_rows": 1008, "set_rows": 1008, "solve_tri": 1008, "ssm_conv": 1008,
	"mm_q8": 1344, "mul_mat_id": 1344,
	"rope":     1408,
	"rms_norm": 680, "norm": 680, "l2_norm": 680,
	"group_norm": 680,
	"glu":        1024,
	"softmax":    1352,
	"flash_attn": 1688,
	"cont":       672, "repeat": 672, "diag": 672, "sqr": 672, "sum_rows": 672, "mean": 672, "cumsum": 672,
	"unary": 680, "clamp": 680, "scale": 680, "tri": 680,
	"concat": 1016, "rms_norm_mul": 1016,
	"pad":             704,
	"set":             688,
	"fill":            344,
	"ssm_scan":        2696,
	"gated_delta_net": 2400,
	"rwkv6":           80,
	"rwkv7":           88,
	"memops":          24,
	"uberkernel":      24,
	"uberkernel_inst": 12,
}

func TestLayoutSizes(t *testing.T) {
	for name, want := range sizes23 {
		t.Run(name, func(t *testing.T) {
			l, ok := LookupLayout(name)
			if !ok {
				t.Fatalf("no layout %s", name)
			}
			if l.Size != want {
				t.Errorf("Size = %d, want %d (§2.3)", l.Size, want)
			}
			if err := l.check(); err != nil {
				t.Error(err)
			}
			// The last field must end inside the struct's final alignment unit:
			// C adds at most align-1 bytes of tail padding.
			last := l.Fields[len(l.Fields)-1]
			align := 8
			if name == "uberkernel_inst" {
				align = 4
			}
			if pad := l.Size - last.End(); pad < 0 || pad >= align {
				t.Errorf("last field %s ends at %d, size %d: %d bytes of tail padding", last.Name, last.End(), l.Size, pad)
			}
			if ms, ok := Default().Size(name); !ok || ms != want {
				t.Errorf("manifest size = %d, %v; want %d", ms, ok, want)
			}
		})
	}
	for _, l := range Layouts() {
		if _, ok := sizes23[l.Name]; !ok {
			t.Errorf("layout %s is not in §2.3", l.Name)
		}
	}
}

// TestLayoutOffsets pins scalar offsets against the "name@off" notation of
// §1.2 (and the derived ones listed in layouts.go).
func TestLayoutOffsets(t *testing.T) {
	tests := []struct {
		layout, field string
		off           int
		kind          Kind
	}{
		{"elmap", "dst", 672, KindTensor},
		{"mm_q8", "bias", 1008, KindTensor},
		{"unary", "unary_op", 672, KindI32},
		{"clamp", "min", 672, KindF32},
		{"clamp", "max", 676, KindF32},
		{"rope", "src2", 672, KindTensor},
		{"rope", "n_past", 1344, KindI32},
		{"rope", "n_dims", 1348, KindI32},
		{"rope", "mode", 1352, KindI32},
		{"rope", "n_ctx_orig", 1360, KindI32},
		{"rope", "freq_base", 1364, KindF32},
		{"rope", "beta_slow", 1384, KindF32},
		{"rope", "sections[0]", 1388, KindI32},
		{"rope", "sections[3]", 1400, KindI32},
		{"rms_norm", "eps", 672, KindF32},
		{"group_norm", "n_groups", 672, KindI32},
		{"group_norm", "eps", 676, KindF32},
		{"scale", "scale", 672, KindF32},
		{"scale", "bias", 676, KindF32},
		{"glu", "src1", 336, KindTensor},
		{"glu", "glu_op_type", 1008, KindI32},
		{"glu", "swapped", 1012, KindI32},
		{"glu", "alpha", 1016, KindF32},
		{"glu", "limit", 1020, KindF32},
		{"softmax", "src2", 672, KindTensor},
		{"softmax", "scale", 1344, KindF32},
		{"softmax", "max_bias", 1348, KindF32},
		{"flash_attn", "mask", 1008, KindTensor},
		{"flash_attn", "dst", 1344, KindTensor},
		{"flash_attn", "scale", 1680, KindF32},
		{"flash_attn", "has_mask", 1684, KindI32},
		{"tri", "tri_type", 672, KindI32},
		{"concat", "dim", 1008, KindI32},
		{"rms_norm_mul", "eps", 1008, KindF32},
		{"pad", "lp[0]", 672, KindI32},
		{"pad", "rp[0]", 688, KindI32},
		{"pad", "rp[3]", 700, KindI32},
		{"set", "nb1", 672, KindI32},
		{"set", "offset", 684, KindI32},
		{"fill", "c", 336, KindF32},
		{"ssm_scan", "K", 2688, KindI32},
		{"gated_delta_net", "S_v", 2352, KindI32},
		{"gated_delta_net", "kda", 2384, KindI32},
		{"gated_delta_net", "K", 2388, KindI32},
		{"gated_delta_net", "scale", 2392, KindF32},
		{"rwkv6", "dst", 48, KindPtr},
		{"rwkv6", "C", 56, KindI32},
		{"rwkv6", "n_seqs", 72, KindI32},
		{"rwkv7", "dst", 56, KindPtr},
		{"rwkv7", "C", 64, KindI32},
		{"rwkv7", "n_seqs", 80, KindI32},
		{"memops", "dst_ptr", 8, KindU64},
		{"memops", "size", 16, KindU64},
		{"uberkernel", "insts", 8, KindU64},
		{"uberkernel", "params_blob", 16, KindU64},
		{"uberkernel_inst", "flags", 2, KindU16},
		{"uberkernel_inst", "params_offset", 4, KindU32},
		{"uberkernel_inst", "params_size", 8, KindU32},
	}
	for _, tt := range tests {
		t.Run(tt.layout+"."+tt.field, func(t *testing.T) {
			l, ok := LookupLayout(tt.layout)
			if !ok {
				t.Fatalf("no layout %s", tt.layout)
			}
			f, ok := l.Field(tt.field)
			if !ok {
				t.Fatalf("no field %s", tt.field)
			}
			if f.Offset != tt.off || f.Kind != tt.kind {
				t.Errorf("%s at %d, want %s at %d", f.Kind, f.Offset, tt.kind, tt.off)
			}
		})
	}
}

// fullValues gives every field of l a distinct non-zero value.
func fullValues(l *Layout) Values {
	var v Values
	for i, f := range l.Fields {
		n := int64(i + 1)
		switch f.Kind {
		case KindTensor:
			v.SetTensor(f.Name, TensorDesc{
				Type:     ops.Types[i%len(ops.Types)],
				Ne:       [4]int64{32 * n, n, 2, 1},
				Nb:       [4]uint64{4, uint64(128 * n), uint64(256 * n), uint64(512 * n)},
				Op:       int32(i),
				OpParams: [16]int32{int32(-i), 3: 7},
				Data:     0x8000000000 + uint64(i)*0x10000,
				Name:     fmt.Sprintf("%s.%s", l.Name, f.Name),
			})
		case KindF32:
			v.SetFloat(f.Name, float32(n)*0.5-3)
		case KindBool:
			v.SetInt(f.Name, 1)
		case KindI32, KindI64:
			v.SetInt(f.Name, -n*1000)
		case KindU16, KindU32:
			v.SetUint(f.Name, uint64(n*100))
		case KindU64, KindPtr:
			v.SetUint(f.Name, 0x8000000000+uint64(n))
		}
	}
	return v
}

func TestLayoutRoundTrip(t *testing.T) {
	for _, l := range Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			v := fullValues(l)
			b, err := l.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != l.Size {
				t.Fatalf("encoded %d bytes, want %d", len(b), l.Size)
			}
			got, err := l.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, v) {
				t.Errorf("round trip differs\n got %+v\nwant %+v", got, v)
			}
			// Each scalar sits at its offset, little-endian.
			for _, f := range l.Fields {
				fb := b[f.Offset:f.End()]
				switch f.Kind {
				case KindF32:
					if x := math.Float32frombits(binary.LittleEndian.Uint32(fb)); x != v.Float(f.Name) {
						t.Errorf("%s: bytes hold %v, want %v", f.Name, x, v.Float(f.Name))
					}
				case KindI32:
					if x := int32(binary.LittleEndian.Uint32(fb)); int64(x) != v.Int(f.Name) {
						t.Errorf("%s: bytes hold %v, want %v", f.Name, x, v.Int(f.Name))
					}
				case KindTensor:
					want := make([]byte, TensorSize)
					tv, _ := v.Tensor(f.Name)
					if err := EncodeTensor(want, tv); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(fb, want) {
						t.Errorf("%s: tensor block differs", f.Name)
					}
				}
			}
		})
	}
}

func TestOptionalTensorsAreZeroBlocks(t *testing.T) {
	for _, l := range Layouts() {
		for _, f := range l.Fields {
			if !f.Optional {
				continue
			}
			t.Run(l.Name+"."+f.Name, func(t *testing.T) {
				v := fullValues(l)
				delete(v.Tensors, f.Name)
				b, err := l.Encode(v)
				if err != nil {
					t.Fatal(err)
				}
				if !isZero(b[f.Offset:f.End()]) {
					t.Error("absent optional tensor is not a zero block")
				}
				got, err := l.Decode(b)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := got.Tensor(f.Name); ok {
					t.Error("decoded an absent tensor")
				}
			})
		}
	}
}

// TestEncodeGolden pins whole params structs to hand-written bytes.
func TestEncodeGolden(t *testing.T) {
	x := TensorDesc{Type: ops.F32, Ne: [4]int64{16, 1, 1, 1}, Nb: [4]uint64{4, 64, 64, 64}, Data: 0x8000000000}
	t.Run("rms_norm eps", func(t *testing.T) {
		l, _ := LookupLayout("rms_norm")
		var v Values
		v.SetTensor("src0", x)
		v.SetTensor("dst", x)
		v.SetFloat("eps", 1e-5)
		b, err := l.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		// 1e-5f = 0x3727c5ac; bytes 676..679 are tail padding.
		if got, want := hex.EncodeToString(b[672:]), "acc5273700000000"; got != want {
			t.Errorf("bytes 672.. = %s, want %s", got, want)
		}
	})
	t.Run("memops memset", func(t *testing.T) {
		l, _ := LookupLayout("memops")
		var v Values
		v.SetUint("op_type", 0)
		v.SetUint("value", 0xab)
		v.SetUint("dst_ptr", 0x8005801000)
		v.SetUint("size", 4096)
		b, err := l.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		want := "00000000" + "ab000000" + "0010800580000000" + "0010000000000000"
		if got := hex.EncodeToString(b); got != want {
			t.Errorf("memops = %s, want %s", got, want)
		}
	})
	t.Run("rope settings", func(t *testing.T) {
		l, _ := LookupLayout("rope")
		var v Values
		v.SetTensor("src0", x)
		v.SetTensor("src1", TensorDesc{Type: ops.I32, Ne: [4]int64{7, 1, 1, 1}, Nb: [4]uint64{4, 28, 28, 28}, Data: 0x8000000100})
		v.SetTensor("dst", x)
		v.SetInt("n_dims", 128)
		v.SetInt("mode", 2)
		v.SetFloat("freq_base", 500000)
		v.SetFloat("freq_scale", 1)
		v.SetInt("sections[3]", -1)
		b, err := l.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		want := "00000000" + "80000000" + "02000000" + "00000000" + "00000000" + // n_past n_dims mode n_ctx n_ctx_orig
			"0024f448" + "0000803f" + strings.Repeat("00000000", 4) + // freq_base=500000 (0x48f42400), freq_scale=1, ext_factor..beta_slow
			strings.Repeat("00000000", 3) + "ffffffff" + "00000000" // sections[0..3], tail padding
		if got := hex.EncodeToString(b[1344:]); got != want {
			t.Errorf("rope settings = %s\nwant %s", got, want)
		}
		if !isZero(b[672:1008]) {
			t.Error("absent freq factors (src2) is not a zero block")
		}
	})
}

func TestEncodeErrors(t *testing.T) {
	l, _ := LookupLayout("glu")
	x := TensorDesc{Type: ops.F32, Data: 0x1000}
	tests := []struct {
		name string
		v    func() Values
		want string
	}{
		{"unknown field", func() Values {
			v := fullValues(l)
			v.SetFloat("alpah", 1)
			return v
		}, "field alpah: no such field"},
		{"wrong map", func() Values {
			v := fullValues(l)
			delete(v.Floats, "alpha")
			v.SetInt("alpha", 1)
			return v
		}, "field alpha: is f32, set it in Floats, not Ints"},
		{"tensor in scalar map", func() Values {
			v := fullValues(l)
			v.SetUint("dst", 1)
			return v
		}, "field dst: is tensor"},
		{"required tensor missing", func() Values {
			v := fullValues(l)
			delete(v.Tensors, "dst")
			return v
		}, "field dst: required tensor is missing"},
		{"required tensor without address", func() Values {
			v := fullValues(l)
			v.SetTensor("src0", TensorDesc{Type: ops.F32})
			return v
		}, "field src0: required tensor has no device address"},
		{"int32 overflow", func() Values {
			v := fullValues(l)
			v.SetInt("swapped", 1<<31)
			return v
		}, "field swapped: value 2147483648 out of int32 range"},
		{"bad tensor type", func() Values {
			v := fullValues(l)
			x.Type = ops.Type(99)
			v.SetTensor("src1", x)
			return v
		}, "field src1: type type(99) has no ggml value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Encode(tt.v())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Errorf("err is %T, want *ValueError", err)
			}
			if _, ok := err.(interface{ InputError() }); !ok {
				t.Error("err has no InputError method")
			}
		})
	}
	ul, _ := LookupLayout("uberkernel_inst")
	var v Values
	v.SetUint("kernel_id", 70000)
	if _, err := ul.Encode(v); err == nil || !strings.Contains(err.Error(), "out of uint16 range") {
		t.Errorf("u16 overflow: err = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	l, _ := LookupLayout("softmax")
	good, err := l.Encode(fullValues(l))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		b    func() []byte
		want string
	}{
		{"short", func() []byte { return good[:l.Size-1] }, "got 1351 bytes, want 1352"},
		{"long", func() []byte { return append(append([]byte(nil), good...), 0) }, "got 1353 bytes, want 1352"},
		{"required tensor absent", func() []byte {
			b := append([]byte(nil), good...)
			clear(b[0:TensorSize])
			return b
		}, "tensor src0 at offset 0: required tensor is absent"},
		{"bad tensor", func() []byte {
			b := append([]byte(nil), good...)
			b[1008] = 99 // dst type
			return b
		}, "tensor dst at offset 1008: ggml type 99 is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Decode(tt.b())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for k := KindTensor; k <= KindU64; k++ {
		if k.String() == "" || strings.HasPrefix(k.String(), "kind(") || k.Size() == 0 {
			t.Errorf("kind %d: %q size %d", k, k.String(), k.Size())
		}
	}
	if Kind(0).Size() != 0 || Kind(0).String() != "kind(0)" {
		t.Error("invalid kind not reported")
	}
}
