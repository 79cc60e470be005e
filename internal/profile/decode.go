package profile

import (
	"fmt"
	"io"
	"math"
)

// bufSize is the decoder's read buffer.
const bufSize = 256 << 10

var knownClasses = func() map[string]string {
	m := map[string]string{}
	for _, c := range []string{
		ClassGetDevices, ClassLoadCode, ClassUnloadCode, ClassMallocDevice, ClassFreeDevice,
		ClassCreateStream, ClassDestroyStream, ClassKernelLaunch, ClassMemcpyHostToDevice,
		ClassMemcpyDeviceToHost, ClassWaitForEvent, ClassWaitForStream, ClassDeviceCommand,
		ClassPmc, ClassCommandSent, ClassResponseReceived, ClassDispatchEvent,
		ClassGetDeviceProperties, ClassStartProfiling, ClassEndProfiling, ClassCmaCopy,
		ClassCmaWait, ClassMemcpyDeviceToDevice, ClassSyncTime, ClassIdentifyThread,
		ClassMemoryStats,
	} {
		m[c] = c
	}
	return m
}()

var knownTypes = map[string]string{
	TypeStart: TypeStart, TypeEnd: TypeEnd, TypeComplete: TypeComplete,
	TypeInstant: TypeInstant, TypeCounter: TypeCounter,
}

// extraKinds maps each known extra key to its variant index and field.
var extraKinds = map[string]struct {
	index int
	field Field
}{
	"event":                       {1, HasID},
	"parent_id":                   {1, HasParentID},
	"stream":                      {2, HasStream},
	"device_id":                   {3, HasDevice},
	"kernel_id":                   {4, HasKernelID},
	"rsp_type":                    {5, HasRspType},
	"duration":                    {6, HasDuration},
	"version":                     {8, HasVersion},
	"device_cmd_start_ts":         {0, HasDevStart},
	"device_cmd_wait_dur":         {0, HasDevWait},
	"device_cmd_exec_dur":         {0, HasDevExec},
	"size":                        {0, HasSize},
	"ptr":                         {0, HasPtr},
	"src_ptr":                     {0, HasSrcPtr},
	"dst_ptr":                     {0, HasDstPtr},
	"load_address":                {0, HasLoadAddress},
	"alignment":                   {12, HasAlignment},
	"barrier":                     {11, HasBarrier},
	"thread_name":                 {10, HasThreadName},
	"device_properties":           {7, HasProps},
	"mem.allocated_memory":        {0, HasMemAllocated},
	"mem.free_memory":             {0, HasMemFree},
	"mem.max_contiguous_free_mem": {0, HasMemMaxContig},
	"system_timepoint":            {9, HasSystemTime},
	"server_pid":                  {0, HasServerPID},
	"pair_id":                     {-1, HasPairID}, // legacy: any integer index
}

// decoder holds the state of one Decode call.
type decoder struct {
	s     *scanner
	opts  Options
	stats Stats
	// badCount: the last timePoint had a count out of range.
	badCount bool
	threads  map[string]uint64
	keyBuf   []byte
	rawBuf   []byte
	event    int // index of the event being decoded
}

// Decode reads a runtime trace (the cereal JSON container of reference §1)
// from r and calls fn with each complete event, in file order. Memory use
// is bounded by the largest event, not the file.
//
// Decode is tolerant: a file cut short (a crashed run) or empty yields the
// complete events before the cut and a "truncated" warning with the byte
// offset; unknown classes, types, members and extra keys are counted in
// Stats and warned about once. Malformed JSON that is not truncation is a
// *SyntaxError. An error returned by fn stops decoding and is returned.
func Decode(r io.Reader, opts Options, fn func(Event) error) (st Stats, err error) {
	size := bufSize
	if l, ok := r.(interface{ Len() int }); ok && l.Len()+512 < size {
		size = l.Len() + 512 // a small trace in memory needs no 256 KiB buffer
	}
	d := &decoder{s: newScanner(r, size), opts: opts, threads: map[string]uint64{}, event: -1}
	defer func() {
		st = d.stats
		st.Bytes = d.s.offset()
		if d.s.eof {
			st.Bytes = d.s.base + int64(d.s.end)
		}
		d.finishWarnings(&st)
	}()
	err = d.run(fn)
	return
}

// callbackError wraps an error from the callback so that it passes
// through the scanner's recover unchanged.
type callbackError struct{ err error }

func (d *decoder) run(fn func(Event) error) (err error) {
	s := d.s
	defer func() {
		if r := recover(); r != nil {
			switch p := r.(type) {
			case syntaxPanic:
				err = &SyntaxError{File: d.opts.File, Offset: p.off, Event: d.event, Msg: p.msg}
			case callbackError:
				err = p.err
			default:
				if r == errTruncated {
					err = d.truncated()
					return
				}
				panic(r)
			}
		}
	}()
	c, ok := s.wsEOF()
	if !ok {
		if s.rerr != nil {
			return s.rerr
		}
		d.stats.Empty = true
		d.stats.Truncated = true
		d.opts.Warnings.Add("empty", -1, 0, "%s: trace is empty (0 events): the run may have crashed before the profiler flushed", d.name())
		return nil
	}
	if c != '{' {
		if c == 1 {
			s.fail("this looks like a binary (PortableBinary) trace; et reads the JSON form")
		}
		s.fail("not a runtime trace: want '{', found " + quoteByte(c))
	}
	s.pos++
	if s.ws() == '}' {
		s.pos++
		d.end()
		return nil
	}
	for {
		k := s.key()
		e := Event{Index: d.stats.Events, Key: valueKey(k), Offset: s.offset()}
		d.event = e.Index
		if s.ws() == '{' {
			e.Offset = s.offset()
		}
		d.decodeEvent(&e)
		d.stats.LastEventEnd = s.offset()
		d.stats.Events++
		d.event = -1
		if err := fn(e); err != nil {
			panic(callbackError{err})
		}
		if !s.more('}') {
			break
		}
	}
	d.end()
	return nil
}

func (d *decoder) name() string {
	if d.opts.File == "" {
		return "trace"
	}
	return d.opts.File
}

// end checks what follows the root object.
func (d *decoder) end() {
	if _, ok := d.s.wsEOF(); ok {
		d.opts.Warnings.Add("trailing-data", -1, d.s.offset(), "%s: byte %d: data after the end of the trace ignored", d.name(), d.s.offset())
	}
}

func (d *decoder) truncated() error {
	s := d.s
	if s.rerr != nil {
		return fmt.Errorf("reading %s: %w", d.name(), s.rerr)
	}
	size := s.base + int64(s.end)
	d.stats.Truncated = true
	d.stats.TruncatedAt = size
	d.opts.Warnings.Add("truncated", d.stats.Events, size,
		"%s: trace truncated at byte %d after %d complete events (the run did not stop the profiler); reporting what was recorded",
		d.name(), size, d.stats.Events)
	return nil
}

// valueKey parses N from "valueN", or returns -1.
// valueKeyMax bounds the numbers valueKey reads: 2^40, or where n·10 would
// overflow an int (32-bit platforms).
const valueKeyMax = min(1<<40, math.MaxInt/10-1)

func valueKey(k []byte) int {
	if len(k) < 6 || string(k[:5]) != "value" {
		return -1
	}
	n := 0
	for _, c := range k[5:] {
		if c < '0' || c > '9' || n > valueKeyMax {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if len(k) > 6 && k[5] == '0' {
		return -1
	}
	return n
}

func count(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

func (d *decoder) decodeEvent(e *Event) {
	s := d.s
	if !s.objStart() {
		return
	}
	for {
		k := s.key()
		switch string(k) {
		case "type":
			v := s.str()
			if t, ok := knownTypes[string(v)]; ok {
				e.Type = t
			} else {
				e.Type = string(v)
				count(&d.stats.UnknownTypes, e.Type)
			}
		case "class":
			v := s.str()
			if c, ok := knownClasses[string(v)]; ok {
				e.Class = c
			} else {
				e.Class = string(v)
				count(&d.stats.UnknownClasses, e.Class)
			}
		case "timeStamp", "TimeStamp":
			if t, ok := d.timePoint(); ok {
				e.TimeNS = t
				e.Has |= HasTime
			} else if d.badCount {
				e.BadTime = true
			}
		case "thread_id":
			e.Thread = d.thread(s.str())
			e.Has |= HasThread
		case "extra":
			d.extras(e)
		default:
			count(&d.stats.UnknownMembers, string(k))
			s.skip(0)
		}
		if !s.more('}') {
			return
		}
	}
}

// timePoint reads {"time_since_epoch": {"count": N}} from the stream.
//
// A count that is there but not an integer in int64's range (1e300, 1.5)
// sets d.badCount, so that it is reported as such, not as missing.
func (d *decoder) timePoint() (int64, bool) {
	s := d.s
	var t int64
	found := false
	d.badCount = false
	if s.ws() != '{' {
		s.skip(0)
		return 0, false
	}
	if !s.objStart() {
		return 0, false
	}
	for {
		k := s.key()
		if string(k) == "time_since_epoch" && s.ws() == '{' {
			if s.objStart() {
				for {
					k := s.key()
					if string(k) == "count" {
						c := s.ws()
						if c == '-' || (c >= '0' && c <= '9') {
							n := s.num()
							if v, ok := n.int64(); ok {
								t, found = v, true
							} else {
								d.badCount = true
							}
						} else {
							s.skip(0)
						}
					} else {
						s.skip(0)
					}
					if !s.more('}') {
						break
					}
				}
			}
		} else {
			s.skip(0)
		}
		if !s.more('}') {
			return t, found
		}
	}
}

func (n number) int64() (int64, bool) {
	if !n.integer || n.overflow {
		return 0, false
	}
	if n.neg {
		if n.mag > 1<<63 {
			return 0, false
		}
		return -int64(n.mag), true
	}
	if n.mag > 1<<63-1 {
		return 0, false
	}
	return int64(n.mag), true
}

func (n number) uint64() (uint64, bool) {
	if !n.integer || n.overflow || (n.neg && n.mag != 0) {
		return 0, false
	}
	return n.mag, true
}

func (d *decoder) thread(b []byte) uint64 {
	var v uint64
	ok := len(b) > 0 && len(b) <= 20
	for _, c := range b {
		if c < '0' || c > '9' {
			ok = false
			break
		}
		dd := uint64(c - '0')
		if v > (1<<64-1-dd)/10 {
			ok = false
			break
		}
		v = v*10 + dd
	}
	if ok {
		return v
	}
	if id, ok := d.threads[string(b)]; ok {
		return id
	}
	id := uint64(1)<<63 | uint64(len(d.threads)+1)
	d.threads[string(b)] = id
	return id
}

// extras reads the extra array: {"key": K, "value": {"index": I, "data": D}}.
func (d *decoder) extras(e *Event) {
	s := d.s
	if s.ws() != '[' {
		count(&d.stats.UnknownMembers, "extra (not an array)")
		s.skip(0)
		return
	}
	if !s.arrStart() {
		return
	}
	for {
		d.extra(e)
		if !s.more(']') {
			return
		}
	}
}

func (d *decoder) extra(e *Event) {
	s := d.s
	if s.ws() != '{' {
		count(&d.stats.BadIndex, "(malformed extra)")
		s.skip(0)
		return
	}
	haveKey, haveIndex, haveData := false, false, false
	index := -1
	d.keyBuf = d.keyBuf[:0]
	d.rawBuf = d.rawBuf[:0]
	if s.objStart() {
		for {
			k := s.key()
			switch string(k) {
			case "key":
				if s.ws() == '"' {
					d.keyBuf = append(d.keyBuf[:0], s.str()...)
					haveKey = true
				} else {
					s.skip(0)
				}
			case "value":
				if s.ws() == '{' && s.objStart() {
					for {
						k := s.key()
						switch string(k) {
						case "index":
							n := s.num()
							if v, ok := n.int64(); ok && v >= -1<<31 && v < 1<<31 {
								index, haveIndex = int(v), true
							}
						case "data":
							d.rawBuf = append(d.rawBuf[:0], s.raw()...)
							haveData = true
						default:
							s.skip(0)
						}
						if !s.more('}') {
							break
						}
					}
				} else if s.buf[s.pos] != '{' {
					s.skip(0)
				}
			default:
				s.skip(0)
			}
			if !s.more('}') {
				break
			}
		}
	}
	if !haveKey {
		count(&d.stats.BadIndex, "(extra without key)")
		return
	}
	kind, known := extraKinds[string(d.keyBuf)]
	if !known {
		count(&d.stats.UnknownKeys, string(d.keyBuf))
		d.keep(e, index)
		return
	}
	if !haveIndex || !haveData || (kind.index >= 0 && index != kind.index) || !d.interpret(e, kind.field, index) {
		count(&d.stats.BadIndex, string(d.keyBuf))
		d.keep(e, index)
		return
	}
	if e.Has&kind.field != 0 {
		// Keys are unique in real traces (emplace keeps the first).
		return
	}
	e.Has |= kind.field
}

func (d *decoder) keep(e *Event, index int) {
	if len(e.Extras) >= 64 {
		return
	}
	e.Extras = append(e.Extras, Extra{Key: string(d.keyBuf), Index: index, Raw: string(d.rawBuf)})
}

// interpret sets the field from the raw data; it reports false when the
// data does not have the expected shape.
func (d *decoder) interpret(e *Event, f Field, index int) (ok bool) {
	if e.Has&f != 0 {
		return true // duplicate key: the first one wins
	}
	raw := d.rawBuf
	switch f {
	case HasID, HasParentID:
		v, ok := rawUint(raw, 65535)
		if f == HasID {
			e.ID = uint16(v)
		} else {
			e.ParentID = uint16(v)
		}
		return ok
	case HasStream, HasDevice, HasKernelID:
		v, ok := rawInt(raw)
		if !ok || v < -1<<31 || v >= 1<<31 {
			return false
		}
		switch f {
		case HasStream:
			e.Stream = int(v)
		case HasDevice:
			e.Device = int(v)
		default:
			e.KernelID = int(v)
		}
		return true
	case HasRspType:
		v, ok := rawUint(raw, 255)
		e.RspType = RspType(v)
		return ok
	case HasVersion:
		v, ok := rawUint(raw, 65535)
		e.Version = int(v)
		if ok && e.Class == ClassStartProfiling && d.stats.Version == 0 {
			d.stats.Version = e.Version
		}
		return ok
	case HasAlignment:
		v, ok := rawUint(raw, 1<<32-1)
		e.AlignmentBytes = uint32(v)
		return ok
	case HasDuration:
		v, ok := rawCount(raw)
		e.DurationNS = v
		return ok
	case HasSystemTime:
		v, ok := rawTimePoint(raw)
		e.SystemTimeNS = v
		return ok
	case HasBarrier:
		switch string(raw) {
		case "true":
			e.Barrier = true
			return true
		case "false":
			e.Barrier = false
			return true
		}
		return false
	case HasThreadName:
		if len(raw) < 2 || raw[0] != '"' {
			return false
		}
		sc := bytesScanner(raw)
		ok := catch(func() { e.ThreadName = string(sc.str()) })
		return ok
	case HasProps:
		p, ok := rawProps(raw)
		if ok {
			e.Props = p
		}
		return ok
	case HasPairID:
		v, ok := rawUint(raw, 1<<64-1)
		e.PairID = v
		return ok
	}
	v, ok := rawUint(raw, 1<<64-1)
	if !ok {
		return false
	}
	switch f {
	case HasDevStart:
		e.DevStartCycles = v
	case HasDevWait:
		e.DevWaitCycles = v
	case HasDevExec:
		e.DevExecCycles = v
	case HasSize:
		e.SizeBytes = v
	case HasPtr:
		e.Ptr = v
	case HasSrcPtr:
		e.SrcPtr = v
	case HasDstPtr:
		e.DstPtr = v
	case HasLoadAddress:
		e.LoadAddress = v
	case HasMemAllocated:
		e.MemAllocatedBytes = v
	case HasMemFree:
		e.MemFreeBytes = v
	case HasMemMaxContig:
		e.MemMaxContigBytes = v
	case HasServerPID:
		e.ServerPID = v
	}
	return true
}

// catch runs f and reports whether it finished without a scanner panic.
func catch(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isSyn := r.(syntaxPanic); !isSyn && r != errTruncated {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// rawUint parses a plain unsigned integer no larger than max.
func rawUint(raw []byte, max uint64) (uint64, bool) {
	if len(raw) == 0 || len(raw) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		dd := uint64(c - '0')
		if v > (1<<64-1-dd)/10 {
			return 0, false
		}
		v = v*10 + dd
	}
	if v > max || (len(raw) > 1 && raw[0] == '0') {
		return 0, false
	}
	return v, true
}

func rawInt(raw []byte) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	v, ok := rawUint(raw, 1<<63)
	if !ok || (!neg && v > 1<<63-1) {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// rawCount parses {"count": N}.
func rawCount(raw []byte) (int64, bool) {
	// Fast path for the exact cereal output is not needed: durations
	// are small objects.
	sc := bytesScanner(raw)
	var v int64
	found := false
	ok := catch(func() {
		if !sc.objStart() {
			return
		}
		for {
			k := sc.key()
			if string(k) == "count" {
				v, found = sc.num().int64()
			} else {
				sc.skip(0)
			}
			if !sc.more('}') {
				return
			}
		}
	})
	return v, ok && found
}

// rawTimePoint parses {"time_since_epoch": {"count": N}}.
func rawTimePoint(raw []byte) (int64, bool) {
	sc := bytesScanner(raw)
	var v int64
	found := false
	ok := catch(func() {
		if !sc.objStart() {
			return
		}
		for {
			k := sc.key()
			if string(k) == "time_since_epoch" {
				inner := sc.raw()
				v, found = rawCount(append([]byte(nil), inner...))
			} else {
				sc.skip(0)
			}
			if !sc.more('}') {
				return
			}
		}
	})
	return v, ok && found
}

// rawProps parses the device_properties object (the fields et uses).
func rawProps(raw []byte) (*DeviceProps, bool) {
	sc := bytesScanner(raw)
	p := &DeviceProps{}
	ok := catch(func() {
		if !sc.objStart() {
			return
		}
		for {
			k := string(sc.key())
			c := sc.ws()
			if c != '-' && (c < '0' || c > '9') {
				sc.skip(0)
			} else {
				n := sc.num()
				u, _ := n.uint64()
				i, _ := n.int64()
				switch k {
				case "frequency":
					p.FrequencyMHz = uint32(min(u, 1<<32-1))
				case "available_shires":
					p.AvailableShires = uint32(min(u, 1<<32-1))
				case "memory_bw":
					p.MemoryBWMBps = uint32(min(u, 1<<32-1))
				case "memory_size":
					p.MemorySizeBytes = u
				case "cache_line_size":
					p.CacheLineBytes = uint32(min(u, 1<<32-1))
				case "compute_minion_shire_mask":
					p.ShireMask = u
				case "device_arch_rev":
					p.ArchRev = int(i)
				case "form_factor":
					p.FormFactor = int(i)
				case "tdp":
					p.TDPWatts = uint32(min(u, 1<<32-1))
				}
			}
			if !sc.more('}') {
				return
			}
		}
	})
	return p, ok
}

// finishWarnings turns the counters into one warning each.
func (d *decoder) finishWarnings(st *Stats) {
	w := d.opts.Warnings
	name := d.name()
	if len(st.UnknownClasses) > 0 {
		w.Add("unknown-class", -1, -1, "%s: unknown event classes skipped: %s", name, sortedCounts(st.UnknownClasses))
	}
	if len(st.UnknownTypes) > 0 {
		w.Add("unknown-type", -1, -1, "%s: unknown event types: %s", name, sortedCounts(st.UnknownTypes))
	}
	if len(st.UnknownMembers) > 0 {
		w.Add("unknown-member", -1, -1, "%s: unknown event members ignored: %s", name, sortedCounts(st.UnknownMembers))
	}
	if len(st.UnknownKeys) > 0 {
		w.Add("unknown-key", -1, -1, "%s: unknown extra keys ignored: %s", name, sortedCounts(st.UnknownKeys))
	}
	if len(st.BadIndex) > 0 {
		w.Add("bad-index", -1, -1, "%s: extras with an unexpected variant index or value ignored: %s", name, sortedCounts(st.BadIndex))
	}
	if st.Version != 0 && st.Version != 2 && st.Version != 3 {
		w.Add("version", 0, -1, "%s: trace version %d (et knows versions 2 and 3); reading it anyway", name, st.Version)
	}
}
