package exec

import (
	"fmt"
	"slices"

	"github.com/ainekko/et/internal/ops/refmath"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/plan"
)

// The judging of a run, test-backend-ops' way: each compared output is
// judged against the reference math of the step that produced it,
// applied to that step's inputs as the device had them when the step was
// launched. Device error then does not accumulate through the graph; the
// accumulated error is the drift (OutputResult.Drift), reported apart.
//
// An input's content at the launch of step S is what the last step
// before S that wrote its memory (W) left there, or what was uploaded.
// judge decides, before the run, where the host gets it:
//
//   - nothing writes the memory from S on: the device memory after the
//     run (or the leaf's host tensor, for a leaf nothing ever writes);
//   - it is written from S on (an in-place node, S itself or a later one,
//     overwrites it), and nothing wrote it before S: the bytes uploaded,
//     kept from the upload;
//   - W ran in an earlier launch segment (or is a fallback): a download
//     just before S's segment is launched;
//   - W ran earlier in S's own uberkernel segment, where the host cannot
//     look between the two: W's reference (W is then judged as well, on
//     its own inputs), which is what a correct W would have left.
//
// The output itself is read after the run, or, when a later step writes
// the same memory (in-place chains), just after S's segment. An output
// overwritten later in its own uberkernel segment can only be read as
// the segment left it: it is judged against the reference of the last
// step of the segment that writes that memory.

type srcKind uint8

const (
	srcHost   srcKind = iota // the leaf's host tensor: uploaded and never written
	srcFinal                 // the device memory after the run
	srcKept                  // the bytes uploaded, kept
	srcBefore                // downloaded before step at (a segment's first step, or a fallback)
	srcAfter                 // downloaded after step at (a segment's last step, or a fallback)
	srcLocal                 // the reference of step at
)

type dataSrc struct {
	kind srcKind
	at   int
}

type judge struct {
	p *plan.Plan
	// judged are the steps whose reference is computed, ascending.
	judged []int
	// src says, per (step, base value), where the content of that input
	// memory at the step's launch comes from.
	src map[[2]int]dataSrc
	// got says, per output value, where the device's value comes from
	// (srcFinal, srcAfter or srcLocal), and ref which step's reference
	// it is judged against.
	got map[int]dataSrc
	ref map[int]int
	// before and after list, per step, the bases to download before and
	// after the segment (or fallback) that starts or ends at that step.
	before, after map[int][]int
	// keep marks the bases whose uploaded bytes are kept (kept).
	keep map[int]bool
	kept map[int][]byte
	// snapBefore and snapAfter hold the downloads by (step, base).
	snapBefore, snapAfter map[[2]int][]byte
	// local holds each judged step's reference: the memory of the base
	// its result lives in, as the step should leave it.
	local map[int][]byte
	final map[int][]byte
}

// producerOf finds the step that computed value v (-1 for a leaf or a
// view of a leaf).
func producerOf(p *plan.Plan, v int) int {
	g := p.Graph
	for {
		val := &g.Values[v]
		if val.Node < 0 {
			return -1
		}
		n := g.Nodes[val.Node]
		if !n.Info.View {
			break
		}
		v = n.Src[0]
	}
	for i := range p.Steps {
		if p.Steps[i].Out(g) == v {
			return i
		}
	}
	return -1
}

// stepInputs are the values a step reads: its nodes' sources, without a
// fused intermediate (computed inside the launch).
func stepInputs(g *plan.Graph, s *plan.Step) []int {
	var out []int
	for k, ni := range s.Nodes {
		for _, sv := range g.Nodes[ni].Src {
			if k > 0 && sv == g.Nodes[s.Nodes[0]].Out {
				continue
			}
			out = append(out, sv)
		}
	}
	return out
}

func newJudge(p *plan.Plan) *judge {
	g := p.Graph
	j := &judge{p: p, src: map[[2]int]dataSrc{}, got: map[int]dataSrc{}, ref: map[int]int{},
		before: map[int][]int{}, after: map[int][]int{}, keep: map[int]bool{}, kept: map[int][]byte{},
		snapBefore: map[[2]int][]byte{}, snapAfter: map[[2]int][]byte{}, local: map[int][]byte{}, final: map[int][]byte{}}
	// Segment of each step: launch segments, and each fallback alone.
	seg, first, last := map[int]int{}, map[int]int{}, map[int]int{}
	for k, sg := range p.Segments() {
		for _, si := range sg {
			seg[si], first[si], last[si] = k, sg[0], sg[len(sg)-1]
		}
	}
	writers := map[int][]int{} // base -> writing steps, ascending
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Kind == plan.StepFallback {
			seg[i], first[i], last[i] = -1-i, i, i
		}
		if s.Kind != plan.StepLaunch && s.Kind != plan.StepFallback {
			continue
		}
		if o := s.Out(g); o >= 0 {
			b := g.Values[o].Base
			writers[b] = append(writers[b], i)
		}
	}
	add := func(m map[int][]int, at, b int) {
		if !slices.Contains(m[at], b) {
			m[at] = append(m[at], b)
		}
	}
	judged := map[int]bool{}
	var work []int
	mark := func(si int) {
		if !judged[si] {
			judged[si] = true
			work = append(work, si)
		}
	}
	for _, o := range g.Outputs {
		si := producerOf(p, o)
		if si < 0 {
			continue
		}
		b := g.Values[o].Base
		j.ref[o] = si
		j.got[o] = dataSrc{kind: srcFinal}
		for _, w := range writers[b] {
			if w <= si {
				continue
			}
			// The memory is written again after si: read it after si's
			// segment, or, inside it, as the segment's last writer left it.
			if seg[w] != seg[si] {
				j.got[o] = dataSrc{kind: srcAfter, at: last[si]}
				add(j.after, last[si], b)
				break
			}
			j.ref[o] = w
		}
		mark(j.ref[o])
	}
	for len(work) > 0 {
		si := work[len(work)-1]
		work = work[:len(work)-1]
		s := &p.Steps[si]
		for _, v := range stepInputs(g, s) {
			b := g.Values[v].Base
			key := [2]int{si, b}
			if _, done := j.src[key]; done {
				continue
			}
			w, later := -1, false
			for _, x := range writers[b] {
				if x < si {
					w = x
				} else {
					later = true
				}
			}
			switch {
			case !later && w < 0 && g.Values[b].Node < 0:
				j.src[key] = dataSrc{kind: srcHost}
			case !later:
				j.src[key] = dataSrc{kind: srcFinal}
			case w < 0:
				j.src[key] = dataSrc{kind: srcKept}
				j.keep[b] = true
			case seg[w] != seg[si]:
				j.src[key] = dataSrc{kind: srcBefore, at: first[si]}
				add(j.before, first[si], b)
			default:
				j.src[key] = dataSrc{kind: srcLocal, at: w}
				mark(w)
			}
		}
	}
	for si := range judged {
		j.judged = append(j.judged, si)
	}
	slices.Sort(j.judged)
	return j
}

// header is value v's tensor over buf (a copy of its base's memory).
func header(g *plan.Graph, v int, buf []byte) *ops.Tensor {
	t := *g.Values[v].T
	t.Buf = buf
	return &t
}

// inputBytes is the memory of base b as step si's launch found it.
func (r *runner) inputBytes(si, b int) ([]byte, error) {
	j := r.j
	src, ok := j.src[[2]int{si, b}]
	if !ok {
		return nil, fmt.Errorf("step %d: no source for %s", si, r.p.Graph.Values[b].Name)
	}
	switch src.kind {
	case srcHost:
		return r.p.Graph.Values[b].T.Buf, nil
	case srcKept:
		if buf, ok := j.kept[b]; ok {
			return buf, nil
		}
	case srcBefore:
		if buf, ok := j.snapBefore[[2]int{src.at, b}]; ok {
			return buf, nil
		}
	case srcLocal:
		if buf, ok := j.local[src.at]; ok {
			return buf, nil
		}
	case srcFinal:
		return r.finalBytes(b)
	}
	return nil, fmt.Errorf("step %d: %s was not captured", si, r.p.Graph.Values[b].Name)
}

func (r *runner) finalBytes(b int) ([]byte, error) {
	if buf, ok := r.j.final[b]; ok {
		return buf, nil
	}
	buf, err := r.download(b)
	if err != nil {
		return nil, err
	}
	r.j.final[b] = buf
	return buf, nil
}

// localReferences computes the reference of every judged step on its
// own inputs, in step order (a step's reference can be a later one's
// input).
func (r *runner) localReferences() error {
	g := r.p.Graph
	for _, si := range r.j.judged {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		s := &r.p.Steps[si]
		out := s.Out(g)
		ob := g.Values[out].Base
		buf := make([]byte, r.size[ob])
		if _, aliased := r.j.src[[2]int{si, ob}]; aliased {
			// In place: the result's memory starts as the source.
			prev, err := r.inputBytes(si, ob)
			if err != nil {
				return err
			}
			buf = slices.Clone(prev)
		}
		var inter *ops.Tensor
		for k, ni := range s.Nodes {
			n := g.Nodes[ni]
			srcs := make([]*ops.Tensor, len(n.Src))
			for i, sv := range n.Src {
				if k > 0 && sv == g.Nodes[s.Nodes[0]].Out {
					srcs[i] = inter
					continue
				}
				in, err := r.inputBytes(si, g.Values[sv].Base)
				if err != nil {
					return err
				}
				srcs[i] = header(g, sv, in)
			}
			var dst *ops.Tensor
			if k == len(s.Nodes)-1 {
				dst = header(g, n.Out, buf)
			} else {
				t := g.Values[n.Out].T
				inter = ops.New(t.Type, t.Ne[:]...)
				dst = inter
			}
			if err := runNode(n, dst, srcs); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
		r.j.local[si] = buf
	}
	return nil
}

// gotTensor is output o as the device produced it.
func (j *judge) gotTensor(r *runner, o int) (*ops.Tensor, error) {
	g := r.p.Graph
	b := g.Values[o].Base
	src := j.got[o]
	if src.kind == srcAfter {
		buf, ok := j.snapAfter[[2]int{src.at, b}]
		if !ok {
			return nil, fmt.Errorf("output %s was not captured", g.Values[o].Name)
		}
		return header(g, o, buf), nil
	}
	buf, err := r.finalBytes(b)
	if err != nil {
		return nil, err
	}
	return header(g, o, buf), nil
}

// chainedAt gives, per output produced by a step, the node after which
// its chained reference is taken: the last node of the step whose result
// the output is read as (ref).
func (j *judge) chainedAt() map[int]int {
	at := map[int]int{}
	for o, si := range j.ref {
		nodes := j.p.Steps[si].Nodes
		at[o] = nodes[len(nodes)-1]
	}
	return at
}

// want is the reference output o is judged against.
func (j *judge) want(o int) *ops.Tensor {
	return header(j.p.Graph, o, j.local[j.ref[o]])
}

// runNode runs n's reference math into dst. When dst shares its memory
// with a source (an in-place node), it computes into a copy first, so
// that no op reads what it already wrote, as a correct in-place kernel
// behaves.
func runNode(n plan.Node, dst *ops.Tensor, srcs []*ops.Tensor) error {
	for _, s := range srcs {
		if s != nil && sameMemory(s.Buf, dst.Buf) {
			scratch := slices.Clone(dst.Buf)
			d := *dst
			d.Buf = scratch
			if err := refmath.Run(n.Info, &d, srcs, n.Params); err != nil {
				return err
			}
			copy(dst.Buf, scratch)
			return nil
		}
	}
	return refmath.Run(n.Info, dst, srcs, n.Params)
}

func sameMemory(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
