package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Suggestions for failed supports_op conditions (`et ops explain`): for
// each reason a rule gives, the nearest change that makes the condition
// pass, e.g. "ne0 % 16 != 0 (ne0 = 100)" → "pad ne0 to 112 (a multiple of
// 16)". They are keyed on the reason's code, first per op (opSuggesters),
// then for any op (genericSuggesters), and read the reason's subject and
// values, never its sentence.

// Suggestion pairs a failed condition with its suggested fix.
type Suggestion struct {
	// Reason is the failed condition, as Supports gives it.
	Reason Reason
	// Fix is the suggested change, or "" when et knows none (a shape
	// relation of the op itself, say).
	Fix string
}

// suggester returns the fix for a reason of its code, or "" to pass.
type suggester func(r Reason) string

func fixed1(s string) suggester { return func(Reason) string { return s } }

// subjectIs gives fix when the reason's subject is one of subjects.
func subjectIs(fix string, subjects ...string) suggester {
	return func(r Reason) string {
		for _, s := range subjects {
			if r.Subject == s {
				return fix
			}
		}
		return ""
	}
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// opSuggesters are the suggestions specific to one op's conditions.
var opSuggesters = map[ops.Op]map[ReasonCode]suggester{
	ops.OpFlashAttnExt: {
		CodeType: subjectIs("cpy K and V to f16", "k", "v"),
		CodeNonZero: func(r Reason) string {
			switch r.Subject {
			case "max_bias":
				return "set max_bias to 0 (ggml-et has no ALiBi)"
			case "logit_softcap":
				return "set logit_softcap to 0 (apply the softcap outside the op)"
			}
			return ""
		},
		CodeMax: func(r Reason) string { return "use head sizes of at most " + r.Want },
	},
	ops.OpSetRows: {
		CodeType: func(r Reason) string {
			if r.Subject == "src1" && r.Have == "i32" {
				return "use i64 row indices"
			}
			return ""
		},
	},
	ops.OpCpy: {
		CodeMode: func(r Reason) string {
			if _, dst, ok := strings.Cut(r.Have, " -> "); ok && isQuantName(dst) {
				return "cpy to f32 or f16 (quantizing cpy runs on the host)"
			}
			return "use f32 -> f32, f16 -> f16 or f32 -> f16"
		},
	},
	ops.OpRope: {
		CodeMax: func(r Reason) string { return "rotate at most " + r.Want + " dims" },
		CodeNonZero: func(r Reason) string {
			switch r.Subject {
			case "src0.view_offs":
				return "insert a cont on src0 (rope_f32 needs view offset 0)"
			case "sections":
				return "set sections, e.g. [n_dims/2, n_dims/4, n_dims/4, 0]"
			}
			return ""
		},
		CodeMode: fixed1("use mode normal, neox or imrope"),
	},
	ops.OpPad: {
		CodePadNe0: func(r Reason) string {
			n := atoi(r.Have)
			if n > 0 && n < 16 {
				d := int64(16)
				for _, c := range []int64{1, 2, 4, 8} {
					if c >= n {
						d = c
						break
					}
				}
				return fmt.Sprintf("pad the result's ne0 to %d (a divisor of 16)", d)
			}
			return fmt.Sprintf("pad the result's ne0 to %d (a multiple of 16)", roundUp(n, 16))
		},
		CodeNonZero: fixed1("pad only dims 1..3 (lp0 = rp0 = 0); widen ne0 with a concat instead"),
		CodeMode:    fixed1("use zero padding"),
	},
	ops.OpSet: {
		CodeMode: fixed1("use ggml_set_inplace (inplace: true)"),
	},
	ops.OpConv2D: {
		CodeDilation: fixed1("use d0 = d1 = 1 (or im2col + mul_mat)"),
		CodeBatch:    fixed1("convolve one image per launch (N = 1)"),
		CodeBudget:   fixed1("split the output channels or rows over several launches"),
	},
	ops.OpSolveTri: {
		CodeMode: fixed1("use left = true, lower = true, uni = false"),
	},
	ops.OpCont: {
		CodeAliased: fixed1("cont into a new tensor"),
	},
}

// genericSuggesters are keyed on the codes of the shared checker helpers.
var genericSuggesters = map[ReasonCode]suggester{
	CodeMultiple: func(r Reason) string {
		k, v := atoi(r.Want), atoi(r.Have)
		if k <= 0 || v < 0 {
			return ""
		}
		next := roundUp(v, k)
		if next == 0 {
			next = k
		}
		what := r.Subject
		switch {
		case what == "nelements":
			return fmt.Sprintf("pad so that the element count is a multiple of %d (next: %d)", k, next)
		case strings.HasPrefix(what, "nb") || what == "offset":
			return fmt.Sprintf("align %s to %d bytes (a multiple of %d)", what, next, k)
		}
		return fmt.Sprintf("pad %s to %d (a multiple of %d)", what, next, k)
	},
	CodeType:              func(r Reason) string { return typeFix(r.Subject, r.Have, strings.Split(r.Want, ",")) },
	CodeNotContiguous:     func(r Reason) string { return contFix(r.Subject) },
	CodeRowsNotContiguous: func(r Reason) string { return contFix(r.Subject) },
	CodeRowElems:          func(r Reason) string { return contFix(r.Subject) },
	CodeStride:            func(r Reason) string { return contFix(r.Subject) },
	CodeNoKernel: func(r Reason) string {
		if info, ok := ops.Lookup(r.Subject); ok && !info.HostMath && !info.View {
			return "none: ggml-et has no kernel for it, and et has no host math for it (the case is skipped)"
		}
		return "none: ggml-et has no kernel for it (it runs on the host)"
	},
}

func roundUp(v, k int64) int64 { return (v + k - 1) / k * k }

func isQuantName(t string) bool { return strings.HasPrefix(strings.ToLower(t), "q") }

// typeFix suggests how to give a tensor one of the wanted types.
func typeFix(label, have string, want []string) string {
	var quants, floats []string
	for _, w := range want {
		switch {
		case isQuantName(w):
			quants = append(quants, w)
		case w == "f32" || w == "f16":
			floats = append(floats, w)
		}
	}
	if label == "dst" {
		return "make the result " + strings.Join(want, " or ")
	}
	if isQuantName(have) && len(quants) > 0 {
		return "quantize " + label + " as " + strings.Join(quants, " or ")
	}
	if len(floats) > 0 {
		return "cpy " + label + " to " + floats[0]
	}
	if len(quants) > 0 {
		return "quantize " + label + " as " + strings.Join(quants, " or ")
	}
	return "give " + label + " type " + strings.Join(want, " or ")
}

// contFix suggests making a tensor contiguous.
func contFix(label string) string {
	if label == "dst" {
		return "make the destination contiguous"
	}
	return "insert a cont on " + label
}

// Suggest returns the fix for one failed condition of an op node, or ""
// when et knows none.
func Suggest(op ops.Op, r Reason) string {
	if s, ok := opSuggesters[op][r.Code]; ok {
		if fix := s(r); fix != "" {
			return fix
		}
	}
	if s, ok := genericSuggesters[r.Code]; ok {
		return s(r)
	}
	return ""
}

// Suggestions pairs every reason with its fix, in order.
func Suggestions(op ops.Op, reasons []Reason) []Suggestion {
	out := make([]Suggestion, len(reasons))
	for i, r := range reasons {
		out[i] = Suggestion{Reason: r, Fix: Suggest(op, r)}
	}
	return out
}
