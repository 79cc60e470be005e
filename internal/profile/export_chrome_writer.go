package profile

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"
)

// This file holds the low-level writer of Chrome Trace Event JSON (the
// format chrome://tracing and ui.perfetto.dev open): a streaming writer of
// one JSON object {"otherData":…,"traceEvents":[…],"displayTimeUnit":"ns"}
// whose events are appended one at a time, so an export never holds the
// whole document in memory.

// chromeArg is one entry of an event's "args" object. Value is a string,
// int, int64, uint64, uint32, float64 or bool.
type chromeArg struct {
	Key   string
	Value any
}

// chromeEvent is one trace event. Times are in ns relative to the trace
// origin; they are written as µs with three decimals, so no sub-µs
// detail is lost.
type chromeEvent struct {
	Name string
	Cat  string
	// Ph is the phase: "X" complete, "i" instant, "C" counter, "M"
	// metadata.
	Ph  string
	PID int
	TID int
	// TSNS is the start time in ns from the origin (ignored for "M").
	TSNS int64
	// DurNS is the duration of an "X" event in ns.
	DurNS int64
	// Scope is the "s" member of instant events ("t", "p" or "g").
	Scope string
	// BindID, FlowIn and FlowOut attach the event to a flow (arrows
	// between slices, version 2 of the flow format: the flow binds to
	// this very event rather than to whatever encloses a timestamp).
	BindID  uint64
	FlowIn  bool
	FlowOut bool
	Args    []chromeArg
}

// chromeWriter streams a Chrome Trace Event JSON object.
type chromeWriter struct {
	w     *bufio.Writer
	buf   []byte
	n     int // events written
	begun bool
}

func newChromeWriter(w io.Writer) *chromeWriter {
	return &chromeWriter{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 512)}
}

// begin writes the head of the document; other is written as the
// "otherData" object (string values).
func (cw *chromeWriter) begin(other []chromeArg) {
	b := cw.buf[:0]
	b = append(b, `{"displayTimeUnit":"ns","otherData":`...)
	b = appendArgs(b, other)
	b = append(b, `,"traceEvents":[`...)
	cw.w.Write(b)
	cw.buf = b
	cw.begun = true
}

// event appends one event.
func (cw *chromeWriter) event(e *chromeEvent) {
	b := cw.buf[:0]
	if cw.n > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n"...)
	b = append(b, `{"name":`...)
	b = appendJSONString(b, e.Name)
	if e.Cat != "" {
		b = append(b, `,"cat":`...)
		b = appendJSONString(b, e.Cat)
	}
	b = append(b, `,"ph":`...)
	b = appendJSONString(b, e.Ph)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(e.PID), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(e.TID), 10)
	if e.Ph != "M" {
		b = append(b, `,"ts":`...)
		b = appendMicros(b, e.TSNS)
	}
	if e.Ph == "X" {
		b = append(b, `,"dur":`...)
		b = appendMicros(b, e.DurNS)
	}
	if e.Scope != "" {
		b = append(b, `,"s":`...)
		b = appendJSONString(b, e.Scope)
	}
	if e.FlowIn || e.FlowOut {
		b = append(b, `,"bind_id":`...)
		b = strconv.AppendUint(b, e.BindID, 10)
		if e.FlowIn {
			b = append(b, `,"flow_in":true`...)
		}
		if e.FlowOut {
			b = append(b, `,"flow_out":true`...)
		}
	}
	if e.Args != nil {
		b = append(b, `,"args":`...)
		b = appendArgs(b, e.Args)
	}
	b = append(b, '}')
	cw.w.Write(b)
	cw.buf = b
	cw.n++
}

// end closes the document and flushes.
func (cw *chromeWriter) end() error {
	if !cw.begun {
		cw.begin(nil)
	}
	cw.w.WriteString("\n]}\n")
	return cw.w.Flush()
}

// appendMicros appends ns as µs with exactly three decimals, computed in
// integers so that no float rounding creeps in: 1234567 → 1234.567.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		if ns == -1<<63 {
			return append(b, "9223372036854775.808"...)
		}
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return b
}

func appendArgs(b []byte, args []chromeArg) []byte {
	b = append(b, '{')
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, a.Key)
		b = append(b, ':')
		switch v := a.Value.(type) {
		case string:
			b = appendJSONString(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case uint64:
			b = strconv.AppendUint(b, v, 10)
		case uint32:
			b = strconv.AppendUint(b, uint64(v), 10)
		case uint16:
			b = strconv.AppendUint(b, uint64(v), 10)
		case float64:
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, control characters are \u escaped; the output is valid JSON for
// any input.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
