package profile

// Validator checks the structure of a decoded trace, event by event, and
// reports problems as warnings with the event index (reference §1, §5.6).
// It is separate from Decode, which only reads: a trace that decodes may
// still be inconsistent.
type Validator struct {
	file     string
	w        *Warnings
	n        int
	sawStart bool
	sawEnd   bool
	endIndex int
}

// NewValidator returns a validator reporting into w; file names the input.
func NewValidator(file string, w *Warnings) *Validator {
	if file == "" {
		file = "trace"
	}
	return &Validator{file: file, w: w, endIndex: -1}
}

// required lists the extras each class must carry.
var required = map[string]Field{
	ClassKernelLaunch:        HasID | HasKernelID,
	ClassCommandSent:         HasID,
	ClassResponseReceived:    HasID | HasRspType,
	ClassDispatchEvent:       HasID,
	ClassCmaCopy:             HasID | HasParentID,
	ClassMemcpyHostToDevice:  HasID,
	ClassMemcpyDeviceToHost:  HasID,
	ClassGetDeviceProperties: HasDevice | HasProps,
	ClassCreateStream:        HasStream,
	ClassIdentifyThread:      HasThreadName,
}

var fieldNames = []struct {
	f    Field
	name string
}{
	{HasID, "event"}, {HasParentID, "parent_id"}, {HasStream, "stream"}, {HasDevice, "device_id"},
	{HasKernelID, "kernel_id"}, {HasRspType, "rsp_type"}, {HasProps, "device_properties"},
	{HasThreadName, "thread_name"}, {HasDuration, "duration"},
}

func missing(has, want Field) string {
	s := ""
	for _, fn := range fieldNames {
		if want&fn.f != 0 && has&fn.f == 0 {
			if s != "" {
				s += ", "
			}
			s += fn.name
		}
	}
	return s
}

// Check validates the next event (in file order).
func (v *Validator) Check(e *Event) {
	v.n++
	w := v.w
	if e.Key != e.Index {
		w.Add("key-sequence", e.Index, e.Offset, "%s: event %d: stored under key %s, want value%d (keys must run value0, value1, ...)", v.file, e.Index, keyName(e.Key), e.Index)
	}
	if e.BadTime {
		w.Add("bad-time", e.Index, e.Offset, "%s: event %d: timeStamp count is not an integer nanosecond count in range (-2^63, 2^63); the event has no time", v.file, e.Index)
	}
	if e.Type == "" || e.Class == "" || (e.Has&HasTime == 0 && !e.BadTime) || e.Has&HasThread == 0 {
		w.Add("missing-member", e.Index, e.Offset, "%s: event %d: missing one of type, class, timeStamp, thread_id", v.file, e.Index)
	}
	if e.Has&HasDuration != 0 && e.DurationNS < 0 {
		w.Add("negative-duration", e.Index, e.Offset, "%s: event %d: negative duration %d ns; the event's host time is unreliable", v.file, e.Index, e.DurationNS)
	}
	if e.Class == ClassResponseReceived && e.Has&(HasDevStart|HasDevWait|HasDevExec) == HasDevStart|HasDevWait|HasDevExec {
		if _, over := addCycles(e.DevStartCycles, e.DevWaitCycles, e.DevExecCycles); over {
			w.Add("cycle-overflow", e.Index, e.Offset, "%s: event %d: device cycles overflow: start %d + wait %d + exec %d is past 2^64-1; sums saturate", v.file, e.Index, e.DevStartCycles, e.DevWaitCycles, e.DevExecCycles)
		}
	}
	if e.Index == 0 && e.Class != ClassStartProfiling && e.Class != ClassSyncTime {
		w.Add("no-start", 0, e.Offset, "%s: event 0 is %s, not StartProfiling; times are relative to the first event", v.file, e.Class)
	}
	if e.Class == ClassStartProfiling {
		v.sawStart = true
		if e.Has&HasVersion == 0 {
			w.Add("no-version", e.Index, e.Offset, "%s: event %d: StartProfiling without a version", v.file, e.Index)
		}
		if e.Has&HasTime != 0 && e.TimeNS < 0 {
			w.Add("negative-start", e.Index, e.Offset, "%s: event %d: StartProfiling at a negative time stamp (%d ns); the window is measured from it, so it and every time relative to it are wrong", v.file, e.Index, e.TimeNS)
		}
	}
	if e.Class == ClassEndProfiling {
		v.sawEnd = true
		v.endIndex = e.Index
	}
	if e.Type == TypeStart || e.Type == TypeEnd {
		w.Add("legacy-start-end", e.Index, e.Offset, "%s: event %d: legacy %s event (traces before 2021-12); Start/End pairs are not joined", v.file, e.Index, e.Type)
	}
	if e.Type == TypeComplete && e.Has&HasDuration == 0 {
		w.Add("no-duration", e.Index, e.Offset, "%s: event %d: Complete %s without a duration", v.file, e.Index, e.Class)
	}
	if want, ok := required[e.Class]; ok && e.Has&want != want {
		w.Add("missing-extra:"+e.Class, e.Index, e.Offset, "%s: event %d: %s without %s", v.file, e.Index, e.Class, missing(e.Has, want))
	}
	if e.Class == ClassResponseReceived && e.Has&(HasDevStart|HasDevWait|HasDevExec) != HasDevStart|HasDevWait|HasDevExec {
		w.Add("no-device-cycles", e.Index, e.Offset, "%s: event %d: ResponseReceived without device_cmd_start_ts/_wait_dur/_exec_dur", v.file, e.Index)
	}
	if e.Has&HasRspType != 0 && e.RspType > RspDMAP2P {
		w.Add("bad-rsp-type", e.Index, e.Offset, "%s: event %d: unknown rsp_type %d", v.file, e.Index, e.RspType)
	}
}

// Finish reports problems of the whole trace; st is Decode's result.
func (v *Validator) Finish(st Stats) {
	if v.n == 0 {
		if !st.Truncated { // an empty or cut file has its own warning
			v.w.Add("no-events", -1, -1, "%s: no events: a runtime trace holds at least StartProfiling and EndProfiling", v.file)
		}
		return
	}
	if !v.sawStart {
		v.w.Add("no-start", -1, -1, "%s: no StartProfiling event", v.file)
	}
	if !v.sawEnd && !st.Truncated {
		v.w.Add("no-end", -1, -1, "%s: no EndProfiling event", v.file)
	}
}

func keyName(k int) string {
	if k < 0 {
		return "(not valueN)"
	}
	return "value" + itoa(k)
}

// addCycles adds cycle counts, saturating at 2^64-1; over tells whether
// it did.
func addCycles(xs ...uint64) (sum uint64, over bool) {
	for _, x := range xs {
		if sum+x < sum {
			return 1<<64 - 1, true
		}
		sum += x
	}
	return sum, false
}
