package profile

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDecodeSample(t *testing.T) {
	evs, st, w, err := decodeAll(readFixture(t, "sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 42 || len(evs) != 42 || st.Truncated || st.Version != 3 || st.Bytes != 35228 {
		t.Fatalf("stats = %+v", st)
	}
	if w.Len() != 0 {
		t.Errorf("warnings: %v", w.List())
	}
	for i, e := range evs {
		if e.Index != i || e.Key != i {
			t.Errorf("event %d: index %d key %d", i, e.Index, e.Key)
		}
	}
	// value27: the kernel launch of the reference's §3 excerpt.
	kl := evs[27]
	if kl.Class != ClassKernelLaunch || kl.Type != TypeComplete || kl.TimeNS != 263745119543500 || kl.Thread != 139896385697600 {
		t.Errorf("value27 = %+v", kl)
	}
	if kl.DurationNS != 14900 || kl.ID != 8 || kl.KernelID != 0 || kl.Stream != 1 || kl.LoadAddress != 1<<64-1 {
		t.Errorf("value27 extras = %+v", kl)
	}
	rr := evs[30]
	if rr.DevExecCycles != 1732655 || rr.DevStartCycles != 412838158000 || rr.DevWaitCycles != 2480 || rr.RspType != RspKernel {
		t.Errorf("value30 = %+v", rr)
	}
	gp := evs[2]
	if gp.Props == nil || gp.Props.FrequencyMHz != 1000 || gp.Props.MemorySizeBytes != 17179869184 {
		t.Errorf("value2 props = %+v", gp.Props)
	}
	if evs[41].Class != ClassEndProfiling || evs[41].Has&^(HasTime|HasThread) != 0 {
		t.Errorf("value41 = %+v", evs[41])
	}
}

// TestDecodeReaders checks that the result does not depend on how the
// input is split into reads (buffer refills inside tokens).
func TestDecodeReaders(t *testing.T) {
	b := readFixture(t, "sample.json")
	want, _, _, err := decodeAll(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	_, err = Decode(iotest.OneByteReader(bytes.NewReader(b)), Options{}, func(e Event) error {
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("one-byte reader: %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !eventsEqual(got[i], want[i]) {
			t.Errorf("event %d differs:\n%+v\n%+v", i, got[i], want[i])
		}
	}
}

func eventsEqual(a, b Event) bool { return reflect.DeepEqual(a, b) }

func TestDecodeTruncated(t *testing.T) {
	full := readFixture(t, "sample.json")
	for _, n := range []int{0, 1, 2, 100, 8192, 16384, 20000, 34000, len(full) - 1} {
		evs, st, w, err := decodeAll(full[:n])
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if !st.Truncated {
			t.Errorf("cut at %d: not marked truncated", n)
		}
		if w.Len() != 1 {
			t.Errorf("cut at %d: warnings %v", n, w.List())
		}
		// Every complete event is kept: the next event starts after the
		// last complete one.
		if n > 0 && n < len(full) {
			if st.LastEventEnd > int64(n) {
				t.Errorf("cut at %d: last event ends at %d", n, st.LastEventEnd)
			}
			next := bytes.Index(full[max(st.LastEventEnd, 1):], []byte(`"value`))
			if len(evs) < 42 && next >= 0 && int(st.LastEventEnd)+next+200 < n && len(evs) > 0 {
				// a complete event after the last one would have been decoded
				end := bytes.Index(full[int(st.LastEventEnd)+next:], []byte("\n    }"))
				if end >= 0 && int(st.LastEventEnd)+next+end+6 <= n {
					t.Errorf("cut at %d: event %d complete in the input but not decoded", n, len(evs))
				}
			}
		}
	}
	_, st, w, _ := decodeAll(readFixture(t, "truncated.json"))
	if st.Events != 17 || !st.Truncated || st.TruncatedAt != 16384 {
		t.Errorf("truncated.json: %+v", st)
	}
	if l := w.List(); len(l) != 1 || !strings.Contains(l[0].Message, "byte 16384 after 17 complete events") {
		t.Errorf("truncated.json warnings: %v", l)
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, in := range []string{"", "  \n"} {
		evs, st, w, err := decodeAll([]byte(in))
		if err != nil || len(evs) != 0 || !st.Empty || w.Len() != 1 || w.List()[0].Kind != "empty" {
			t.Errorf("%q: %v %+v %v", in, err, st, w.List())
		}
	}
	evs, st, w, err := decodeAll([]byte("{}"))
	if err != nil || len(evs) != 0 || st.Truncated || w.Len() != 0 {
		t.Errorf("{}: %v %+v %v", err, st, w.List())
	}
}

func TestDecodeTolerant(t *testing.T) {
	in := `{"value0": {"type": "Instant", "class": "FancyNew", "timeStamp": {"time_since_epoch": {"count": 5}}, "thread_id": "x", "color": 3,
	"extra": [{"key": "gizmo", "value": {"index": 0, "data": 7}}, {"key": "event", "value": {"index": 0, "data": 9}},
	          {"value": {"data": 4, "index": 1}, "key": "parent_id"}, {"key": "thread_name", "value": {"index": 10, "data": "a\"b\u00e9"}}]},
	"value1": {"type": "Weird", "class": "KernelLaunch", "TimeStamp": {"time_since_epoch": {"count": -3}}, "thread_id": "18446744073709551615", "extra": []}}`
	evs, st, w, err := decodeAll([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	e := evs[0]
	if e.Class != "FancyNew" || e.Has&HasID != 0 || e.Has&HasParentID == 0 || e.ParentID != 4 || e.ThreadName != "a\"bé" {
		t.Errorf("event 0 = %+v", e)
	}
	if len(e.Extras) != 2 || e.Extras[0].Key != "gizmo" || e.Extras[0].Raw != "7" || e.Extras[1].Key != "event" {
		t.Errorf("extras = %+v", e.Extras)
	}
	if evs[1].TimeNS != -3 || evs[1].Thread != 1<<64-1 || evs[1].Type != "Weird" {
		t.Errorf("event 1 = %+v", evs[1])
	}
	if st.UnknownClasses["FancyNew"] != 1 || st.UnknownKeys["gizmo"] != 1 || st.BadIndex["event"] != 1 || st.UnknownMembers["color"] != 1 || st.UnknownTypes["Weird"] != 1 {
		t.Errorf("stats = %+v", st)
	}
	kinds := map[string]bool{}
	for _, x := range w.List() {
		kinds[x.Kind] = true
	}
	for _, k := range []string{"unknown-class", "unknown-key", "bad-index", "unknown-member", "unknown-type"} {
		if !kinds[k] {
			t.Errorf("no %s warning in %v", k, w.List())
		}
	}
}

func TestDecodeUint64Exact(t *testing.T) {
	in := `{"value0": {"type": "Instant", "class": "ResponseReceived", "timeStamp": {"time_since_epoch": {"count": 1}}, "thread_id": "1",
	"extra": [{"key": "device_cmd_start_ts", "value": {"index": 0, "data": 18446744073709551615}},
	          {"key": "device_cmd_exec_dur", "value": {"index": 0, "data": 9007199254740993}},
	          {"key": "size", "value": {"index": 0, "data": 18446744073709551616}}]}}`
	evs, st, _, err := decodeAll([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	e := evs[0]
	if e.DevStartCycles != 1<<64-1 || e.DevExecCycles != 9007199254740993 || e.Has&HasSize != 0 || st.BadIndex["size"] != 1 {
		t.Errorf("%+v %+v", e, st)
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		name, in string
		off      int64
		event    int
	}{
		{"not an object", `[1, 2]`, 0, -1},
		{"binary", "\x01\x07\x00", 0, -1},
		{"garbage after key", `{"value0": x}`, 11, 0},
		{"bad member separator", `{"value0": {"type" "Instant"}}`, 19, 0},
		{"bad literal", `{"value0": {"type": "Instant", "extra": [tru]}}`, 44, 0},
		{"control char", "{\"value0\": {\"ty\x01pe\": 1}}", 15, 0},
		{"missing comma between events", `{"value0": {} "value1": {}}`, 14, -1},
		{"bad escape", `{"value0": {"type": "\q"}}`, 22, 0},
		{"leading zero", `{"value0": {"extra": [{"key": "size", "value": {"index": 0, "data": 01}}]}}`, 70, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := decodeAll([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *SyntaxError", err)
			}
			if se.Offset != tt.off || se.Event != tt.event {
				t.Errorf("err = %v (offset %d, event %d), want offset %d event %d", err, se.Offset, se.Event, tt.off, tt.event)
			}
			if !strings.HasPrefix(err.Error(), "parsing trace: t.json: byte ") {
				t.Errorf("message %q", err)
			}
			var ie interface{ InputError() }
			if !errors.As(err, &ie) {
				t.Error("not an input error")
			}
		})
	}
}

func TestDecodeCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := Decode(bytes.NewReader(readFixture(t, "sample.json")), Options{}, func(Event) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Errorf("err = %v after %d events", err, n)
	}
}

func TestDecodeReadError(t *testing.T) {
	r := io.MultiReader(bytes.NewReader(readFixture(t, "sample.json")[:10000]), iotest.ErrReader(errors.New("disk on fire")))
	_, err := Decode(r, Options{File: "r.json"}, func(Event) error { return nil })
	if err == nil || err.Error() != "reading r.json: disk on fire" {
		t.Errorf("err = %v", err)
	}
}

func TestValidator(t *testing.T) {
	in := `{"value0": {"type": "Complete", "class": "KernelLaunch", "timeStamp": {"time_since_epoch": {"count": 1}}, "thread_id": "1", "extra": []},
	"value5": {"type": "Start", "class": "StartProfiling", "timeStamp": {"time_since_epoch": {"count": 1}}, "thread_id": "1", "extra": []}}`
	var w Warnings
	v := NewValidator("v.json", &w)
	st, err := Decode(strings.NewReader(in), Options{}, func(e Event) error { v.Check(&e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	v.Finish(st)
	want := []string{
		"v.json: event 0 is KernelLaunch, not StartProfiling; times are relative to the first event",
		"v.json: event 0: Complete KernelLaunch without a duration",
		"v.json: event 0: KernelLaunch without event, kernel_id",
		"v.json: event 1: stored under key value5, want value1 (keys must run value0, value1, ...)",
		"v.json: event 1: StartProfiling without a version",
		"v.json: event 1: legacy Start event (traces before 2021-12); Start/End pairs are not joined",
		"v.json: no EndProfiling event",
	}
	var got []string
	for _, x := range w.List() {
		got = append(got, x.Message)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The sample is valid.
	var w2 Warnings
	v2 := NewValidator("s", &w2)
	st, _ = Decode(bytes.NewReader(readFixture(t, "sample.json")), Options{}, func(e Event) error { v2.Check(&e); return nil })
	v2.Finish(st)
	if w2.Len() != 0 {
		t.Errorf("sample: %v", w2.List())
	}
}

// FuzzDecode seeds are small: whole fixtures (tens of KiB) starve the
// fuzzer, which minimises every new input it finds at a cost growing with
// its size. TestDecodeBigInputs checks the whole fixtures.
func FuzzDecode(f *testing.F) {
	for _, n := range []string{"sample.json", "truncated.json", "empty.json", "wrapped_ids.json"} {
		b := readFixture(f, n)
		f.Add(b[:min(len(b), 600)])
	}
	f.Add([]byte(`{"value0": {"extra": [{"key": "device_properties", "value": {"index": 7, "data": {"frequency": 5}}}]}}`))
	f.Add([]byte(`{"value0": {"type": "Complete", "class": "KernelLaunch", "timeStamp": {"time_since_epoch": {"count": 5}}, "duration": {"count": 3}, "id": 1}}`))
	f.Fuzz(checkDecode)
}

func TestDecodeBigInputs(t *testing.T) {
	for _, n := range []string{"sample.json", "truncated.json", "empty.json", "wrapped_ids.json"} {
		checkDecode(t, readFixture(t, n))
	}
}

func checkDecode(t *testing.T, b []byte) {
	{
		var w Warnings
		n := 0
		j := NewJoiner(JoinOptions{Warnings: &w})
		v := NewValidator("f", &w)
		st, err := Decode(bytes.NewReader(b), Options{Warnings: &w}, func(e Event) error {
			n++
			v.Check(&e)
			j.Add(&e)
			return nil
		})
		j.Flush()
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if se.Offset < 0 || se.Offset > int64(len(b)) {
				t.Fatalf("offset %d outside input of %d bytes", se.Offset, len(b))
			}
			return
		}
		if st.Events != n {
			t.Fatalf("stats say %d events, callback saw %d", st.Events, n)
		}
	}
}
