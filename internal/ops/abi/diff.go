package abi

import (
	"fmt"
	"math"
)

// FieldDiff is one field of a params struct whose decoded value differs
// from the planned one.
type FieldDiff struct {
	// Field is the struct field, with the tensor member for a tensor
	// ("src0.ne[1]", "dst.op", "eps").
	Field   string `json:"field"`
	Planned string `json:"planned"`
	Decoded string `json:"decoded"`
}

func (d FieldDiff) String() string {
	return fmt.Sprintf("%s: planned %s, decoded %s", d.Field, d.Planned, d.Decoded)
}

// Diff compares, field by field of layout l, the values a launch was
// planned with and the values decoded from its params bytes, and lists
// every difference (nil when they agree). A tensor's name is compared as
// the device sees it (truncated to MaxName-1 bytes); floats by their bits.
func Diff(l *Layout, planned, decoded Values) []FieldDiff {
	var out []FieldDiff
	add := func(field string, p, d any) {
		ps, ds := fmt.Sprint(p), fmt.Sprint(d)
		if ps != ds {
			out = append(out, FieldDiff{Field: field, Planned: ps, Decoded: ds})
		}
	}
	for _, f := range l.Fields {
		switch f.Kind.class() {
		case classTensor:
			p, d := planned.Tensors[f.Name], decoded.Tensors[f.Name]
			if p.Absent() && d.Absent() {
				continue
			}
			if p.Absent() != d.Absent() {
				add(f.Name+".data", fmt.Sprintf("%#x", p.Data), fmt.Sprintf("%#x", d.Data))
				continue
			}
			add(f.Name+".type", p.Type, d.Type)
			for i := range p.Ne {
				add(fmt.Sprintf("%s.ne[%d]", f.Name, i), p.Ne[i], d.Ne[i])
				add(fmt.Sprintf("%s.nb[%d]", f.Name, i), p.Nb[i], d.Nb[i])
			}
			add(f.Name+".op", p.Op, d.Op)
			for i := range p.OpParams {
				add(fmt.Sprintf("%s.op_params[%d]", f.Name, i), p.OpParams[i], d.OpParams[i])
			}
			add(f.Name+".data", fmt.Sprintf("%#x", p.Data), fmt.Sprintf("%#x", d.Data))
			pn := p.Name
			if len(pn) > MaxName-1 {
				pn = pn[:MaxName-1]
			}
			add(f.Name+".name", fmt.Sprintf("%q", pn), fmt.Sprintf("%q", d.Name))
		case classFloat:
			p, d := planned.Floats[f.Name], decoded.Floats[f.Name]
			if math.Float32bits(p) != math.Float32bits(d) {
				out = append(out, FieldDiff{Field: f.Name, Planned: fmt.Sprint(p), Decoded: fmt.Sprint(d)})
			}
		case classInt:
			add(f.Name, planned.Ints[f.Name], decoded.Ints[f.Name])
		default:
			add(f.Name, planned.Uints[f.Name], decoded.Uints[f.Name])
		}
	}
	return out
}

// Decoded is the params of one kernel run as a device decoded them: the
// reference device records one per kernel it runs (one per instruction
// of an uberkernel launch), so that a run can check them against the plan.
type Decoded struct {
	Kernel string
	Values Values
}
