package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// refTable is the reference math of every op that has it, by op name,
// and the bound form of the ops that have one (BindFunc).
var refTable = map[ops.Op]refEntry{
	ops.OpMulMat:               {ref: (*Kernels).refMulMat},
	ops.OpAdd:                  {ref: (*Kernels).refAdd},
	ops.OpSub:                  {ref: (*Kernels).refSub},
	ops.OpMul:                  {ref: (*Kernels).refMul},
	ops.OpRMSNorm:              {ref: (*Kernels).refRMSNorm},
	ops.OpNorm:                 {ref: (*Kernels).refNorm},
	ops.OpL2Norm:               {ref: (*Kernels).refL2Norm},
	ops.OpScale:                {ref: plain(refScale)},
	ops.OpSoftMax:              {ref: (*Kernels).refSoftMax},
	ops.OpRope:                 {ref: (*Kernels).refRope},
	ops.OpUnary:                {ref: (*Kernels).refUnary},
	ops.OpGLU:                  {ref: (*Kernels).refGLU},
	ops.OpGetRows:              {ref: (*Kernels).refGetRows},
	ops.OpSetRows:              {ref: (*Kernels).refSetRows, bind: (*Kernels).bindSetRows},
	ops.OpCpy:                  {ref: (*Kernels).refCpy},
	ops.OpCont:                 {ref: plain(refCont)},
	ops.OpFlashAttnExt:         {ref: (*Kernels).refFlashAttn},
	ops.OpSqr:                  {ref: plain(refSqr)},
	ops.OpSumRows:              {ref: plain(refSumRows)},
	ops.OpMean:                 {ref: plain(refMean)},
	ops.OpClamp:                {ref: plain(refClamp)},
	ops.OpCumsum:               {ref: plain(refCumsum)},
	ops.OpMulMatID:             {ref: (*Kernels).refMulMatID},
	ops.OpGroupNorm:            {ref: plain(refGroupNorm)},
	ops.OpIm2col:               {ref: plain(refIm2col)},
	ops.OpConv2D:               {ref: (*Kernels).refConv2D},
	ops.OpConcat:               {ref: plain(refConcat)},
	ops.OpRepeat:               {ref: plain(refRepeat)},
	ops.OpPad:                  {ref: plain(refPad)},
	ops.OpFill:                 {ref: plain(refFill)},
	ops.OpDiag:                 {ref: plain(refDiag)},
	ops.OpTri:                  {ref: plain(refTri)},
	ops.OpSolveTri:             {ref: plain(refSolveTri)},
	ops.OpSet:                  {ref: plain(refSet)},
	ops.OpSSMConv:              {ref: plain(refSSMConv)},
	ops.OpSSMScan:              {ref: plain(refSSMScan)},
	ops.OpRWKVWKV6:             {ref: plain(refWKV6)},
	ops.OpRWKVWKV7:             {ref: plain(refWKV7)},
	ops.OpGatedDeltaNet:        {ref: plain(refGatedDeltaNet)},
	ops.OpDup:                  {ref: plain(refDup)},
	ops.OpAddID:                {ref: plain(refAddID)},
	ops.OpAcc:                  {ref: plain(refAcc)},
	ops.OpDiv:                  {ref: plain(refDiv)},
	ops.OpSqrt:                 {ref: plain(refMath(sqrtf32))},
	ops.OpLog:                  {ref: plain(refMath(cpu.Logf32))},
	ops.OpSin:                  {ref: plain(refMath(sinf32))},
	ops.OpCos:                  {ref: plain(refMath(cosf32))},
	ops.OpSum:                  {ref: plain(refSum)},
	ops.OpArgmax:               {ref: plain(refArgmax)},
	ops.OpCountEqual:           {ref: plain(refCountEqual)},
	ops.OpRepeatBack:           {ref: plain(refRepeatBack)},
	ops.OpSiluBack:             {ref: plain(refSiluBack)},
	ops.OpRMSNormBack:          {ref: plain(refRMSNormBack)},
	ops.OpOutProd:              {ref: plain(refOutProd)},
	ops.OpGetRowsBack:          {ref: plain(refGetRowsBack)},
	ops.OpDiagMaskInf:          {ref: plain(refDiagMaskInf)},
	ops.OpSoftMaxBack:          {ref: plain(refSoftMaxBack)},
	ops.OpRopeBack:             {ref: (*Kernels).refRopeBack},
	ops.OpConvTranspose1D:      {ref: plain(refConvTranspose1D)},
	ops.OpIm2col3D:             {ref: plain(refIm2col3D)},
	ops.OpCol2im1D:             {ref: plain(refCol2im1D)},
	ops.OpConv3D:               {ref: plain(refConv3D)},
	ops.OpConv2DDW:             {ref: plain(refConv2DDW)},
	ops.OpConvTranspose2D:      {ref: plain(refConvTranspose2D)},
	ops.OpPool1D:               {ref: plain(refPool1D)},
	ops.OpPool2D:               {ref: plain(refPool2D)},
	ops.OpUpscale:              {ref: plain(refUpscale)},
	ops.OpPadReflect1D:         {ref: plain(refPadReflect1D)},
	ops.OpRoll:                 {ref: plain(refRoll)},
	ops.OpArange:               {ref: plain(refArange)},
	ops.OpTimestepEmbedding:    {ref: plain(refTimestepEmbedding)},
	ops.OpArgsort:              {ref: plain(refArgsort)},
	ops.OpTopK:                 {ref: plain(refTopK)},
	ops.OpLeakyRelu:            {ref: plain(refLeakyRelu)},
	ops.OpGatedLinearAttn:      {ref: plain(refGatedLinearAttn)},
	ops.OpLightningIndexer:     {ref: plain(refLightningIndexer)},
	ops.OpDSV4HCComb:           {ref: plain(refDSV4HCComb)},
	ops.OpDSV4HCPre:            {ref: plain(refDSV4HCPre)},
	ops.OpDSV4HCPost:           {ref: plain(refDSV4HCPost)},
	ops.OpXielu:                {ref: plain(refXielu)},
	ops.OpCrossEntropyLoss:     {ref: plain(refCrossEntropyLoss)},
	ops.OpCrossEntropyLossBack: {ref: plain(refCrossEntropyLossBack)},
	ops.OpOptStepAdamW:         {ref: plain(refOptStepAdamW)},
	ops.OpOptStepSGD:           {ref: plain(refOptStepSGD)},
}

// refEntry is one op's reference math.
type refEntry struct {
	ref  mathFunc
	bind func(ks *Kernels, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) func() error
}

// mathFunc is an op's reference math run with a kernel set: a method of
// *Kernels for the ops whose math has CPU kernels, plain(f) for the rest.
type mathFunc func(ks *Kernels, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error

// plain is the mathFunc of reference math that runs no CPU kernel.
func plain(f RefFunc) mathFunc {
	return func(_ *Kernels, dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error { return f(dst, srcs, p) }
}
