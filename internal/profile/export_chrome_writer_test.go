package profile

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppendMicros(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, "0.000"},
		{1, "0.001"},
		{999, "0.999"},
		{1000, "1.000"},
		{1234567, "1234.567"},
		{-1500, "-1.500"},
		{-1 << 63, "-9223372036854775.808"},
		{1<<63 - 1, "9223372036854775.807"},
	}
	for _, tt := range tests {
		if got := string(appendMicros(nil, tt.ns)); got != tt.want {
			t.Errorf("appendMicros(%d) = %s, want %s", tt.ns, got, tt.want)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct {
		in, want string // want: the decoded value
	}{
		{"plain", "plain"},
		{`q"uo\te`, `q"uo\te`},
		{"ctl\x00\x01\n\t\x7f", "ctl\x00\x01\n\t\x7f"},
		{"héllo ✓", "héllo ✓"},
		{"bad\xffutf8", "bad\ufffdutf8"},
		{"sep\u2028x", "sep\u2028x"},
	}
	for _, tt := range tests {
		b := appendJSONString(nil, tt.in)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("appendJSONString(%q) = %s: not JSON: %v", tt.in, b, err)
			continue
		}
		if got != tt.want {
			t.Errorf("appendJSONString(%q) decodes to %q, want %q", tt.in, got, tt.want)
		}
	}
}

// maxFuzzString bounds FuzzAppendJSONString's inputs. Every branch of
// appendJSONString is reached by a few bytes, while the fuzzer's
// minimiser spends its whole minute on each new long input (its cost
// grows with the square of the length), starving the fuzzing itself;
// long strings are TestAppendJSONString's.
const maxFuzzString = 64

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff\xfe", "\u2028", "kernel#1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzString {
			return // see maxFuzzString
		}
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("%q round-trips to %q", s, got)
		}
	})
}

func TestChromeWriter(t *testing.T) {
	var buf bytes.Buffer
	cw := newChromeWriter(&buf)
	cw.begin([]chromeArg{{"source", "test"}})
	cw.event(&chromeEvent{Name: "process_name", Ph: "M", PID: 1, Args: []chromeArg{{"name", "host"}}})
	cw.event(&chromeEvent{Name: "k", Cat: "device", Ph: "X", PID: 100, TID: 1, TSNS: 1500, DurNS: 2001,
		BindID: 7, FlowIn: true, FlowOut: true,
		Args: []chromeArg{{"cycles", uint64(1<<64 - 1)}, {"n", 3}, {"i64", int64(-2)}, {"f", 0.5}, {"b", true}, {"u32", uint32(4)}, {"u16", uint16(5)}}})
	cw.event(&chromeEvent{Name: "i", Ph: "i", Scope: "t", PID: 1, TID: 2, TSNS: 3})
	if err := cw.end(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DisplayTimeUnit string            `json:"displayTimeUnit"`
		OtherData       map[string]string `json:"otherData"`
		TraceEvents     []map[string]json.RawMessage
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.Bytes())
	}
	if doc.DisplayTimeUnit != "ns" || doc.OtherData["source"] != "test" || len(doc.TraceEvents) != 3 {
		t.Fatalf("bad document: %+v", doc)
	}
	x := doc.TraceEvents[1]
	for k, want := range map[string]string{"ts": "1.500", "dur": "2.001", "bind_id": "7", "flow_in": "true", "flow_out": "true"} {
		if string(x[k]) != want {
			t.Errorf("X event %s = %s, want %s", k, x[k], want)
		}
	}
	if !bytes.Contains(x["args"], []byte(`"cycles":18446744073709551615`)) {
		t.Errorf("uint64 arg not exact: %s", x["args"])
	}
	if _, ok := doc.TraceEvents[0]["ts"]; ok {
		t.Errorf("metadata event should carry no ts")
	}
	if string(doc.TraceEvents[2]["s"]) != `"t"` {
		t.Errorf("instant scope = %s", doc.TraceEvents[2]["s"])
	}

	// An empty export is still a valid document.
	buf.Reset()
	if err := newChromeWriter(&buf).end(); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("empty export is not JSON: %s", buf.Bytes())
	}
}
