package plan

import "strings"

// Reason is one failed supports_op condition: a code that says which
// condition failed, what it is about (Subject: a tensor label, a param,
// an op), the value found (Have) and what ggml-et wants (Want), and the
// sentence tables show (Text, e.g. "ne0 % 16 != 0 (ne0 = 100)").
// Suggestions are keyed on the code and read Subject/Have/Want, never the
// sentence, so rewording a message cannot break them.
type Reason struct {
	Code    ReasonCode `json:"code"`
	Subject string     `json:"subject,omitempty"`
	Have    string     `json:"have,omitempty"`
	Want    string     `json:"want,omitempty"`
	Text    string     `json:"text"`
}

// String is the sentence.
func (r Reason) String() string { return r.Text }

// ReasonCode names a kind of failed condition.
type ReasonCode string

// The codes of the shared checker helpers (any op), then the op-specific
// ones that carry a suggestion. Every other op-specific condition is
// CodeCondition.
const (
	// CodeType: tensor Subject has type Have, not one of Want (a
	// comma-separated list).
	CodeType ReasonCode = "type"
	// CodeNotContiguous, CodeRowsNotContiguous, CodeRowElems: tensor
	// Subject is not contiguous (whole, by rows, within a row).
	CodeNotContiguous     ReasonCode = "not_contiguous"
	CodeRowsNotContiguous ReasonCode = "rows_not_contiguous"
	CodeRowElems          ReasonCode = "row_elements_not_contiguous"
	// CodeStride: a stride of tensor Subject is not the dense one (Have,
	// Want) or the strides are not ordered.
	CodeStride ReasonCode = "stride"
	// CodeMultiple: Subject (a dim, a stride, "nelements") is Have, not a
	// multiple of Want.
	CodeMultiple ReasonCode = "multiple"
	// CodeEqual: a shape relation Subject does not hold (Have != Want).
	CodeEqual ReasonCode = "equal"
	// CodeNoKernel: ggml-et has no kernel for op (or unary/glu op)
	// Subject: it runs on the host.
	CodeNoKernel ReasonCode = "no_kernel"
	// CodeNotModelled: ggml-et dispatches op Subject but et does not model
	// its supports_op yet.
	CodeNotModelled ReasonCode = "not_modelled"
	// CodeCondition is any other op-specific condition (Text says which).
	CodeCondition ReasonCode = "condition"
	// CodeMax: Subject is Have, more than the Want ggml-et's kernel takes
	// (rope n_dims, flash_attn head sizes).
	CodeMax ReasonCode = "max"
	// CodeNonZero: param Subject is Have, where ggml-et needs 0
	// (max_bias, logit_softcap, view offsets, pad lp0/rp0).
	CodeNonZero ReasonCode = "non_zero"
	// CodeMode: mode or variant Subject is Have, not one of Want (rope
	// mode, cpy type pair, pad mode, solve_tri variant, set in place).
	CodeMode ReasonCode = "mode"
	// CodePadNe0: the result's ne0 Have is neither a multiple nor a
	// divisor of 16 (pad).
	CodePadNe0 ReasonCode = "pad_ne0"
	// CodeDilation, CodeBatch, CodeBudget: conv_2d's dilation, batch
	// size and L2 scratchpad budget.
	CodeDilation ReasonCode = "dilation"
	CodeBatch    ReasonCode = "batch"
	CodeBudget   ReasonCode = "budget"
	// CodeAliased: dst shares src0's memory (cont).
	CodeAliased ReasonCode = "aliased"
)

// Texts are the sentences of reasons, in order.
func Texts(rs []Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Text
	}
	return out
}

// JoinTexts is the sentences joined by "; ".
func JoinTexts(rs []Reason) string { return strings.Join(Texts(rs), "; ") }
