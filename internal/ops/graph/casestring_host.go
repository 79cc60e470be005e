package graph

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders for the ops ggml-et does not implement
// (ops.hostCatalog): keys, defaults and graphs follow the test-backend-ops
// test classes of ggml d99724f's tests/test-backend-ops.cpp (named in
// each builder's comment). Inputs follow the class's
// initialize_tensors where et's inits can express it; where they cannot,
// the comment says what et draws instead. Shape keys default to the
// constructor's defaults, except batch and broadcast repeats (bs, nr),
// which default to 1 as in casestring.go.

// hostCaseBuilders are registered in caseBuilders (casestring.go).
var hostCaseBuilders = map[string]func(*csBuilder){
	"DIV":                func(b *csBuilder) { buildBinary(b, ops.OpDiv) },
	"SQRT":               func(b *csBuilder) { buildMath(b, ops.OpSqrt, []int64{10, 3, 3, 2}, "uniform(50, 100)") },
	"LOG":                func(b *csBuilder) { buildMath(b, ops.OpLog, []int64{10, 5, 4, 3}, "uniform(0.9, 1.1)") },
	"SIN":                func(b *csBuilder) { buildMath(b, ops.OpSin, []int64{10, 2, 2, 2}, "uniform(-6.5, 6.5)") },
	"COS":                func(b *csBuilder) { buildMath(b, ops.OpCos, []int64{10, 2, 2, 2}, "uniform(-6.5, 6.5)") },
	"XIELU":              buildXielu,
	"LEAKY_RELU":         buildLeakyRelu,
	"SUM":                buildSum,
	"DUP":                buildDup,
	"ARGMAX":             buildArgmax,
	"COUNT_EQUAL":        buildCountEqual,
	"ARGSORT":            buildArgsort,
	"TOP_K":              buildTopK,
	"ACC":                buildAcc,
	"ADD_ID":             buildAddID,
	"ARANGE":             buildArange,
	"DIAG_MASK_INF":      buildDiagMaskInf,
	"TIMESTEP_EMBEDDING": buildTimestepEmbedding,
	"PAD_REFLECT_1D":     buildPadReflect1D,
	"ROLL":               buildRoll,
	"OUT_PROD":           buildOutProd,

	"SILU_BACK":               buildSiluBack,
	"RMS_NORM_BACK":           buildRMSNormBack,
	"SOFT_MAX_BACK":           buildSoftMaxBack,
	"REPEAT_BACK":             buildRepeatBack,
	"GET_ROWS_BACK":           buildGetRowsBack,
	"ROPE_BACK":               buildRopeBack,
	"CROSS_ENTROPY_LOSS":      buildCrossEntropyLoss,
	"CROSS_ENTROPY_LOSS_BACK": buildCrossEntropyLossBack,
	"OPT_STEP_ADAMW":          buildOptStepAdamW,
	"OPT_STEP_SGD":            buildOptStepSGD,

	"CONV_TRANSPOSE_1D": buildConvTranspose1D,
	"CONV_TRANSPOSE_2D": buildConvTranspose2D,
	"CONV_2D_DW":        buildConv2DDW,
	"CONV_3D":           buildConv3D,
	"IM2COL_3D":         buildIm2col3D,
	"COL2IM_1D":         buildCol2im1D,
	"POOL_1D":           buildPool1D,
	"POOL_2D":           buildPool2D,
	"UPSCALE":           buildUpscale,

	"GATED_LINEAR_ATTN": buildGatedLinearAttn,
	"LIGHTNING_INDEXER": buildLightningIndexer,
	"DSV4_HC_COMB":      buildDSV4HCComb,
	"DSV4_HC_PRE":       buildDSV4HCPre,
	"DSV4_HC_POST":      buildDSV4HCPost,
}

// required reads an integer key the test class's constructor has no
// default for.
func (b *csBuilder) required(key string) int64 {
	if _, ok := b.kv[key]; !ok {
		b.get(key)
		b.fail("%s: missing (the test class has no default for it)", key)
		return 1
	}
	return b.int(key, 0)
}

// permuteKey reads an optional permute=[4] key: nil when absent or all
// zeros (test-backend-ops prints it only when it is not), else the axes.
func (b *csBuilder) permuteKey(key string) []int64 {
	p := b.ints(key, 0, 0, 0, 0)
	if p[0]+p[1]+p[2]+p[3] == 0 {
		return nil
	}
	return p
}

// nameValue reads a key printed as a name (or its ggml integer value):
// names[i] is value i.
func (b *csBuilder) nameValue(key, def string, names []string) string {
	values := map[int64]string{}
	for i, n := range names {
		values[int64(i)] = n
	}
	return b.enumKey(key, def, values)
}

// scaleMode reads test-backend-ops' ggml_scale_mode: "bilinear",
// "bicubic|align_corners", "bilinear|antialias", or the integer value.
func (b *csBuilder) scaleMode(key string) (mode string, align, antialias bool) {
	v, ok := b.get(key)
	if !ok {
		return "nearest", false, false
	}
	var n int64
	if _, err := fmt.Sscanf(v, "%d", &n); err == nil && fmt.Sprint(n) == v {
		if n&0xFF >= int64(len(ops.ScaleModes)) || n&^0x3FF != 0 {
			b.fail("%s: unknown scale mode %d", key, n)
			return "nearest", false, false
		}
		return ops.ScaleModes[n&0xFF], n&(1<<8) != 0, n&(1<<9) != 0
	}
	parts := strings.Split(v, "|")
	mode = ""
	for _, m := range ops.ScaleModes {
		if parts[0] == m {
			mode = m
		}
	}
	if mode == "" {
		b.fail("%s: unknown scale mode %q (want %s, optionally |align_corners or |antialias)", key, parts[0], strings.Join(ops.ScaleModes, ", "))
		return "nearest", false, false
	}
	for _, f := range parts[1:] {
		switch f {
		case "align_corners":
			align = true
		case "antialias":
			antialias = true
		default:
			b.fail("%s: unknown scale flag %q (want align_corners or antialias)", key, f)
		}
	}
	return mode, align, antialias
}
