package refmath

import (
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Run validates the sources of the op info against dst (type and shape from Infer) and
// runs the reference math into dst. p must be normalized (Normalize).
func (ks *Kernels) Run(info *ops.OpInfo, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	if info.View {
		return ops.ShapeErr(info.Name, "is a view op: use ViewOf, there is nothing to compute")
	}
	t, ne, err := info.Shape(srcs, p)
	if err != nil {
		return err
	}
	if dst == nil {
		return ops.ShapeErr(info.Name, "no destination tensor")
	}
	if dst.Type != t || dst.Ne != ne {
		return ops.ShapeErr(info.Name, "destination is %s %s, want %s %s", dst.Type, dst.ShapeString(), t, ops.ShapeString(ne))
	}
	if dst.Nb[0] != uint64(dst.Type.TypeSize()) {
		return ops.ShapeErr(info.Name, "destination nb0 = %d, want the element size %d", dst.Nb[0], dst.Type.TypeSize())
	}
	if end := dst.Offs + dst.NBytes(); end > uint64(len(dst.Buf)) {
		return ops.ShapeErr(info.Name, "destination needs %d bytes, its buffer has %d", end, len(dst.Buf))
	}
	for i, s := range srcs {
		if end := s.Offs + s.NBytes(); end > uint64(len(s.Buf)) {
			return ops.ShapeErr(info.Name, "source %s needs %d bytes, its buffer has %d", info.Srcs[i], end, len(s.Buf))
		}
	}
	e, ok := refTable[info.Name]
	if !ok {
		return &ops.NoHostMathError{What: "op " + strings.ToUpper(string(info.Name))}
	}
	if err := ops.CodecsOf(dst.Type, srcs); err != nil {
		return err
	}
	return e.ref(ks, dst, srcs, p)
}

// Compute allocates, for the op info, a contiguous result and runs the op (or, for a view
// op, returns the view). p must be normalized.
func (ks *Kernels) Compute(info *ops.OpInfo, srcs []*ops.Tensor, p ops.Params) (*ops.Tensor, error) {
	dst, err := info.NewResult(srcs, p)
	if err != nil || info.View {
		return dst, err
	}
	e, ok := refTable[info.Name]
	if !ok {
		return nil, &ops.NoHostMathError{What: "op " + strings.ToUpper(string(info.Name))}
	}
	if err := e.ref(ks, dst, srcs, p); err != nil {
		return nil, err
	}
	return dst, nil
}

// Ref is the reference math of an op run with ks, or nil where it has
// none (a view op, or an op without HostMath).
func (ks *Kernels) Ref(op ops.Op) RefFunc {
	e, ok := refTable[op]
	if !ok {
		return nil
	}
	return func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error { return e.ref(ks, dst, srcs, p) }
}

// Bind is the bound form of an op's reference math (BindFunc) run with
// ks, or nil where it has none.
func (ks *Kernels) Bind(op ops.Op) BindFunc {
	e := refTable[op]
	if e.bind == nil {
		return nil
	}
	return func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) func() error { return e.bind(ks, dst, srcs, p) }
}

// Run is Run with this CPU's kernels (Host).
func Run(info *ops.OpInfo, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return host.Load().Run(info, dst, srcs, p)
}

// Compute is Compute with this CPU's kernels (Host).
func Compute(info *ops.OpInfo, srcs []*ops.Tensor, p ops.Params) (*ops.Tensor, error) {
	return host.Load().Compute(info, srcs, p)
}

// Ref is Ref with this CPU's kernels (Host).
func Ref(op ops.Op) RefFunc { return host.Load().Ref(op) }

// Bind is Bind with this CPU's kernels (Host).
func Bind(op ops.Op) BindFunc { return host.Load().Bind(op) }

// RefFunc is an op's reference math with ggml CPU semantics. It writes
// dst through dst.Nb and reads the sources through their Nb, so strided
// views work on both sides; it does not allocate dst. Call it through
// Run, which validates shapes first.
type RefFunc func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error

// BindFunc fixes an op's reference math to these tensors and normalized
// params, the work that follows from their shapes, strides and storage
// done once: the returned function is Ref(dst, srcs, p) with the same
// results and errors, reading the tensors' data at every call. It
// returns nil where the op has no faster bound form for the tensors.
// A device that runs one launch many times (the reference device's
// replays) calls it instead of Ref while the tensors' storage lives.
type BindFunc func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) func() error
