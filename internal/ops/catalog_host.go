package ops

// The ops of ggml that ggml-et does not implement (none of them is in its
// graph_compute switch, and its supports_op answers false for every case
// of test-backend-ops). et models them so that every test-backend-ops
// case string and every node of a model graph parses and plans: the
// planner says "not implemented by ggml-et" and the node runs on the host
// when it has reference math (HostMath); an op without it reports
// NoHostMathError. Shapes and types follow the op's constructor in
// ggml/src/ggml.c (ggml d99724f), so the graph equals ggml's.

// The ops ggml-et does not implement.
const (
	OpDup                  Op = "dup"
	OpAddID                Op = "add_id"
	OpAcc                  Op = "acc"
	OpDiv                  Op = "div"
	OpSqrt                 Op = "sqrt"
	OpLog                  Op = "log"
	OpSin                  Op = "sin"
	OpCos                  Op = "cos"
	OpSum                  Op = "sum"
	OpArgmax               Op = "argmax"
	OpCountEqual           Op = "count_equal"
	OpRepeatBack           Op = "repeat_back"
	OpSiluBack             Op = "silu_back"
	OpRMSNormBack          Op = "rms_norm_back"
	OpOutProd              Op = "out_prod"
	OpGetRowsBack          Op = "get_rows_back"
	OpDiagMaskInf          Op = "diag_mask_inf"
	OpSoftMaxBack          Op = "soft_max_back"
	OpRopeBack             Op = "rope_back"
	OpConvTranspose1D      Op = "conv_transpose_1d"
	OpIm2col3D             Op = "im2col_3d"
	OpCol2im1D             Op = "col2im_1d"
	OpConv3D               Op = "conv_3d"
	OpConv2DDW             Op = "conv_2d_dw"
	OpConvTranspose2D      Op = "conv_transpose_2d"
	OpPool1D               Op = "pool_1d"
	OpPool2D               Op = "pool_2d"
	OpUpscale              Op = "upscale"
	OpPadReflect1D         Op = "pad_reflect_1d"
	OpRoll                 Op = "roll"
	OpArange               Op = "arange"
	OpTimestepEmbedding    Op = "timestep_embedding"
	OpArgsort              Op = "argsort"
	OpTopK                 Op = "top_k"
	OpLeakyRelu            Op = "leaky_relu"
	OpGatedLinearAttn      Op = "gated_linear_attn"
	OpLightningIndexer     Op = "lightning_indexer"
	OpDSV4HCComb           Op = "dsv4_hc_comb"
	OpDSV4HCPre            Op = "dsv4_hc_pre"
	OpDSV4HCPost           Op = "dsv4_hc_post"
	OpXielu                Op = "xielu"
	OpCrossEntropyLoss     Op = "cross_entropy_loss"
	OpCrossEntropyLossBack Op = "cross_entropy_loss_back"
	OpOptStepAdamW         Op = "opt_step_adamw"
	OpOptStepSGD           Op = "opt_step_sgd"
)

// PoolOps are the pool_1d / pool_2d kinds, in ggml_op_pool order.
var PoolOps = []string{"max", "avg"}

// ScaleModes are upscale's interpolation modes, in ggml_scale_mode order.
var ScaleModes = []string{"nearest", "bilinear", "bicubic"}

// SortOrders are argsort's orders, in ggml_sort_order order.
var SortOrders = []string{"asc", "desc"}

func intSpec(name string, def int64, doc string) ParamSpec {
	return ParamSpec{Name: name, Kind: KindInt, Default: def, Doc: doc}
}

func floatSpec(name string, def float64, doc string) ParamSpec {
	return ParamSpec{Name: name, Kind: KindFloat, Default: def, Doc: doc}
}

// conv3Specs are the stride, padding and dilation parameters of the 3-D
// convolutions (index 0 is width, 1 height, 2 depth).
func conv3Specs() []ParamSpec {
	var out []ParamSpec
	for _, k := range []struct {
		p    string
		def  int64
		what string
	}{{"s", 1, "stride"}, {"p", 0, "zero padding"}, {"d", 1, "dilation"}} {
		for i, axis := range []string{"width", "height", "depth"} {
			out = append(out, intSpec(k.p+string(rune('0'+i)), k.def, k.what+" along "+axis))
		}
	}
	return out
}

var ropeBackSpecs = []ParamSpec{
	{Name: "n_dims", Kind: KindInt, Required: true, Doc: "number of rotated dimensions"},
	{Name: "mode", Kind: KindInt, Default: int64(0), Doc: "ggml rope mode bits (0 normal, 2 neox, 8 mrope, 24 vision, 40 imrope)"},
	{Name: "n_ctx_orig", Kind: KindInt, Default: int64(0), Doc: "original context length (YaRN)"},
	floatSpec("freq_base", 10000, "frequency base"),
	floatSpec("freq_scale", 1, "frequency scale"),
	floatSpec("ext_factor", 0, "YaRN extrapolation mix"),
	floatSpec("attn_factor", 1, "magnitude scale"),
	floatSpec("beta_fast", 32, "YaRN low correction dim"),
	floatSpec("beta_slow", 1, "YaRN high correction dim"),
	{Name: "sections", Kind: KindInts, MinLen: 4, MaxLen: 4, Default: []int64{0, 0, 0, 0}, Doc: "mrope sections"},
	intSpec("n_offs", 0, "offset of the rotated dims window (ggml_rope_set_offset)"),
}

// xieluDefaults are the op_params of test_xielu's ggml_xielu(a, 4, 20, 0.5, 1e-7).
var xieluDefaults = XieluOpParams(4, 20, 0.5, 1e-7)

var HostCatalog = []OpInfo{
	{
		Name: OpDup, Doc: "copy of x, same type and shape (ggml_dup)",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferDup, HostMath: true,
	},
	{
		Name: OpAddID, Doc: "dst[:, i1, i2] = a[:, i1, i2] + b[:, ids[i1, i2]] (MoE expert bias)",
		Srcs: []string{"a", "b", "ids"}, MinSrc: 3, Infer: inferAddID, HostMath: true,
	},
	{
		Name: OpAcc, Doc: "a with b added into a strided view of it (ggml_acc)",
		Srcs: []string{"a", "b"}, MinSrc: 2,
		Params: []ParamSpec{
			intSpec("nb1", 0, "view byte stride of dim 1 (0: a's)"),
			intSpec("nb2", 0, "view byte stride of dim 2 (0: a's)"),
			intSpec("nb3", 0, "view byte stride of dim 3 (0: a's)"),
			intSpec("offset", 0, "view byte offset into a"),
		},
		Infer: inferAcc, HostMath: true,
	},
	{
		Name: OpDiv, Doc: "a / b, b repeated over a",
		Srcs: []string{"a", "b"}, MinSrc: 2, Infer: inferBinary(OpDiv), HostMath: true,
	},
	{Name: OpSqrt, Doc: "√x elementwise", Srcs: []string{"x"}, MinSrc: 1, Infer: inferMath(OpSqrt), HostMath: true},
	{Name: OpLog, Doc: "ln x elementwise", Srcs: []string{"x"}, MinSrc: 1, Infer: inferMath(OpLog), HostMath: true},
	{Name: OpSin, Doc: "sin x elementwise", Srcs: []string{"x"}, MinSrc: 1, Infer: inferMath(OpSin), HostMath: true},
	{Name: OpCos, Doc: "cos x elementwise", Srcs: []string{"x"}, MinSrc: 1, Infer: inferMath(OpCos), HostMath: true},
	{
		Name: OpSum, Doc: "Σ of all elements: [1]",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferSum, HostMath: true,
	},
	{
		Name: OpArgmax, Doc: "index of the largest value of each row of a matrix: i32 [ne1]",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferArgmax, HostMath: true,
	},
	{
		Name: OpCountEqual, Doc: "number of equal elements of two i32 tensors: i64 [1]",
		Srcs: []string{"a", "b"}, MinSrc: 2, Infer: inferCountEqual, HostMath: true,
	},
	{
		Name: OpRepeatBack, Doc: "x summed down to shape ne (the gradient of repeat)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "ne", Kind: KindInts, Required: true, MinLen: 1, MaxLen: 4, Doc: "target shape, each dividing x's"}},
		Infer:  inferRepeatBack, HostMath: true,
	},
	{
		Name: OpSiluBack, Doc: "dy·silu'(x) elementwise (the gradient of silu)",
		Srcs: []string{"dy", "x"}, MinSrc: 2, Infer: inferSiluBack, HostMath: true,
	},
	{
		Name: OpRMSNormBack, Doc: "the gradient of rms_norm: dz (dst grad) and x (its input) per row",
		Srcs: []string{"dz", "x"}, MinSrc: 2, Params: []ParamSpec{epsSpec},
		Infer: inferRMSNormBack, HostMath: true,
	},
	{
		Name: OpOutProd, Doc: "outer product: dst[i, j] = Σ_k a[i, k]·b[j, k], a broadcast over b in dims 2 and 3",
		Srcs: []string{"a", "b"}, MinSrc: 2, Infer: inferOutProd, HostMath: true,
	},
	{
		Name: OpGetRowsBack, Doc: "the gradient of get_rows: grad rows added into an f32 [ne0, ne1] of zeros at rows",
		Srcs: []string{"grad", "rows"}, MinSrc: 2,
		Params: []ParamSpec{{Name: "ne", Kind: KindInts, Required: true, MinLen: 2, MaxLen: 2, Doc: "result shape [ne0, ne1] (ggml's third argument)"}},
		Infer:  inferGetRowsBack, HostMath: true,
	},
	{
		Name: OpDiagMaskInf, Doc: "x with -inf above the diagonal shifted by n_past (i0 > n_past + i1)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{intSpec("n_past", 0, "diagonal shift")},
		Infer:  inferDiagMaskInf, HostMath: true,
	},
	{
		Name: OpSoftMaxBack, Doc: "the gradient of soft_max: scale·(dy - y·dy)·y per row",
		Srcs: []string{"dy", "y"}, MinSrc: 2,
		Params: []ParamSpec{floatSpec("scale", 1, "soft_max's scale"), floatSpec("max_bias", 0, "soft_max's ALiBi maximum bias")},
		Infer:  inferSoftMaxBack, HostMath: true,
	},
	{
		Name: OpRopeBack, Doc: "the gradient of rope (rope with the rotation reversed)",
		Srcs: []string{"dy", "pos", "freq_factors"}, MinSrc: 2, Params: ropeBackSpecs,
		Infer: inferRopeBack, HostMath: true,
	},
	{
		Name: OpConvTranspose1D, Doc: "1-D transposed convolution: kernel [K, OC, IC] * input [L, IC] -> f32 [(L-1)·s0 + K, OC, N]",
		Srcs: []string{"kernel", "input"}, MinSrc: 2,
		Params: []ParamSpec{intSpec("s0", 1, "stride"), intSpec("p0", 0, "padding (ggml: only 0)"), intSpec("d0", 1, "dilation (ggml: only 1)")},
		Infer:  inferConvTranspose1D, HostMath: true,
	},
	{
		Name: OpIm2col3D, Doc: "3-D convolution patches: [KW·KH·KD·IC, OW, OH, OD·N]",
		Srcs: []string{"kernel", "input"}, MinSrc: 2,
		Params: append(conv3Specs(),
			ParamSpec{Name: "IC", Kind: KindInt, Required: true, Doc: "input channels (input.ne3 = N·IC)"},
			ParamSpec{Name: "dst_type", Kind: KindType, Default: F32, Doc: "result type, f32 or f16"}),
		Infer: inferIm2col3D, HostMath: true,
	},
	{
		Name: OpCol2im1D, Doc: "overlap-add of columns [K·OC, T_in] into [T_out, OC] (the adjoint of 1-D im2col)",
		Srcs: []string{"cols"}, MinSrc: 1,
		Params: []ParamSpec{intSpec("s0", 1, "stride"), {Name: "oc", Kind: KindInt, Required: true, Doc: "output channels"}, intSpec("p0", 0, "padding cropped from both sides")},
		Infer:  inferCol2im1D, HostMath: true,
	},
	{
		Name: OpConv3D, Doc: "direct 3-D convolution: kernel [KW, KH, KD, IC·OC] * input [W, H, D, IC·N] -> f32 [OW, OH, OD, OC·N]",
		Srcs: []string{"kernel", "input"}, MinSrc: 2,
		Params: append(conv3Specs(),
			ParamSpec{Name: "IC", Kind: KindInt, Required: true, Doc: "input channels"},
			ParamSpec{Name: "N", Kind: KindInt, Required: true, Doc: "batch size"},
			ParamSpec{Name: "OC", Kind: KindInt, Required: true, Doc: "output channels"}),
		Infer: inferConv3D, HostMath: true, Flops: flopsConv3D,
	},
	{
		Name: OpConv2DDW, Doc: "depthwise 2-D convolution: kernel [KW, KH, 1, C] * input [W, H, C, N] -> [OW, OH, C, N]",
		Srcs: []string{"kernel", "input"}, MinSrc: 2, Params: convSpecs(),
		Infer: inferConv2DDW, HostMath: true,
	},
	{
		Name: OpConvTranspose2D, Doc: "2-D transposed convolution, no padding: kernel [KW, KH, OC, IC] * input [W, H, IC, N] -> f32",
		Srcs: []string{"kernel", "input"}, MinSrc: 2,
		Params: []ParamSpec{intSpec("stride", 1, "stride along x and y")},
		Infer:  inferConvTranspose2D, HostMath: true,
	},
	{
		Name: OpPool1D, Doc: "max or average pooling along ne0: f32 [(ne0 + 2·p0 - k0)/s0 + 1, ...]",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "op", Kind: KindEnum, Default: "avg", Enum: PoolOps, Doc: "max or avg"},
			intSpec("k0", 1, "window"), intSpec("s0", 1, "stride"), intSpec("p0", 0, "padding"),
		},
		Infer: inferPool1D, HostMath: true,
	},
	{
		Name: OpPool2D, Doc: "max or average pooling over ne0, ne1: f32",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "op", Kind: KindEnum, Default: "avg", Enum: PoolOps, Doc: "max or avg"},
			intSpec("k0", 1, "window along x"), intSpec("k1", 1, "window along y"),
			intSpec("s0", 1, "stride along x"), intSpec("s1", 1, "stride along y"),
			intSpec("p0", 0, "padding along x"), intSpec("p1", 0, "padding along y"),
		},
		Infer: inferPool2D, HostMath: true,
	},
	{
		Name: OpUpscale, Doc: "x resampled to shape ne (ggml_interpolate)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "ne", Kind: KindInts, Required: true, MinLen: 4, MaxLen: 4, Doc: "result shape"},
			{Name: "mode", Kind: KindEnum, Default: "nearest", Enum: ScaleModes, Doc: "nearest, bilinear or bicubic"},
			{Name: "align_corners", Kind: KindBool, Default: false, Doc: "GGML_SCALE_FLAG_ALIGN_CORNERS"},
			{Name: "antialias", Kind: KindBool, Default: false, Doc: "GGML_SCALE_FLAG_ANTIALIAS (bilinear only)"},
		},
		Infer: inferUpscale, HostMath: true,
	},
	{
		Name: OpPadReflect1D, Doc: "reflection padding of ne0: p0 before, p1 after",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{intSpec("p0", 0, "values before"), intSpec("p1", 0, "values after")},
		Infer:  inferPadReflect1D, HostMath: true,
	},
	{
		Name: OpRoll, Doc: "x rotated by shift elements along each dim",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "shift", Kind: KindInts, MinLen: 4, MaxLen: 4, Default: []int64{0, 0, 0, 0}, Doc: "shift per dim in ne order"}},
		Infer:  inferRoll, HostMath: true,
	},
	{
		Name: OpArange, Doc: "f32 [ceil((stop - start)/step)]: start, start + step, ... (no sources)",
		Srcs: []string{}, MinSrc: 0,
		Params: []ParamSpec{
			floatSpec("start", 0, "first value"),
			{Name: "stop", Kind: KindFloat, Required: true, Doc: "end (exclusive)"},
			floatSpec("step", 1, "increment"),
		},
		Infer: inferArange, HostMath: true,
	},
	{
		Name: OpTimestepEmbedding, Doc: "sinusoidal embedding of timesteps x [n]: f32 [dim, n]",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "dim", Kind: KindInt, Required: true, Doc: "embedding size"}, intSpec("max_period", 10000, "longest period")},
		Infer:  inferTimestepEmbedding, HostMath: true,
	},
	{
		Name: OpArgsort, Doc: "indices that sort each row: i32, x's shape",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "order", Kind: KindEnum, Default: "asc", Enum: SortOrders, Doc: "asc or desc"}},
		Infer:  inferArgsort, HostMath: true,
	},
	{
		Name: OpTopK, Doc: "indices of the k largest values of each row: i32 [k, ...] (in no particular order)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "k", Kind: KindInt, Required: true, Doc: "number of indices per row"}},
		Infer:  inferTopK, HostMath: true,
	},
	{
		Name: OpLeakyRelu, Doc: "x if x > 0 else slope·x, elementwise",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{floatSpec("negative_slope", 0.01, "slope for x < 0")},
		Infer:  inferMath(OpLeakyRelu), HostMath: true,
	},
	{
		Name: OpGatedLinearAttn, Doc: "gated linear attention; result [S·H, T + S·n_seqs]: y rows, then new state",
		Srcs: []string{"k", "v", "q", "g", "state"}, MinSrc: 5,
		Params: []ParamSpec{{Name: "scale", Kind: KindFloat, Required: true, Doc: "q scale, usually 1/sqrt(S)"}},
		Infer:  inferGatedLinearAttn, HostMath: true,
	},
	{
		Name: OpLightningIndexer, Doc: "DeepSeek lightning indexer scores: f32 [kv, n_q, 1, n_s]",
		Srcs: []string{"q", "k", "weights", "mask"}, MinSrc: 4, Infer: inferLightningIndexer, HostMath: true,
		Flops: flopsLightningIndexer,
	},
	{
		Name: OpDSV4HCComb, Doc: "DeepSeek-V4 hyper-connection combine matrices: f32 [4, 4, n_tokens]",
		Srcs: []string{"mixes", "scale", "base"}, MinSrc: 3,
		Params: []ParamSpec{floatSpec("eps", 1e-6, "epsilon"), intSpec("n_iter", 1, "Sinkhorn iterations")},
		Infer:  inferDSV4HCComb, HostMath: true,
	},
	{
		Name: OpDSV4HCPre, Doc: "DeepSeek-V4 hyper-connection pre-mix: f32 [n_embd, n_tokens]",
		Srcs: []string{"x", "weights"}, MinSrc: 2, Infer: inferDSV4HCPre, HostMath: true,
	},
	{
		Name: OpDSV4HCPost, Doc: "DeepSeek-V4 hyper-connection post-mix: f32 [n_embd, hc, n_tokens]",
		Srcs: []string{"x", "residual", "post", "comb"}, MinSrc: 4, Infer: inferDSV4HCPost, HostMath: true,
	},
	{
		Name: OpXielu, Doc: "xIELU activation (ggml_xielu, GGML_UNARY_OP_XIELU)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			floatSpec("alpha_n", float64(xieluDefaults[0]), "op_params[1]: beta + softplus(alpha_n) (default: test-backend-ops' alpha_n = 4)"),
			floatSpec("alpha_p", float64(xieluDefaults[1]), "op_params[2]: softplus(alpha_p) (default: alpha_p = 20)"),
			floatSpec("beta", float64(xieluDefaults[2]), "op_params[3]: linear coefficient"),
			floatSpec("eps", float64(xieluDefaults[3]), "op_params[4]: negative-side clamp"),
		},
		Infer: inferMath(OpXielu), HostMath: true,
	},
	{
		Name: OpCrossEntropyLoss, Doc: "cross-entropy of softmax(logits) against labels: [1]",
		Srcs: []string{"logits", "labels"}, MinSrc: 2, Infer: inferCrossEntropyLoss, HostMath: true,
	},
	{
		Name: OpCrossEntropyLossBack, Doc: "the gradient of cross_entropy_loss: logits' shape",
		Srcs: []string{"grad", "logits", "labels"}, MinSrc: 3, Infer: inferCrossEntropyLossBack, HostMath: true,
	},
	{
		Name: OpOptStepAdamW, Doc: "one AdamW step, written into a; params f32 [7]",
		Srcs: []string{"a", "grad", "m", "v", "params"}, MinSrc: 5, Infer: inferOptStep(OpOptStepAdamW, 7), HostMath: true,
	},
	{
		Name: OpOptStepSGD, Doc: "one SGD step, written into a; params f32 [2]",
		Srcs: []string{"a", "grad", "params"}, MinSrc: 3, Infer: inferOptStep(OpOptStepSGD, 2), HostMath: true,
	},
}
