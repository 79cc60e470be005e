package abi

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// unhex decodes hex rows (16 bytes each, spaces ignored). Every row is
// written out so that the golden bytes can be read against the offsets of
// reference/ggml-et-backend.md §2.1.
func unhex(t *testing.T, lines ...string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(strings.Join(lines, ""), " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const zeroRow = "00000000 00000000 00000000 00000000"

func zeroRows(n int) []string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = zeroRow
	}
	return rows
}

func TestEncodeTensorGolden(t *testing.T) {
	tests := []struct {
		name string
		in   TensorDesc
		want []string // 21 rows of 16 bytes
	}{
		{
			name: "q8_0 weight",
			in: TensorDesc{
				Type: ops.Q8_0,
				Ne:   [4]int64{4096, 4096, 1, 1},
				Nb:   [4]uint64{34, 4352, 17825792, 17825792},
				Data: 0x8005801000,
				Name: "blk.0.attn_q.weight",
			},
			want: append(append([]string{
				"08000000 00000000 00000000 00000000", // 0: type=8 (GGML_TYPE_Q8_0), pad, buffer=NULL
				"00100000 00000000 00100000 00000000", // 16: ne0=4096, ne1=4096
				"01000000 00000000 01000000 00000000", // 32: ne2=1, ne3=1
				"22000000 00000000 00110000 00000000", // 48: nb0=34, nb1=4352
				"00001001 00000000 00001001 00000000", // 64: nb2=nb3=17825792 (0x1100000)
			}, zeroRows(10)...), // 80..239: op=NONE, op_params, flags, src[], view_src
				"00000000 00000000 00108005 80000000", // 240: view_offs=0, data=0x8005801000
				"626c6b2e 302e6174 746e5f71 2e776569", // 256: "blk.0.attn_q.wei"
				"67687400 00000000 00000000 00000000", // 272: "ght\0"
				zeroRow, zeroRow, zeroRow),            // 288..335: rest of name, extra, padding
		},
		{
			name: "el_map dst carries op and op_params",
			in: TensorDesc{
				Type:     ops.F32,
				Ne:       [4]int64{64, 5, 1, 1},
				Nb:       [4]uint64{4, 256, 1280, 1280},
				Op:       7, // GGML_OP_MUL
				OpParams: [16]int32{0: -1, 15: 0x01020304},
				Data:     0x8000000040,
			},
			want: append(append([]string{
				zeroRow,                               // 0: type=0 (F32)
				"40000000 00000000 05000000 00000000", // 16: ne0=64, ne1=5
				"01000000 00000000 01000000 00000000", // 32
				"04000000 00000000 00010000 00000000", // 48: nb0=4, nb1=256
				"00050000 00000000 00050000 00000000", // 64: nb2=nb3=1280
				"07000000 ffffffff 00000000 00000000", // 80: op=7, op_params[0]=-1
				zeroRow, zeroRow, zeroRow,             // 96..143
				"04030201 00000000 00000000 00000000", // 144: op_params[15] (84+60), flags=0, src[0]=NULL
			}, zeroRows(5)...), // 160..239
				"00000000 00000000 40000000 80000000", // 240: data=0x8000000040
				zeroRow, zeroRow, zeroRow, zeroRow, zeroRow),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.want...)
			if len(want) != TensorSize {
				t.Fatalf("golden is %d bytes, want %d", len(want), TensorSize)
			}
			got := make([]byte, TensorSize)
			for i := range got {
				got[i] = 0xAA // encoding must overwrite every byte
			}
			if err := EncodeTensor(got, tt.in); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoded bytes differ\n got:\n%s\nwant:\n%s", hex.Dump(got), hex.Dump(want))
			}
			back, err := DecodeTensor(want)
			if err != nil {
				t.Fatal(err)
			}
			if back != tt.in {
				t.Errorf("decode = %+v, want %+v", back, tt.in)
			}
		})
	}
}

func TestTensorNameTruncated(t *testing.T) {
	long := strings.Repeat("x", 100)
	b := make([]byte, TensorSize)
	if err := EncodeTensor(b, TensorDesc{Type: ops.F32, Data: 64, Name: long}); err != nil {
		t.Fatal(err)
	}
	if b[offName+MaxName-1] != 0 {
		t.Error("name is not NUL-terminated")
	}
	got, err := DecodeTensor(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != long[:MaxName-1] {
		t.Errorf("name = %q (%d bytes), want %d bytes", got.Name, len(got.Name), MaxName-1)
	}
}

func TestDecodeTensorZeroBlockIsAbsent(t *testing.T) {
	got, err := DecodeTensor(make([]byte, TensorSize))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Absent() || got != (TensorDesc{}) {
		t.Errorf("zero block decoded to %+v", got)
	}
}

func TestDecodeTensorIgnoresHostPointers(t *testing.T) {
	b := make([]byte, TensorSize)
	in := TensorDesc{Type: ops.F16, Ne: [4]int64{32, 1, 1, 1}, Nb: [4]uint64{2, 64, 64, 64}, Data: 0x1000}
	if err := EncodeTensor(b, in); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{8, 148, 152, 232, 240, 320, 328} { // buffer, flags, src, view_src, view_offs, extra, padding
		b[off] = 0x7f
	}
	got, err := DecodeTensor(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != in {
		t.Errorf("decode = %+v, want %+v", got, in)
	}
}

func TestTensorErrors(t *testing.T) {
	if err := EncodeTensor(make([]byte, TensorSize-1), TensorDesc{}); err == nil {
		t.Error("EncodeTensor into a short buffer: no error")
	}
	if err := EncodeTensor(make([]byte, TensorSize), TensorDesc{Type: ops.Type(200)}); err == nil {
		t.Error("EncodeTensor of an invalid type: no error")
	}
	tests := []struct {
		name string
		b    func() []byte
		want string
	}{
		{"short", func() []byte { return make([]byte, 100) }, "100 bytes, want 336"},
		{"unknown type", func() []byte {
			b := make([]byte, TensorSize)
			b[0] = 4 // GGML_TYPE_Q4_2, removed from ggml
			b[offData] = 1
			return b
		}, "ggml type 4 is not supported"},
		{"negative ne", func() []byte {
			b := make([]byte, TensorSize)
			b[offData] = 1
			for i := 0; i < 8; i++ {
				b[offNe+8+i] = 0xff
			}
			return b
		}, "ne[1] = -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTensor(tt.b())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDescFromTensor(t *testing.T) {
	x := ops.New(ops.Q4_0, 64, 3)
	x.Name = "w"
	d := DescFromTensor(x, 0x8000001000, 0, [16]int32{})
	if d.Ne != x.Ne || d.Nb != x.Nb || d.Type != ops.Q4_0 || d.Data != 0x8000001000 || d.Name != "w" {
		t.Errorf("DescFromTensor = %+v", d)
	}
	if d.Nb[0] != 18 || d.Nb[1] != 36 {
		t.Errorf("q4_0 nb = %v, want block-sized nb0=18, nb1=36", d.Nb)
	}
}
