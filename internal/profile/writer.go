package profile

import (
	"bufio"
	"io"
	"strconv"
)

// Writer writes events in the runtime's JSON trace format, byte for byte
// as the cereal/rapidjson PrettyWriter does (reference §1): one root
// object of "valueN" members, 4-space indent, "extra" as an array of
// {"key", "value": {"index", "data"}}, no trailing newline.
//
// Extras are written in a fixed order (the runtime's order is its
// unordered_map's and effectively arbitrary). Close must be called to end
// the root object; a Writer that is never closed leaves a truncated
// trace, as a crashed run does.
type Writer struct {
	w   *bufio.Writer
	n   int
	buf []byte
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10)}
}

// Events is the number of events written.
func (w *Writer) Events() int { return w.n }

func itoa(v int) string { return strconv.Itoa(v) }

// Write appends one event; its Index and Key are ignored (the writer
// numbers events itself).
func (w *Writer) Write(e *Event) error {
	if w.err != nil {
		return w.err
	}
	b := w.buf[:0]
	if w.n == 0 {
		b = append(b, "{\n"...)
	} else {
		b = append(b, ",\n"...)
	}
	b = append(b, `    "value`...)
	b = strconv.AppendInt(b, int64(w.n), 10)
	b = append(b, "\": {\n        \"type\": "...)
	b = strconv.AppendQuote(b, e.Type)
	b = append(b, ",\n        \"class\": "...)
	b = strconv.AppendQuote(b, e.Class)
	b = append(b, ",\n        \"timeStamp\": {\n            \"time_since_epoch\": {\n                \"count\": "...)
	b = strconv.AppendInt(b, e.TimeNS, 10)
	b = append(b, "\n            }\n        },\n        \"thread_id\": \""...)
	b = strconv.AppendUint(b, e.Thread, 10)
	b = append(b, "\",\n        \"extra\": "...)
	first := true
	item := func(key string, index int) {
		if first {
			b = append(b, "[\n"...)
			first = false
		} else {
			b = append(b, ",\n"...)
		}
		b = append(b, "            {\n                \"key\": "...)
		b = strconv.AppendQuote(b, key)
		b = append(b, ",\n                \"value\": {\n                    \"index\": "...)
		b = strconv.AppendInt(b, int64(index), 10)
		b = append(b, ",\n                    \"data\": "...)
	}
	end := func() { b = append(b, "\n                }\n            }"...) }
	u := func(key string, index int, v uint64) {
		item(key, index)
		b = strconv.AppendUint(b, v, 10)
		end()
	}
	i := func(key string, index int, v int64) {
		item(key, index)
		b = strconv.AppendInt(b, v, 10)
		end()
	}
	h := e.Has
	if h&HasVersion != 0 {
		u("version", 8, uint64(e.Version))
	}
	if h&HasDuration != 0 {
		item("duration", 6)
		b = append(b, "{\n                        \"count\": "...)
		b = strconv.AppendInt(b, e.DurationNS, 10)
		b = append(b, "\n                    }"...)
		end()
	}
	if h&HasProps != 0 && e.Props != nil {
		item("device_properties", 7)
		p := e.Props
		b = append(b, "{\n"...)
		fields := []struct {
			k string
			v int64
			u uint64
			s bool
		}{
			{"frequency", 0, uint64(p.FrequencyMHz), false},
			{"available_shires", 0, uint64(p.AvailableShires), false},
			{"memory_bw", 0, uint64(p.MemoryBWMBps), false},
			{"memory_size", 0, p.MemorySizeBytes, false},
			{"cache_line_size", 0, uint64(p.CacheLineBytes), false},
			{"compute_minion_shire_mask", 0, p.ShireMask, false},
			{"device_arch_rev", int64(p.ArchRev), 0, true},
			{"form_factor", int64(p.FormFactor), 0, true},
			{"tdp", 0, uint64(p.TDPWatts), false},
		}
		for k, f := range fields {
			b = append(b, "                        \""...)
			b = append(b, f.k...)
			b = append(b, "\": "...)
			if f.s {
				b = strconv.AppendInt(b, f.v, 10)
			} else {
				b = strconv.AppendUint(b, f.u, 10)
			}
			if k < len(fields)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, "                    }"...)
		end()
	}
	if h&HasID != 0 {
		u("event", 1, uint64(e.ID))
	}
	if h&HasParentID != 0 {
		u("parent_id", 1, uint64(e.ParentID))
	}
	if h&HasStream != 0 {
		i("stream", 2, int64(e.Stream))
	}
	if h&HasDevice != 0 {
		i("device_id", 3, int64(e.Device))
	}
	if h&HasKernelID != 0 {
		i("kernel_id", 4, int64(e.KernelID))
	}
	if h&HasRspType != 0 {
		u("rsp_type", 5, uint64(e.RspType))
	}
	nums := []struct {
		f   Field
		key string
		v   uint64
	}{
		{HasDevStart, "device_cmd_start_ts", e.DevStartCycles},
		{HasDevWait, "device_cmd_wait_dur", e.DevWaitCycles},
		{HasDevExec, "device_cmd_exec_dur", e.DevExecCycles},
		{HasLoadAddress, "load_address", e.LoadAddress},
		{HasSize, "size", e.SizeBytes},
		{HasPtr, "ptr", e.Ptr},
		{HasSrcPtr, "src_ptr", e.SrcPtr},
		{HasDstPtr, "dst_ptr", e.DstPtr},
		{HasMemAllocated, "mem.allocated_memory", e.MemAllocatedBytes},
		{HasMemFree, "mem.free_memory", e.MemFreeBytes},
		{HasMemMaxContig, "mem.max_contiguous_free_mem", e.MemMaxContigBytes},
		{HasServerPID, "server_pid", e.ServerPID},
		{HasPairID, "pair_id", e.PairID},
	}
	for _, n := range nums {
		if h&n.f != 0 {
			u(n.key, 0, n.v)
		}
	}
	if h&HasAlignment != 0 {
		u("alignment", 12, uint64(e.AlignmentBytes))
	}
	if h&HasBarrier != 0 {
		item("barrier", 11)
		b = strconv.AppendBool(b, e.Barrier)
		end()
	}
	if h&HasThreadName != 0 {
		item("thread_name", 10)
		b = strconv.AppendQuote(b, e.ThreadName)
		end()
	}
	if h&HasSystemTime != 0 {
		item("system_timepoint", 9)
		b = append(b, "{\n                        \"time_since_epoch\": {\n                            \"count\": "...)
		b = strconv.AppendInt(b, e.SystemTimeNS, 10)
		b = append(b, "\n                        }\n                    }"...)
		end()
	}
	for _, x := range e.Extras {
		item(x.Key, x.Index)
		if x.Raw == "" {
			b = append(b, "null"...)
		} else {
			b = append(b, x.Raw...)
		}
		end()
	}
	if first {
		b = append(b, "[]"...)
	} else {
		b = append(b, "\n        ]"...)
	}
	b = append(b, "\n    }"...)
	w.buf = b
	w.n++
	_, w.err = w.w.Write(b)
	return w.err
}

// Flush writes buffered bytes without ending the root object.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// Close ends the root object ("\n}", no trailing newline, as the runtime
// writes it) and flushes. A trace with no events is written as "{}"
// would be by cereal: nothing at all (the root is opened lazily).
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.n > 0 {
		if _, err := w.w.WriteString("\n}"); err != nil {
			return err
		}
	}
	return w.w.Flush()
}
