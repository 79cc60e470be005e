package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Suggestions for failed supports_op conditions (`et ops explain`): for
// each reason a rule gives, the nearest change that makes the condition
// pass, e.g. "ne0 % 16 != 0 (ne0 = 100)" → "pad ne0 to 112 (a multiple of
// 16)". A rule can carry its own suggestions (opSuggesters, keyed by op
// like the rules table); they are tried before the generic ones, which
// match the reason formats of the checker helpers (typeIn, contiguous,
// mod, nb0 ...).

// Suggestion pairs a failed condition with its suggested fix.
type Suggestion struct {
	// Reason is the failed condition, as Supports names it.
	Reason string
	// Fix is the suggested change, or "" when et knows none (a shape
	// relation of the op itself, say).
	Fix string
}

// suggester turns a reason that matches re into a fix; fix gets the
// submatches (index 0 is the whole reason) and returns "" to pass.
type suggester struct {
	re  *regexp.Regexp
	fix func(m []string) string
}

func sug(pattern string, fix func(m []string) string) suggester {
	return suggester{re: regexp.MustCompile(pattern), fix: fix}
}

func fixed1(s string) func([]string) string { return func([]string) string { return s } }

// opSuggesters are the suggestions specific to one op's rules.
var opSuggesters = map[ops.Op][]suggester{
	ops.OpFlashAttnExt: {
		sug(`^[kv] type \S+ is not f16`, fixed1("cpy K and V to f16")),
		sug(`^max_bias != 0`, fixed1("set max_bias to 0 (ggml-et has no ALiBi)")),
		sug(`^logit_softcap != 0`, fixed1("set logit_softcap to 0 (apply the softcap outside the op)")),
		sug(`^d[kv] > (\d+)`, func(m []string) string { return "use head sizes of at most " + m[1] }),
	},
	ops.OpSetRows: {
		sug(`^src1 type i32 is not i64`, fixed1("use i64 row indices")),
	},
	ops.OpCpy: {
		sug(`^cpy (\S+) -> (\S+) not in`, func(m []string) string {
			if isQuantName(m[2]) {
				return "cpy to f32 or f16 (quantizing cpy runs on the host)"
			}
			return "use f32 -> f32, f16 -> f16 or f32 -> f16"
		}),
	},
	ops.OpRope: {
		sug(`^n_dims > (\d+)`, func(m []string) string { return "rotate at most " + m[1] + " dims" }),
		sug(`^src0\.view_offs != 0`, fixed1("insert a cont on src0 (rope_f32 needs view offset 0)")),
		sug(`^rope mode \S+ not in`, fixed1("use mode normal, neox or imrope")),
		sug(`^imrope sections\[0\.\.2\] are all zero`, fixed1("set sections, e.g. [n_dims/2, n_dims/4, n_dims/4, 0]")),
	},
	ops.OpPad: {
		sug(`^ne0 % 16 != 0 and 16 % ne0 != 0 \(ne0 = (\d+)\)$`, func(m []string) string {
			n, _ := strconv.ParseInt(m[1], 10, 64)
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
		}),
		sug(`^lp0 or rp0 != 0`, fixed1("pad only dims 1..3 (lp0 = rp0 = 0); widen ne0 with a concat instead")),
		sug(`^circular padding`, fixed1("use zero padding")),
	},
	ops.OpSet: {
		sug(`^set is not in place`, fixed1("use ggml_set_inplace (inplace: true)")),
		sug(`^(nb1|nb2|nb3|offset) % 64 != 0 \(\S+ = (\d+)\)$`, func(m []string) string {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			return fmt.Sprintf("align %s to %d bytes (a multiple of 64)", m[1], roundUp(n, 64))
		}),
	},
	ops.OpConv2D: {
		sug(`^dilation != 1`, fixed1("use d0 = d1 = 1 (or im2col + mul_mat)")),
		sug(`^N != 1`, fixed1("convolve one image per launch (N = 1)")),
		sug(`^L2 scratchpad budget`, fixed1("split the output channels or rows over several launches")),
	},
	ops.OpSolveTri: {
		sug(`^only left, lower, non-unit`, fixed1("use left = true, lower = true, uni = false")),
	},
	ops.OpCont: {
		sug(`^dst aliases src0`, fixed1("cont into a new tensor")),
	},
}

// genericSuggesters match the reasons of the shared checker helpers.
var genericSuggesters = []suggester{
	sug(`^src0\.ne0 != 1 and src0\.ne0 % 16 != 0 \(ne0 = (\d+)\)$`, func(m []string) string {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return fmt.Sprintf("pad src0.ne0 to %d (a multiple of 16)", roundUp(n, 16))
	}),
	// mod: "<what> % <k> != 0 (<what> = <v>)".
	sug(`^([^%!=]+?) % (\d+) != 0 \([^=]+ = (-?\d+)\)$`, func(m []string) string {
		k, _ := strconv.ParseInt(m[2], 10, 64)
		v, _ := strconv.ParseInt(m[3], 10, 64)
		if k <= 0 || v < 0 {
			return ""
		}
		next := roundUp(v, k)
		if next == 0 {
			next = k
		}
		what := m[1]
		switch {
		case what == "nelements":
			return fmt.Sprintf("pad so that the element count is a multiple of %d (next: %d)", k, next)
		case strings.HasPrefix(what, "nb") || what == "offset":
			return fmt.Sprintf("align %s to %d bytes (a multiple of %d)", what, next, k)
		}
		return fmt.Sprintf("pad %s to %d (a multiple of %d)", what, next, k)
	}),
	// typeIn: "<label> type <t> is not <want>[ (why)]".
	sug(`^(\S+) type (\S+) is not (\S+)`, func(m []string) string { return typeFix(m[1], m[2], []string{m[3]}) }),
	// typeIn: "<label> type <t> not in {a, b}".
	sug(`^(\S+) type (\S+) not in \{(.*)\}$`, func(m []string) string {
		return typeFix(m[1], m[2], strings.Split(m[3], ", "))
	}),
	// contiguous, contiguous1, contiguousRows, nb0, nb0Elem, rowsDense.
	sug(`^(\S+) (?:is not contiguous|rows are not contiguous|elements of a row are not contiguous)`, func(m []string) string {
		return contFix(m[1])
	}),
	sug(`^(\S+)\.nb[01] != `, func(m []string) string { return contFix(m[1]) }),
	sug(`^(\S+) strides are not ordered`, func(m []string) string { return contFix(m[1]) }),
	sug(`^src1\.nb0 != 4 and src1\.ne0 != 1`, fixed1("insert a cont on src1")),
	sug(`^(?:unary|glu) op \S+ is not accepted by ggml-et`, fixed1("none: ggml-et has no kernel for it (it runs on the host)")),
	sug(`^op (\S+) is not implemented by ggml-et`, func(m []string) string {
		if info, ok := ops.Lookup(m[1]); ok && info.Ref == nil && !info.View {
			return "none: ggml-et has no kernel for it, and et has no host math for it (the case is skipped)"
		}
		return "none: ggml-et has no kernel for it (it runs on the host)"
	}),
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
func Suggest(op ops.Op, reason string) string {
	for _, list := range [][]suggester{opSuggesters[op], genericSuggesters} {
		for _, s := range list {
			if m := s.re.FindStringSubmatch(reason); m != nil {
				if fix := s.fix(m); fix != "" {
					return fix
				}
			}
		}
	}
	return ""
}

// Suggestions pairs every reason with its fix, in order.
func Suggestions(op ops.Op, reasons []string) []Suggestion {
	out := make([]Suggestion, len(reasons))
	for i, r := range reasons {
		out[i] = Suggestion{Reason: r, Fix: Suggest(op, r)}
	}
	return out
}
