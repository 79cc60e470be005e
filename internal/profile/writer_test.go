package profile

import (
	"bytes"
	"testing"
)

// TestWriterRoundTrip decodes the sample, writes it back and decodes the
// result: the events must be the same (extra order aside).
func TestWriterRoundTrip(t *testing.T) {
	for _, name := range []string{"sample.json", "two_devices.json"} {
		t.Run(name, func(t *testing.T) {
			want, _, _, err := decodeAll(readFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			w := NewWriter(&buf)
			for i := range want {
				if err := w.Write(&want[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, st, warn, err := decodeAll(buf.Bytes())
			if err != nil || st.Truncated || warn.Len() != 0 {
				t.Fatalf("%v %+v %v", err, st, warn.List())
			}
			if len(got) != len(want) {
				t.Fatalf("%d events, want %d", len(got), len(want))
			}
			for i := range got {
				got[i].Offset, want[i].Offset = 0, 0
				if !eventsEqual(got[i], want[i]) {
					t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
			if !bytes.HasSuffix(buf.Bytes(), []byte("\n    }\n}")) {
				t.Error("missing the runtime's ending")
			}
		})
	}
}

// TestWriterFormat pins the byte format against the sample's first event.
func TestWriterFormat(t *testing.T) {
	sample := readFixture(t, "sample.json")
	evs, _, _, _ := decodeAll(sample)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(&evs[0])
	w.Write(&evs[1])
	w.Close()
	end := bytes.Index(sample, []byte(`    "value2"`))
	want := append(append([]byte{}, sample[:end-2]...), "\n}"...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("got\n%s\nwant\n%s", buf.Bytes(), want)
	}
}

// TestGenerateFixtures regenerates the generated fixtures with -update and
// otherwise checks that generation is deterministic.
func TestGenerateFixtures(t *testing.T) {
	fixtures := []struct {
		name string
		opts GenOptions
	}{
		{"wrapped_ids", GenOptions{Ops: 40, Seed: 7, FirstID: 65520}},
		{"two_devices", GenOptions{Ops: 40, Seed: 8, Devices: 2, Kernels: 3}},
	}
	for _, fx := range fixtures {
		var buf, km bytes.Buffer
		res, err := Generate(&buf, fx.opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeKernelMap(&km, res); err != nil {
			t.Fatal(err)
		}
		golden(t, fx.name+".json", buf.Bytes())
		golden(t, fx.name+"_kernel_id.json", km.Bytes())
	}
}
