#include "textflag.h"

// FA_UPDATE_MS and FA_UPDATE_V are the steps of faMadF16C (both) and
// faAddF16C (the second) on the eight accumulators in Y0, with ms in Y14,
// vs in Y15 and the eight halves of V at (SI)(AX*2).
#define FA_UPDATE_MS \
	VMULPS    Y14, Y0, Y0 \
	VCVTPS2PH $0, Y0, X0 \
	VCVTPH2PS X0, Y0

#define FA_UPDATE_V \
	VCVTPH2PS (SI)(AX*2), Y1 \
	VMULPS    Y15, Y1, Y1 \
	VADDPS    Y1, Y0, Y0 \
	VCVTPS2PH $0, Y0, X0 \
	VCVTPH2PS X0, Y0

// func faMadF16C(acc *float32, v unsafe.Pointer, ms, vs float32, n int)
TEXT ·faMadF16C(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         v+8(FP), SI
	VBROADCASTSS ms+16(FP), Y14
	VBROADCASTSS vs+20(FP), Y15
	MOVQ         n+24(FP), CX
	XORQ         AX, AX

madloop:
	CMPQ    AX, CX
	JGE     maddone
	VMOVUPS (DI)(AX*4), Y0
	FA_UPDATE_MS
	FA_UPDATE_V
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     madloop

maddone:
	VZEROUPPER
	RET

// func faAddF16C(acc *float32, v unsafe.Pointer, vs float32, n int)
TEXT ·faAddF16C(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         v+8(FP), SI
	VBROADCASTSS vs+16(FP), Y15
	MOVQ         n+24(FP), CX
	XORQ         AX, AX

addloop:
	CMPQ    AX, CX
	JGE     adddone
	VMOVUPS (DI)(AX*4), Y0
	FA_UPDATE_V
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     addloop

adddone:
	VZEROUPPER
	RET

// func prefetchLines(p unsafe.Pointer, n int)
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	ADDQ SI, CX

pfloop:
	CMPQ       SI, CX
	JGE        pfdone
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	JMP        pfloop

pfdone:
	RET
