package ref

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/ainekko/et/internal/ops/refmath"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// kernelFunc is the reference implementation of one kernel ELF: it gets
// the params struct decoded as the kernel reads it and computes into
// device memory. An error is what the kernel would report: a *fault, or
// any other error for "the kernel returned -1".
type kernelFunc func(r *run, v abi.Values) error

// kernelTable maps kernel ELF names to their reference implementations
// (opKernels holds the kernels that are one catalog op each, and the
// uberkernel is dispatched by run.exec itself). Kernels of the manifest
// in neither table load fine but fail at launch with "has no reference
// implementation yet".
var kernelTable = map[string]kernelFunc{
	"el_map_f32":       kElMap,
	"rms_norm_mul_f32": kRMSNormMul,
	"softmax_f32":      kSoftMax,
	"rope_f32":         kRope,
	"glu_f32":          kGLU,

	"mul_mat_f32":                kMulMat([]ops.Type{ops.F32}, []ops.Type{ops.F32, ops.F16}),
	"mul_mat_f32_matrix_engine":  kMulMat([]ops.Type{ops.F32}, []ops.Type{ops.F32}),
	"mul_mat_f16":                kMulMat([]ops.Type{ops.F16}, []ops.Type{ops.F16, ops.F32}),
	"mul_mat_f16_matrix_engine":  kMulMat([]ops.Type{ops.F16}, []ops.Type{ops.F16}),
	"mul_mat_Q4_0":               kMulMat([]ops.Type{ops.Q4_0}, []ops.Type{ops.F32}),
	"mul_mat_Q4_0_matrix_engine": kMulMat([]ops.Type{ops.Q4_0}, []ops.Type{ops.F32}),
	"mul_mat_Q8_0":               kMulMat([]ops.Type{ops.Q8_0}, []ops.Type{ops.F32}),

	"flash_attn_ext_f16_me": kFlashAttn([]ops.Type{ops.F16}),
	"flash_attn_ext_f32":    kFlashAttn([]ops.Type{ops.F16, ops.F32}),

	"rwkv_wkv6_f32":       kWKV6,
	"rwkv_wkv7_f32":       kWKV7,
	"gated_delta_net_f32": kGatedDeltaNet,

	"memops": kMemops,
}

// run is one launch in progress: the memory it works on, the manifest,
// and what it has cost so far.
type run struct {
	mem   *memory
	m     *abi.Manifest
	cost  Cost
	insts []string // kernels run by an uberkernel launch
	// decoded are the params of every kernel run, as decoded.
	decoded []abi.Decoded
	// params is the device's cache of decoded params (nil: none).
	params *decodeCache
	// entry is the cache entry of the kernel running (nil: none), and
	// calls counts its compute calls, whose normalized params the
	// entry keeps in call order.
	entry *cachedParams
	calls int
	// rec records the kernel running for its entry's replay.
	rec recorder
}

// recorder watches one kernel run for a replay: the device tensors it
// made (r.tensor) and its compute calls.
type recorder struct {
	on    bool
	bufs  []*byte // first byte of every device allocation a tensor views
	call  replay  // the first compute call
	calls int
	host  bool // a compute call used a tensor outside device memory
}

// replay is a resolved launch: a kernel that made one compute call on
// tensors of device memory, kept with its cache entry, so a launch of the
// same kernel on the same params bytes runs that call again without
// decoding, making tensors, looking up the op or normalizing its params.
// It is valid while the device's allocations are the ones it was resolved
// with (gen): the tensors view their allocations' memory, whose contents
// may change but whose identity only Malloc and Free change.
type replay struct {
	gen   uint64
	info  *ops.OpInfo
	dst   *ops.Tensor
	srcs  []*ops.Tensor
	p     ops.Params
	clone bool // runAliased computes into a copy of dst's allocation
	// ref is the op's reference math (refmath.Ref), looked up once.
	ref refmath.RefFunc
	// bound is the op's Ref bound to these tensors (ops.BindFunc), nil
	// where it has none (or clone).
	bound func() error
	cost  Cost // what the launch costs (tensor bytes, flops)
	// cycles is Cycles of cost as a launch of its own (0: not yet known),
	// kept by the device for the next launch of the same bytes.
	cycles uint64
}

// compute runs the replay's compute call, as compute ran it.
func (rp *replay) compute() error {
	if rp.bound != nil {
		if err := rp.bound(); err != nil {
			return userError(err.Error())
		}
		return nil
	}
	if err := refOp(rp.ref, rp.dst, rp.srcs, rp.p, rp.clone); err != nil {
		return userError(err.Error())
	}
	return nil
}

// run runs the replay within run r (an uberkernel's instruction), adding
// its cost to r's.
func (rp *replay) run(r *run) error {
	if err := rp.compute(); err != nil {
		return err
	}
	r.cost.add(rp.cost)
	return nil
}

// launch runs the replay as a launch of its own, a panic of the
// reference math a fault (as run.launch).
func (rp *replay) launch() (err error) {
	defer recoverFault(&err)
	return rp.compute()
}

// cachedParams is one params blob's decoded values and, in call order,
// the normalized op params its kernel computed with: both follow from
// the bytes alone.
type cachedParams struct {
	v    abi.Values
	norm []ops.Params
	// replay is the resolved launch of these bytes (nil: none yet, or the
	// kernel cannot be replayed).
	replay *replay
}

// liveReplay is e's replay if it was resolved with the device's current
// allocations (gen), else nil; e may be nil.
func (e *cachedParams) liveReplay(gen uint64) *replay {
	if e == nil || e.replay == nil || e.replay.gen != gen {
		return nil
	}
	return e.replay
}

// decodeCache maps a kernel name and its params bytes to the decoded
// params. The same bytes always decode to the same values, and kernels
// only read them, so a cached Values is shared. It holds at most
// maxCachedParams entries and starts afresh when full.
type decodeCache struct {
	m map[string]map[string]*cachedParams // kernel → params bytes → entry
	n int
	// The entry lookup found last, with its kernel and bytes: a perf run
	// launches the same bytes again and again, and comparing them is a
	// fifth of the cost of two map lookups that hash them.
	lastName string
	lastArgs []byte
	last     *cachedParams
}

const maxCachedParams = 256

// lookup returns the cache entry of kernel name on args, or nil.
func (c *decodeCache) lookup(name string, args []byte) *cachedParams {
	if c == nil {
		return nil
	}
	if c.last != nil && name == c.lastName && bytes.Equal(args, c.lastArgs) {
		return c.last
	}
	e := c.m[name][string(args)] // no allocation for the key
	if e != nil {
		c.lastName, c.lastArgs, c.last = name, append(c.lastArgs[:0], args...), e
	}
	return e
}

// dropReplays forgets every entry's replay (the decoded params stay).
func (c *decodeCache) dropReplays() {
	for _, byArgs := range c.m {
		for _, e := range byArgs {
			e.replay = nil
		}
	}
}

// decode returns the decoded params of args and their cache entry (nil
// without a cache).
func (c *decodeCache) decode(m *abi.Manifest, l *abi.Layout, name string, args []byte) (abi.Values, *cachedParams, error) {
	if c == nil {
		v, err := m.Decode(l, args)
		return v, nil, err
	}
	if e := c.lookup(name, args); e != nil {
		return e.v, e, nil
	}
	v, err := m.Decode(l, args)
	if err != nil {
		return v, nil, err
	}
	if c.m == nil || c.n >= maxCachedParams {
		c.m, c.n, c.last = map[string]map[string]*cachedParams{}, 0, nil
	}
	if c.m[name] == nil {
		c.m[name] = map[string]*cachedParams{}
	}
	e := &cachedParams{v: v}
	c.m[name][string(args)] = e
	c.n++
	return v, e, nil
}

// launch runs kernel name on args, turning a panic of the reference math
// into a fault.
func (r *run) launch(name string, args []byte) (err error) {
	defer recoverFault(&err)
	return r.exec(name, args)
}

// recoverFault, deferred, turns a panic into the fault *err.
func recoverFault(err *error) {
	if p := recover(); p != nil {
		*err = &fault{code: CodeUnexpected, msg: fmt.Sprintf("reference math panicked: %v", p)}
	}
}

func (r *run) exec(name string, args []byte) error {
	// The same bytes decode to the same values: a kernel run on bytes
	// that have a valid replay is the decoded launch run again, and it
	// records what it decoded for the ABI check all the same. (Launch
	// replays a whole launch itself; this is an uberkernel's instruction.)
	if e := r.params.lookup(name, args); e.liveReplay(r.mem.gen) != nil {
		r.decoded = append(r.decoded, abi.Decoded{Kernel: name, Values: e.v})
		return e.replay.run(r)
	}
	l, ok := r.m.LayoutFor(name)
	if !ok {
		return userError(fmt.Sprintf("kernel %s has no params layout in the ABI manifest", name))
	}
	if len(args) != l.Size {
		return &fault{code: CodeInvalidArgsSize, msg: fmt.Sprintf("args are %d bytes, the %s params struct is %d", len(args), l.Name, l.Size)}
	}
	f := kernelTable[name]
	if k, ok := opKernels[name]; ok {
		f = k.run
	}
	if name == "uberkernel" {
		f = (*run).uberkernel
	}
	if f == nil {
		return userError(fmt.Sprintf("kernel %s has no reference implementation yet", name))
	}
	v, entry, err := r.params.decode(r.m, l, name, args)
	if err != nil {
		return userError(err.Error())
	}
	r.entry, r.calls = entry, 0
	if name == "uberkernel" {
		return f(r, v)
	}
	r.decoded = append(r.decoded, abi.Decoded{Kernel: name, Values: v})
	if entry == nil || !replayable(name) {
		r.rec.on = false
		return f(r, v)
	}
	r.rec = recorder{on: true, bufs: r.rec.bufs[:0]}
	cost := r.cost
	err = f(r, v)
	if err == nil && r.rec.on && r.rec.calls == 1 && !r.rec.host {
		rp := r.rec.call
		rp.gen = r.mem.gen
		rp.cost = Cost{Flops: r.cost.Flops - cost.Flops, Bytes: r.cost.Bytes - cost.Bytes}
		entry.replay = &rp
	}
	// Keep no pointers into device memory past the launch.
	clear(r.rec.bufs)
	r.rec.on, r.rec.call = false, replay{}
	return err
}

// replayable reports whether kernel name does nothing but make tensors
// of device memory (r.load, r.store) and compute ops on them (r.compute),
// so that running its one compute call again is the whole kernel: the
// one-op kernels, el_map_f32, and the kernels of replayKernels. (memops
// writes memory itself, the uberkernel reads its instructions from
// memory, the sequence kernels make tensors of their own.) Whether a
// launch made exactly one compute call, on device memory only, exec
// checks each time: soft_max with sinks but no mask (a host mask),
// and mul_mat with a bias (two calls) are not replayed; rms_norm_mul
// always computes through a host intermediate.
func replayable(name string) bool {
	if _, ok := opKernels[name]; ok {
		return true
	}
	return replayKernels[name]
}

var replayKernels = map[string]bool{
	"el_map_f32": true, "softmax_f32": true, "rope_f32": true, "glu_f32": true,
	"mul_mat_f32": true, "mul_mat_f32_matrix_engine": true, "mul_mat_f16": true, "mul_mat_f16_matrix_engine": true,
	"mul_mat_Q4_0": true, "mul_mat_Q4_0_matrix_engine": true, "mul_mat_Q8_0": true,
	"flash_attn_ext_f16_me": true, "flash_attn_ext_f32": true,
}

// --- tensor access ---

func (r *run) tensor(v abi.Values, field string, store bool) (*ops.Tensor, error) {
	d, ok := v.Tensor(field)
	if !ok {
		return nil, nil
	}
	t, err := r.mem.tensor(field, d, store)
	if err != nil {
		return nil, err
	}
	r.cost.Bytes += int64(t.NBytes())
	if r.rec.on && len(t.Buf) > 0 {
		r.rec.bufs = append(r.rec.bufs, &t.Buf[0])
	}
	return t, nil
}

// onDevice reports whether t views one of the device allocations the
// kernel running made tensors of.
func (rc *recorder) onDevice(t *ops.Tensor) bool {
	if t == nil || len(t.Buf) == 0 {
		return false
	}
	for _, b := range rc.bufs {
		if b == &t.Buf[0] {
			return true
		}
	}
	return false
}

// load returns a source tensor (nil for an absent optional one) after
// checking its type.
func (r *run) load(v abi.Values, field string, types ...ops.Type) (*ops.Tensor, error) {
	t, err := r.tensor(v, field, false)
	if err != nil || t == nil {
		return nil, err
	}
	return t, wantType(field, t, types)
}

// store returns the destination tensor after checking its type.
func (r *run) store(v abi.Values, field string, types ...ops.Type) (*ops.Tensor, error) {
	t, err := r.tensor(v, field, true)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, userError(fmt.Sprintf("tensor %s is absent", field))
	}
	return t, wantType(field, t, types)
}

func wantType(field string, t *ops.Tensor, types []ops.Type) error {
	if len(types) == 0 {
		return nil
	}
	names := make([]string, len(types))
	for i, w := range types {
		if t.Type == w {
			return nil
		}
		names[i] = w.String()
	}
	return userError(fmt.Sprintf("tensor %s is %s, want %s", field, t.Type, strings.Join(names, " or ")))
}

// loadAll loads required sources of the given types, in order.
func (r *run) loadAll(v abi.Values, fields []string, types ...[]ops.Type) ([]*ops.Tensor, error) {
	out := make([]*ops.Tensor, len(fields))
	for i, f := range fields {
		t, err := r.load(v, f, types[i]...)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, userError(fmt.Sprintf("tensor %s is absent", f))
		}
		out[i] = t
	}
	return out, nil
}

// compute runs op's reference math (params by their case-format names)
// into dst and counts its flops.
func (r *run) compute(op ops.Op, dst *ops.Tensor, srcs []*ops.Tensor, raw map[string]any) error {
	info, ok := ops.Lookup(string(op))
	if !ok {
		return &fault{code: CodeUnexpected, msg: fmt.Sprintf("op %s is not in the op catalog", op)}
	}
	p, err := r.normalize(info, raw)
	if err != nil {
		return userError(err.Error())
	}
	clone := mustClone(info, dst, srcs)
	if err := runOp(info, dst, srcs, p, clone); err != nil {
		return userError(err.Error())
	}
	if info.Flops != nil {
		r.cost.Flops += info.Flops(dst, srcs, p)
	}
	if rc := &r.rec; rc.on {
		rc.calls++
		host := !rc.onDevice(dst)
		for _, s := range srcs {
			host = host || !rc.onDevice(s)
		}
		rc.host = rc.host || host
		if rc.calls == 1 {
			rc.call = replay{info: info, dst: dst, srcs: slices.Clone(srcs), p: p, clone: clone, ref: refmath.Ref(info.Name)}
			if bind := refmath.Bind(info.Name); bind != nil && !clone {
				rc.call.bound = bind(dst, rc.call.srcs, p)
			}
		}
	}
	return nil
}

// normalize is info.Normalize(raw), remembered by the params cache entry
// for the kernel's n-th compute call: the same params bytes give the same
// raw params, and normalizing them (maps, defaults, checks) costs more
// than a small op.
func (r *run) normalize(info *ops.OpInfo, raw map[string]any) (ops.Params, error) {
	e, i := r.entry, r.calls
	r.calls++
	if e != nil && i < len(e.norm) {
		return e.norm[i], nil
	}
	p, err := info.Normalize(raw)
	if err == nil && e != nil && i == len(e.norm) {
		e.norm = append(e.norm, p)
	}
	return p, err
}

// runAliased runs info into dst. When dst lies in the same allocation as
// a source (an in-place launch: dst.data == src0.data, as ggml-et passes
// ggml's *_inplace ops, set and set_rows), it computes into a copy of the
// allocation and copies it back, so the reference kernel behaves as a
// correct in-place kernel: every element is computed from the source as
// it was at launch. An op whose math is in-place safe (OpInfo.InPlace:
// set_rows, which writes a KV cache of megabytes a few rows at a time)
// runs on dst directly when dst is exactly its first source and no other
// source shares the allocation.
func runAliased(info *ops.OpInfo, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return runOp(info, dst, srcs, p, mustClone(info, dst, srcs))
}

// mustClone reports whether runAliased computes info into a copy of dst's
// allocation: dst shares it with a source, and not as the in-place first
// source of an OpInfo.InPlace op.
func mustClone(info *ops.OpInfo, dst *ops.Tensor, srcs []*ops.Tensor) bool {
	aliased := false
	for i, s := range srcs {
		if sharesStorage(s, dst) {
			if aliased || !info.InPlace || i != 0 || !sameView(s, dst) {
				return true // not a case the op handles in place
			}
			aliased = true
		}
	}
	return false
}

// refOp is runOp by the op's reference math ref, without refmath.Run's
// checks of the sources and dst against the op: their types, shapes,
// strides and buffer sizes, and the params, which the checks read and
// nothing else, are those of a launch that passed them. (The op's own checks of the data, such as set_rows'
// indices, run.)
func refOp(ref refmath.RefFunc, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params, clone bool) error {
	return intoDst(dst, clone, func(d *ops.Tensor) error { return ref(d, srcs, p) })
}

// runOp runs info into dst, or with clone into a copy of dst's
// allocation that it then copies back (see runAliased).
func runOp(info *ops.OpInfo, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params, clone bool) error {
	return intoDst(dst, clone, func(d *ops.Tensor) error { return refmath.Run(info, d, srcs, p) })
}

// intoDst calls compute on dst, or with clone on a view of a copy of
// dst's allocation, copied back into dst when compute succeeds.
func intoDst(dst *ops.Tensor, clone bool, compute func(*ops.Tensor) error) error {
	if !clone {
		return compute(dst)
	}
	d := *dst
	d.Buf = slices.Clone(dst.Buf)
	if err := compute(&d); err != nil {
		return err
	}
	copy(dst.Buf, d.Buf)
	return nil
}

// sharesStorage reports whether s and dst are views of one allocation.
func sharesStorage(s, dst *ops.Tensor) bool {
	return s != nil && len(s.Buf) > 0 && len(dst.Buf) > 0 && &s.Buf[0] == &dst.Buf[0]
}

// sameView reports whether a and b are the same tensor of one storage.
func sameView(a, b *ops.Tensor) bool {
	return a.Offs == b.Offs && a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb && len(a.Buf) == len(b.Buf)
}

var (
	f32Only   = []ops.Type{ops.F32}
	i32Only   = []ops.Type{ops.I32}
	f32OrF16  = []ops.Type{ops.F32, ops.F16}
	getRowsIn = []ops.Type{ops.F32, ops.F16, ops.Q4_0, ops.Q8_0, ops.Q4_K}
)

// --- kernels ---

// kElMap is el_map_f32: ADD, SUB or MUL, chosen by the op value of the
// dst tensor (the kernel reads dst.op).
func kElMap(r *run, v abi.Values) error {
	d, _ := v.Tensor("dst")
	name, ok := r.m.OpName(d.Op)
	var op ops.Op
	switch {
	case ok && name == "ADD":
		op = ops.OpAdd
	case ok && name == "SUB":
		op = ops.OpSub
	case ok && name == "MUL":
		op = ops.OpMul
	default:
		if !ok {
			name = "unknown"
		}
		return userError(fmt.Sprintf("dst.op = %d (%s) is not ADD, SUB or MUL", d.Op, name))
	}
	srcs, err := r.loadAll(v, []string{"src0", "src1"}, f32Only, f32Only)
	if err != nil {
		return err
	}
	dst, err := r.store(v, "dst", ops.F32)
	if err != nil {
		return err
	}
	return r.compute(op, dst, srcs, nil)
}

// kRMSNormMul is the fused rms_norm_mul_f32: dst = rms_norm(src0, eps) *
// src1 (src1 are the weights, repeated over the rows).
func kRMSNormMul(r *run, v abi.Values) error {
	srcs, err := r.loadAll(v, []string{"src0", "src1"}, f32Only, f32Only)
	if err != nil {
		return err
	}
	dst, err := r.store(v, "dst", ops.F32)
	if err != nil {
		return err
	}
	norm := ops.New(ops.F32, srcs[0].Ne[:]...)
	if err := r.compute(ops.OpRMSNorm, norm, srcs[:1], map[string]any{"eps": v.Float("eps")}); err != nil {
		return err
	}
	return r.compute(ops.OpMul, dst, []*ops.Tensor{norm, srcs[1]}, nil)
}

// kSoftMax is softmax_f32 {src0, mask (optional), sinks (optional), dst,
// scale, max_bias}.
func kSoftMax(r *run, v abi.Values) error {
	srcs, err := r.loadAll(v, []string{"src0"}, f32Only)
	if err != nil {
		return err
	}
	mask, err := r.load(v, "src1", ops.F32, ops.F16)
	if err != nil {
		return err
	}
	sinks, err := r.load(v, "src2", ops.F32)
	if err != nil {
		return err
	}
	dst, err := r.store(v, "dst", ops.F32)
	if err != nil {
		return err
	}
	if sinks != nil && mask == nil {
		// The op catalog takes sources by position: an all-zero mask adds
		// slope·0 = 0 to every logit, which is the same as no mask.
		mask = ops.New(ops.F32, srcs[0].Ne[0], srcs[0].Ne[1])
	}
	if mask != nil {
		srcs = append(srcs, mask)
	}
	if sinks != nil {
		srcs = append(srcs, sinks)
	}
	return r.compute(ops.OpSoftMax, dst, srcs, map[string]any{"scale": v.Float("scale"), "max_bias": v.Float("max_bias")})
}

// ropeModeName maps a GGML_ROPE_TYPE_* value to the op catalog's mode
// name, through the manifest.
func (r *run) ropeModeName(mode int64) (string, bool) {
	info, _ := ops.Lookup(string(ops.OpRope))
	for _, s := range info.Params {
		if s.Name != "mode" {
			continue
		}
		for _, name := range s.Enum {
			if v, ok := r.m.RopeMode(name); ok && int64(v) == mode {
				return name, true
			}
		}
	}
	return "", false
}

// kRope is rope_f32 {src0, src1 pos, src2 freq factors (optional), dst,
// rope_settings}.
func kRope(r *run, v abi.Values) error {
	mode, ok := r.ropeModeName(v.Int("mode"))
	if !ok {
		return userError(fmt.Sprintf("rope mode %d has no reference implementation", v.Int("mode")))
	}
	srcs, err := r.loadAll(v, []string{"src0", "src1"}, f32Only, i32Only)
	if err != nil {
		return err
	}
	ff, err := r.load(v, "src2", ops.F32)
	if err != nil {
		return err
	}
	if ff != nil {
		srcs = append(srcs, ff)
	}
	dst, err := r.store(v, "dst", ops.F32)
	if err != nil {
		return err
	}
	sections := make([]int64, 4)
	for i := range sections {
		sections[i] = v.Int(fmt.Sprintf("sections[%d]", i))
	}
	return r.compute(ops.OpRope, dst, srcs, map[string]any{
		"n_dims":      v.Int("n_dims"),
		"mode":        mode,
		"n_ctx_orig":  v.Int("n_ctx_orig"),
		"freq_base":   v.Float("freq_base"),
		"freq_scale":  v.Float("freq_scale"),
		"ext_factor":  v.Float("ext_factor"),
		"attn_factor": v.Float("attn_factor"),
		"beta_fast":   v.Float("beta_fast"),
		"beta_slow":   v.Float("beta_slow"),
		"sections":    sections,
	})
}

// kGLU is glu_f32 {src0, src1 (absent in the single-tensor form), dst,
// glu_op_type, swapped, alpha, limit}.
func kGLU(r *run, v abi.Values) error {
	code := v.Int("glu_op_type")
	name, ok := r.m.GLUName(int32(code))
	if !ok {
		return userError(fmt.Sprintf("glu_op_type %d is not a GGML_GLU_OP value", code))
	}
	srcs, err := r.loadAll(v, []string{"src0"}, f32Only)
	if err != nil {
		return err
	}
	b, err := r.load(v, "src1", ops.F32)
	if err != nil {
		return err
	}
	dst, err := r.store(v, "dst", ops.F32)
	if err != nil {
		return err
	}
	raw := map[string]any{"op": strings.ToLower(name), "alpha": v.Float("alpha"), "limit": v.Float("limit")}
	if b != nil {
		srcs = append(srcs, b)
	} else {
		raw["swapped"] = v.Int("swapped") != 0
	}
	return r.compute(ops.OpGLU, dst, srcs, raw)
}

// kMulMat is one of the seven mul_mat kernels {src0 weights, src1, dst}.
// mul_mat_Q8_0 reads the mm_q8 struct, whose optional bias (the fused
// MUL_MAT+ADD) is added to the product.
func kMulMat(a, b []ops.Type) kernelFunc {
	return func(r *run, v abi.Values) error {
		srcs, err := r.loadAll(v, []string{"src0", "src1"}, a, b)
		if err != nil {
			return err
		}
		bias, err := r.load(v, "bias", ops.F32) // absent outside mm_q8
		if err != nil {
			return err
		}
		dst, err := r.store(v, "dst", ops.F32)
		if err != nil {
			return err
		}
		if bias == nil {
			return r.compute(ops.OpMulMat, dst, srcs, nil)
		}
		mm := ops.New(ops.F32, dst.Ne[:]...)
		if err := r.compute(ops.OpMulMat, mm, srcs, nil); err != nil {
			return err
		}
		return r.compute(ops.OpAdd, dst, []*ops.Tensor{mm, bias}, nil)
	}
}

// kFlashAttn is flash_attn_ext_f16_me and flash_attn_ext_f32 {q, k, v,
// mask (optional), dst, scale, has_mask}. The mask is used only when
// has_mask is set, and then it must be there.
func kFlashAttn(kv []ops.Type) kernelFunc {
	return func(r *run, v abi.Values) error {
		srcs, err := r.loadAll(v, []string{"q", "k", "v"}, f32Only, kv, kv)
		if err != nil {
			return err
		}
		if v.Int("has_mask") != 0 {
			mask, err := r.load(v, "mask", f32OrF16...)
			if err != nil {
				return err
			}
			if mask == nil {
				return accessFault(false, 0, "has_mask is set but the mask tensor is absent (data = NULL)")
			}
			srcs = append(srcs, mask)
		}
		dst, err := r.store(v, "dst", ops.F32)
		if err != nil {
			return err
		}
		return r.compute(ops.OpFlashAttnExt, dst, srcs, map[string]any{"scale": v.Float("scale")})
	}
}

// memopsMemset is the memops op_type of MEMSET.
const memopsMemset = 0

// kMemops is memops {op_type, value, dst_ptr, size}: MEMSET fills
// [dst_ptr, dst_ptr+size) with the low byte of value.
func kMemops(r *run, v abi.Values) error {
	if op := v.Uint("op_type"); op != memopsMemset {
		return userError(fmt.Sprintf("memops op_type %d is not MEMSET (0)", op))
	}
	size := v.Uint("size")
	if size == 0 {
		return nil
	}
	b, err := r.mem.bytes(v.Uint("dst_ptr"), size, true, "memset destination")
	if err != nil {
		return err
	}
	c := byte(v.Uint("value"))
	for i := range b {
		b[i] = c
	}
	r.cost.Bytes += int64(size)
	return nil
}

// maxInsts bounds an uberkernel's instruction count (ggml-et's slots start
// at 256 and double as needed; a count past this is a corrupt launch).
const maxInsts = 1 << 24

// uberkernel runs the instructions of an uberkernel launch: it reads
// num_insts records and the params blob from device memory and runs each
// instruction's kernel on its params; an unknown kernel id or a failing
// instruction stops the loop, as the device-side dispatcher returns its
// non-zero rc.
func (r *run) uberkernel(v abi.Values) error {
	n, stride := v.Uint("num_insts"), v.Uint("inst_stride")
	if n > maxInsts {
		return userError(fmt.Sprintf("uberkernel num_insts %d is past %d", n, maxInsts))
	}
	if stride < abi.InstSize || stride > 1<<16 {
		return userError(fmt.Sprintf("uberkernel inst_stride %d, want at least %d", stride, abi.InstSize))
	}
	if n == 0 {
		return nil
	}
	ib, err := r.mem.bytes(v.Uint("insts"), n*stride, false, "uberkernel instruction array")
	if err != nil {
		return err
	}
	insts, err := abi.DecodeInsts(ib, uint32(n), uint32(stride))
	if err != nil {
		return userError(err.Error())
	}
	blobAddr := v.Uint("params_blob")
	blk := r.mem.find(blobAddr)
	if blk == nil {
		return accessFault(false, blobAddr, fmt.Sprintf("uberkernel params blob %#x is not inside any allocation", blobAddr))
	}
	blob, err := r.mem.bytes(blobAddr, blk.end()-blobAddr, false, "uberkernel params blob")
	if err != nil {
		return err
	}
	for i, in := range insts {
		kernel, params, err := r.m.Params(in, blob)
		if err != nil {
			return userError(fmt.Sprintf("uberkernel inst %d: %v", i, err))
		}
		r.insts = append(r.insts, kernel)
		if kernel == "uberkernel" {
			return userError(fmt.Sprintf("uberkernel inst %d: the uberkernel cannot run itself", i))
		}
		if err := r.exec(kernel, params); err != nil {
			return wrapFault(err, fmt.Sprintf("uberkernel inst %d (%s): ", i, kernel))
		}
	}
	return nil
}

// wrapFault prefixes a kernel error's message, keeping its code and
// contexts.
func wrapFault(err error, prefix string) error {
	if f, ok := err.(*fault); ok {
		return &fault{code: f.code, msg: prefix + f.msg, ctx: f.ctx}
	}
	return userError(prefix + err.Error())
}
