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

// The AVX-512 kernels of flashAttnZ (flashattn_amd64.go).

// func faDotsZ4(k unsafe.Pointer, nbk uintptr, nkeys, dk int, q *float32, sc *float32)
//
// For each of nkeys f16 rows at k (nbk bytes apart, dk values, a multiple
// of 32), the dot products with the four float32 rows at q (dk apart),
// stored as four float32 at sc, 16 bytes a key. Row t's sum: lane l of
// Z16+t sums the products of the elements i ≡ l (mod 16) with i/16 even,
// lane l of Z20+t those with i/16 odd (each product of two halves exact),
// then the two are added and the 16 lanes reduced: lanes l and l+8, then
// l and l+4, then the four lanes of each 128-bit block in pairs (0+2,
// 1+3) and the pairs.
TEXT ·faDotsZ4(SB), NOSPLIT, $0-48
	MOVQ  k+0(FP), SI
	MOVQ  nbk+8(FP), R8
	MOVQ  nkeys+16(FP), CX
	MOVQ  dk+24(FP), BX
	MOVQ  q+32(FP), DI
	MOVQ  sc+40(FP), DX
	LEAQ  (DI)(BX*4), R10
	LEAQ  (R10)(BX*4), R11
	LEAQ  (R11)(BX*4), R12
	SHLQ  $1, BX
	MOVQ  R8, R13
	SHLQ  $4, R13
	MOVL  $0x1111, AX
	KMOVW AX, K1

dzkey:
	TESTQ      CX, CX
	JZ         dzdone
	PREFETCHT0 (SI)(R13*1)
	PREFETCHT0 64(SI)(R13*1)
	PREFETCHT0 128(SI)(R13*1)
	PREFETCHT0 192(SI)(R13*1)
	VPXORD     Z16, Z16, Z16
	VPXORD     Z17, Z17, Z17
	VPXORD     Z18, Z18, Z18
	VPXORD     Z19, Z19, Z19
	VPXORD     Z20, Z20, Z20
	VPXORD     Z21, Z21, Z21
	VPXORD     Z22, Z22, Z22
	VPXORD     Z23, Z23, Z23
	XORQ       AX, AX
	XORQ       R14, R14

dzdim:
	CMPQ        AX, BX
	JGE         dzsum
	VCVTPH2PS   (SI)(AX*1), Z0
	VCVTPH2PS   32(SI)(AX*1), Z1
	VFMADD231PS (DI)(R14*1), Z0, Z16
	VFMADD231PS (R10)(R14*1), Z0, Z17
	VFMADD231PS (R11)(R14*1), Z0, Z18
	VFMADD231PS (R12)(R14*1), Z0, Z19
	VFMADD231PS 64(DI)(R14*1), Z1, Z20
	VFMADD231PS 64(R10)(R14*1), Z1, Z21
	VFMADD231PS 64(R11)(R14*1), Z1, Z22
	VFMADD231PS 64(R12)(R14*1), Z1, Z23
	ADDQ        $64, AX
	ADDQ        $128, R14
	JMP         dzdim

dzsum:
	VADDPS      Z20, Z16, Z16
	VADDPS      Z21, Z17, Z17
	VADDPS      Z22, Z18, Z18
	VADDPS      Z23, Z19, Z19
	VSHUFF32X4  $0x44, Z17, Z16, Z20
	VSHUFF32X4  $0xEE, Z17, Z16, Z21
	VADDPS      Z21, Z20, Z20
	VSHUFF32X4  $0x44, Z19, Z18, Z22
	VSHUFF32X4  $0xEE, Z19, Z18, Z23
	VADDPS      Z23, Z22, Z22
	VSHUFF32X4  $0x88, Z22, Z20, Z16
	VSHUFF32X4  $0xDD, Z22, Z20, Z17
	VADDPS      Z17, Z16, Z16
	VPERMILPS   $0x4E, Z16, Z17
	VADDPS      Z17, Z16, Z16
	VPERMILPS   $0xB1, Z16, Z17
	VADDPS      Z17, Z16, Z16
	VCOMPRESSPS Z16, K1, Z16
	VMOVUPS     X16, (DX)
	ADDQ        R8, SI
	ADDQ        $16, DX
	DECQ        CX
	JMP         dzkey

dzdone:
	VZEROUPPER
	RET

// FAZ_ROUND rounds the float32 lanes of z to f16 values (y is z's lower
// half): VCVTPS2PH to nearest even, widened back.
#define FAZ_ROUND(z, y) \
	VCVTPS2PH $0, z, y \
	VCVTPH2PS y, z

// FAZ_MS is the rescaling at a new maximum of one row's 32 accumulators
// (za, zb): acc = f16(acc·ms), ms the float32 at off(R11).
#define FAZ_MS(off, za, zb, ya, yb) \
	VMULPS.BCST off(R11), za, za \
	VMULPS.BCST off(R11), zb, zb \
	FAZ_ROUND(za, ya) \
	FAZ_ROUND(zb, yb)

// FAZ_ADD is a key's update of one row's 32 accumulators with the V
// values in Z0 and Z1: acc = f16(acc + v·vs), v·vs and the sum each
// rounded to float32, vs the float32 at off(R11).
#define FAZ_ADD(off, za, zb, ya, yb) \
	VMULPS.BCST off(R11), Z0, Z2 \
	VMULPS.BCST off(R11), Z1, Z3 \
	VADDPS      Z2, za, za \
	VADDPS      Z3, zb, zb \
	FAZ_ROUND(za, ya) \
	FAZ_ROUND(zb, yb)

// func faAccumZ32(v unsafe.Pointer, nbv uintptr, nkeys int, kind, mode *uint8, fac, acc *float32, accStride int)
//
// The V pass of flashAttnZ over 32 columns of four rows' f16-valued
// float32 accumulators (row t at acc + t·accStride bytes) for nkeys f16
// V rows at v (nbv bytes apart, 32 values each from v): for key j,
// kind[j] = 0 when every row's mode is 1; mode[4j+t] is row t's: 0 (no
// update), 1 (acc = f16(acc + v·vs)) or 2 (acc = f16(acc·ms) first);
// fac[8j+t] is row t's ms, fac[8j+4+t] its vs. The accumulators stay in
// Z16-Z23 over the keys.
TEXT ·faAccumZ32(SB), NOSPLIT, $0-64
	MOVQ    v+0(FP), SI
	MOVQ    nbv+8(FP), R8
	MOVQ    nkeys+16(FP), CX
	MOVQ    kind+24(FP), R9
	MOVQ    mode+32(FP), R10
	MOVQ    fac+40(FP), R11
	MOVQ    acc+48(FP), DI
	MOVQ    accStride+56(FP), DX
	LEAQ    (DI)(DX*2), R12
	ADDQ    DX, R12
	MOVQ    R8, R13
	SHLQ    $4, R13
	VMOVUPS (DI), Z16
	VMOVUPS 64(DI), Z20
	VMOVUPS (DI)(DX*1), Z17
	VMOVUPS 64(DI)(DX*1), Z21
	VMOVUPS (DI)(DX*2), Z18
	VMOVUPS 64(DI)(DX*2), Z22
	VMOVUPS (R12), Z19
	VMOVUPS 64(R12), Z23

azkey:
	TESTQ      CX, CX
	JZ         azdone
	PREFETCHT0 (SI)(R13*1)
	VCVTPH2PS  (SI), Z0
	VCVTPH2PS  32(SI), Z1
	CMPB       (R9), $0
	JNE        azslow
	FAZ_ADD(16, Z16, Z20, Y16, Y20)
	FAZ_ADD(20, Z17, Z21, Y17, Y21)
	FAZ_ADD(24, Z18, Z22, Y18, Y22)
	FAZ_ADD(28, Z19, Z23, Y19, Y23)

aznext:
	ADDQ R8, SI
	INCQ R9
	ADDQ $4, R10
	ADDQ $32, R11
	DECQ CX
	JMP  azkey

azslow:
	MOVBLZX 0(R10), AX
	TESTL   AX, AX
	JZ      azrow1
	CMPL    AX, $2
	JNE     azadd0
	FAZ_MS(0, Z16, Z20, Y16, Y20)

azadd0:
	FAZ_ADD(16, Z16, Z20, Y16, Y20)

azrow1:
	MOVBLZX 1(R10), AX
	TESTL   AX, AX
	JZ      azrow2
	CMPL    AX, $2
	JNE     azadd1
	FAZ_MS(4, Z17, Z21, Y17, Y21)

azadd1:
	FAZ_ADD(20, Z17, Z21, Y17, Y21)

azrow2:
	MOVBLZX 2(R10), AX
	TESTL   AX, AX
	JZ      azrow3
	CMPL    AX, $2
	JNE     azadd2
	FAZ_MS(8, Z18, Z22, Y18, Y22)

azadd2:
	FAZ_ADD(24, Z18, Z22, Y18, Y22)

azrow3:
	MOVBLZX 3(R10), AX
	TESTL   AX, AX
	JZ      aznext
	CMPL    AX, $2
	JNE     azadd3
	FAZ_MS(12, Z19, Z23, Y19, Y23)

azadd3:
	FAZ_ADD(28, Z19, Z23, Y19, Y23)
	JMP aznext

azdone:
	VMOVUPS Z16, (DI)
	VMOVUPS Z20, 64(DI)
	VMOVUPS Z17, (DI)(DX*1)
	VMOVUPS Z21, 64(DI)(DX*1)
	VMOVUPS Z18, (DI)(DX*2)
	VMOVUPS Z22, 64(DI)(DX*2)
	VMOVUPS Z19, (R12)
	VMOVUPS Z23, 64(R12)
	VZEROUPPER
	RET
