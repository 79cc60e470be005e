#include "textflag.h"

// The constants of ggml's vector exp (silu.go), as float32 bits.
DATA siluK<>+0(SB)/4, $0x4b400000  // shift, 1.5·2^23
DATA siluK<>+4(SB)/4, $0x3fb8aa3b  // log2(e)
DATA siluK<>+8(SB)/4, $0xbf317200  // -ln2, high part
DATA siluK<>+12(SB)/4, $0xb5bfbe8e // -ln2, low part
DATA siluK<>+16(SB)/4, $0x3c072010 // c5
DATA siluK<>+20(SB)/4, $0x3d2b9f17 // c4
DATA siluK<>+24(SB)/4, $0x3e2aaf33 // c3
DATA siluK<>+28(SB)/4, $0x3efffedb // c2
DATA siluK<>+32(SB)/4, $0x3f7ffff6 // c1
DATA siluK<>+36(SB)/4, $0x3f800000 // 1
DATA siluK<>+40(SB)/4, $0x43400000 // 192
DATA siluK<>+44(SB)/4, $0xc3400000 // -192
DATA siluK<>+48(SB)/4, $0x7f800000 // +Inf
DATA siluK<>+52(SB)/4, $127        // the float32 exponent bias (int32)
GLOBL siluK<>(SB), RODATA|NOPTR, $56

// EXP16 computes ggml's vector exp (expGGML, silu.go) of the 16 lanes of
// R into P, with K, U, Q and R as scratch and the constants in Z16-Z28
// (Z31 zero); each fused step is one FMA.
#define EXP16(R, K, U, P, Q, M1, M2) \
	VMOVAPS      R, K               \
	VFMADD213PS  Z16, Z17, K        \ // z = r·log2e + shift
	VSUBPS       Z16, K, K          \ // n = z - shift
	VFMADD231PS  Z18, K, R          \ // b = r - n·ln2hi
	VFMADD231PS  Z19, K, R          \ // b = b - n·ln2lo
	VMULPS       R, R, U            \ // u = b·b
	VMOVAPS      Z20, P             \
	VFMADD213PS  Z21, R, P          \ // c5·b + c4
	VMOVAPS      Z22, Q             \
	VFMADD213PS  Z23, R, Q          \ // c3·b + c2
	VFMADD213PS  Q, U, P            \ // (c5·b + c4)·u + (c3·b + c2)
	VMOVAPS      Z24, Q             \
	VFMADD213PS  Z25, R, Q          \ // c1·b + 1
	VFMADD213PS  Q, U, P            \ // j
	VSCALEFPS    K, P, P            \ // e = j·2^n
	VCMPPS       $0x1e, Z26, K, M1  \ // n > 192: +Inf
	VCMPPS       $0x11, Z27, K, M2  \ // n < -192: 0
	VMOVAPS      Z28, M1, P         \
	VMOVAPS      Z31, M2, P

// SILU16 computes ggml's silu of the 16 lanes of X in place (X = x /
// (1 + exp(0 - x))), with K, R, U, P, Q as scratch (siluGGML's steps).
#define SILU16(X, K, R, U, P, Q, M1, M2) \
	VSUBPS       X, Z31, R          \ // r = 0 - x (nx)
	EXP16(R, K, U, P, Q, M1, M2)    \
	VADDPS       Z25, P, P          \ // 1 + e
	VDIVPS       P, X, X              // x / (1 + e)

// EXPCONSTS16 loads EXP16's constants into Z16-Z28 and zeroes Z31.
#define EXPCONSTS16 \
	VBROADCASTSS siluK<>+0(SB), Z16  \
	VBROADCASTSS siluK<>+4(SB), Z17  \
	VBROADCASTSS siluK<>+8(SB), Z18  \
	VBROADCASTSS siluK<>+12(SB), Z19 \
	VBROADCASTSS siluK<>+16(SB), Z20 \
	VBROADCASTSS siluK<>+20(SB), Z21 \
	VBROADCASTSS siluK<>+24(SB), Z22 \
	VBROADCASTSS siluK<>+28(SB), Z23 \
	VBROADCASTSS siluK<>+32(SB), Z24 \
	VBROADCASTSS siluK<>+36(SB), Z25 \
	VBROADCASTSS siluK<>+40(SB), Z26 \
	VBROADCASTSS siluK<>+44(SB), Z27 \
	VBROADCASTSS siluK<>+48(SB), Z28 \
	VXORPS       Z31, Z31, Z31

// REDUCE16 adds the 16 float32 lanes of E (whose low halves are EY and
// EX) as _mm512_reduce_add_ps does (ggml's soft_max: the upper 256 bits
// plus the lower, then the upper 128 plus the lower, lanes 2-3 plus 0-1,
// lane 1 plus 0) and adds that, widened, to the float64 in S; T1 and T2
// are scratch.
#define REDUCE16(E, EY, T1Y, T1X, T2X, S) \
	VEXTRACTF64X4 $1, E, T1Y   \
	VADDPS        T1Y, EY, T1Y \
	REDUCE8(T1Y, T1X, T2X, S)

// REDUCE8 is REDUCE16's steps from eight lanes in AY (low half AX) on.
#define REDUCE8(AY, AX, TX, S) \
	VEXTRACTF128 $1, AY, TX   \
	VADDPS       TX, AX, AX   \
	VPERMILPS    $0x4e, AX, TX \
	VADDPS       TX, AX, AX   \
	VMOVSHDUP    AX, TX       \
	VADDSS       TX, AX, AX   \
	VCVTSS2SD    AX, AX, AX   \
	VADDSD       AX, S, S

// func siluAVX512(pd, px, pg unsafe.Pointer, n int)
//
// siluVec16 in assembly: ggml's silu (times the gate at pg, unless pg is
// nil) over n values, n a multiple of 16, 32 values a step in two
// chains. Every value stays in a register (no spills: Go's compiler
// keeps SIMD values in Z0-Z15 and spills 64-byte registers to its 8-byte
// aligned stack, which split cache lines and made the archsimd loop four
// times slower in some frames).
TEXT ·siluAVX512(SB), NOSPLIT, $0-32
	MOVQ pd+0(FP), DI
	MOVQ px+8(FP), SI
	MOVQ pg+16(FP), DX
	MOVQ n+24(FP), CX
	EXPCONSTS16
	XORQ AX, AX

loop32:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JGT  tail16
	VMOVUPS (SI)(AX*4), Z0
	VMOVUPS 64(SI)(AX*4), Z8
	SILU16(Z0, Z1, Z2, Z3, Z4, Z5, K1, K2)
	SILU16(Z8, Z9, Z10, Z11, Z12, Z13, K3, K4)
	TESTQ DX, DX
	JZ    store32
	VMULPS (DX)(AX*4), Z0, Z0
	VMULPS 64(DX)(AX*4), Z8, Z8

store32:
	VMOVUPS Z0, (DI)(AX*4)
	VMOVUPS Z8, 64(DI)(AX*4)
	MOVQ BX, AX
	JMP  loop32

tail16:
	CMPQ AX, CX
	JGE  done
	VMOVUPS (SI)(AX*4), Z0
	SILU16(Z0, Z1, Z2, Z3, Z4, Z5, K1, K2)
	TESTQ DX, DX
	JZ    store16
	VMULPS (DX)(AX*4), Z0, Z0

store16:
	VMOVUPS Z0, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// EXP8 is EXP16 on the 8 lanes of Y registers with AVX2 and FMA: R in,
// P out, K, U, Q, T scratch (R too), Y15 zero, the constants broadcast
// from memory into T as each step needs them; j·2^n (no VSCALEFPS) is
// (j·2^h)·2^(n-h), h = n >> 1: the first product is exact, the second
// rounds once, as VSCALEFPS does.
#define EXP8(R, K, U, P, Q, T) \
	VBROADCASTSS siluK<>+4(SB), K       \
	VBROADCASTSS siluK<>+0(SB), T       \
	VFMADD213PS  T, R, K                \ // z = r·log2e + shift
	VSUBPS       T, K, K                \ // n = z - shift
	VBROADCASTSS siluK<>+8(SB), T       \
	VFMADD231PS  T, K, R                \ // b = r - n·ln2hi
	VBROADCASTSS siluK<>+12(SB), T      \
	VFMADD231PS  T, K, R                \ // b = b - n·ln2lo
	VMULPS       R, R, U                \ // u = b·b
	VBROADCASTSS siluK<>+16(SB), P      \
	VBROADCASTSS siluK<>+20(SB), T      \
	VFMADD213PS  T, R, P                \ // c5·b + c4
	VBROADCASTSS siluK<>+24(SB), Q      \
	VBROADCASTSS siluK<>+28(SB), T      \
	VFMADD213PS  T, R, Q                \ // c3·b + c2
	VFMADD213PS  Q, U, P                \
	VBROADCASTSS siluK<>+32(SB), Q      \
	VBROADCASTSS siluK<>+36(SB), T      \
	VFMADD213PS  T, R, Q                \ // c1·b + 1
	VFMADD213PS  Q, U, P                \ // j
	VCVTTPS2DQ   K, Q                   \ // n as int32 (exact; lanes |n| > 192 are replaced below)
	VPSRAD       $1, Q, R               \ // h
	VPSUBD       R, Q, Q                \ // n - h
	VPBROADCASTD siluK<>+52(SB), T      \ // 127
	VPADDD       T, R, R                \
	VPSLLD       $23, R, R              \ // 2^h
	VPADDD       T, Q, Q                \
	VPSLLD       $23, Q, Q              \ // 2^(n-h)
	VMULPS       R, P, P                \
	VMULPS       Q, P, P                \ // e = j·2^n
	VBROADCASTSS siluK<>+40(SB), T      \
	VCMPPS       $0x1e, T, K, R         \ // n > 192: +Inf
	VBROADCASTSS siluK<>+48(SB), Q      \
	VBLENDVPS    R, Q, P, P             \
	VBROADCASTSS siluK<>+44(SB), T      \
	VCMPPS       $0x11, T, K, R         \ // n < -192: 0
	VBLENDVPS    R, Y15, P, P

// SILU8 is SILU16 with EXP8.
#define SILU8(X, K, R, U, P, Q, T) \
	VSUBPS       X, Y15, R              \ // nx = 0 - x
	EXP8(R, K, U, P, Q, T)              \
	VBROADCASTSS siluK<>+36(SB), T      \
	VADDPS       T, P, P                \ // 1 + e
	VDIVPS       P, X, X                  // x / (1 + e)

// The constants of SILUFAST8's memory operands, each in eight lanes (32
// bytes: the linker aligns the table to 32, so none splits a cache line).
DATA siluV<>+0(SB)/8, $0x3fb8aa3b3fb8aa3b           // log2e
DATA siluV<>+8(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA siluV<>+16(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA siluV<>+24(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA siluV<>+32(SB)/8, $0xbf317200bf317200          // -ln2, high part
DATA siluV<>+40(SB)/8, $0xbf317200bf317200
DATA siluV<>+48(SB)/8, $0xbf317200bf317200
DATA siluV<>+56(SB)/8, $0xbf317200bf317200
DATA siluV<>+64(SB)/8, $0xb5bfbe8eb5bfbe8e          // -ln2, low part
DATA siluV<>+72(SB)/8, $0xb5bfbe8eb5bfbe8e
DATA siluV<>+80(SB)/8, $0xb5bfbe8eb5bfbe8e
DATA siluV<>+88(SB)/8, $0xb5bfbe8eb5bfbe8e
DATA siluV<>+96(SB)/8, $0x3c0720103c072010          // c5
DATA siluV<>+104(SB)/8, $0x3c0720103c072010
DATA siluV<>+112(SB)/8, $0x3c0720103c072010
DATA siluV<>+120(SB)/8, $0x3c0720103c072010
DATA siluV<>+128(SB)/8, $0x3d2b9f173d2b9f17         // c4
DATA siluV<>+136(SB)/8, $0x3d2b9f173d2b9f17
DATA siluV<>+144(SB)/8, $0x3d2b9f173d2b9f17
DATA siluV<>+152(SB)/8, $0x3d2b9f173d2b9f17
DATA siluV<>+160(SB)/8, $0x3e2aaf333e2aaf33         // c3
DATA siluV<>+168(SB)/8, $0x3e2aaf333e2aaf33
DATA siluV<>+176(SB)/8, $0x3e2aaf333e2aaf33
DATA siluV<>+184(SB)/8, $0x3e2aaf333e2aaf33
DATA siluV<>+192(SB)/8, $0x3efffedb3efffedb         // c2
DATA siluV<>+200(SB)/8, $0x3efffedb3efffedb
DATA siluV<>+208(SB)/8, $0x3efffedb3efffedb
DATA siluV<>+216(SB)/8, $0x3efffedb3efffedb
DATA siluV<>+224(SB)/8, $0x3f7ffff63f7ffff6         // c1
DATA siluV<>+232(SB)/8, $0x3f7ffff63f7ffff6
DATA siluV<>+240(SB)/8, $0x3f7ffff63f7ffff6
DATA siluV<>+248(SB)/8, $0x3f7ffff63f7ffff6
DATA siluV<>+256(SB)/8, $0x42ac000042ac0000         // 86, compared as int32 bits
DATA siluV<>+264(SB)/8, $0x42ac000042ac0000
DATA siluV<>+272(SB)/8, $0x42ac000042ac0000
DATA siluV<>+280(SB)/8, $0x42ac000042ac0000
GLOBL siluV<>(SB), RODATA|NOPTR, $288

// SILUFAST8 is SILU8 for lanes with |x| <= 86, so |n| <= 124 and
// j·2^n is a normal float32: the exact product, which VSCALEFPS gives
// unrounded, is n added to j's exponent field (j is in [0.7, 1.42]), one
// VPADDD of n·2^23, taken from z's low bits (z = 1.5·2^23 + n, so
// bits(z) << 23 is n << 23). It runs on x, not nx = 0 - x: for such x
// the two differ only in the sign of a zero, and with -b in place of b
// each fused step is its negation (VFNMADD), rounded to the same
// magnitude (an exact zero b, whatever its sign, gives j = 1 either
// way). Y13 is 1.0, Y14 the shift; the other constants are memory
// operands (siluV). The same bits as SILU8 (TestSiluVecMatchesScalar).
#define SILUFAST8(X, K, R, U, P, Q) \
	VMOVAPS      Y14, K                 \
	VFNMADD231PS siluV<>+0(SB), X, K    \ // z = nx·log2e + shift
	VSUBPS       Y14, K, U              \ // n = z - shift
	VMOVAPS      X, R                   \
	VFNMADD231PS siluV<>+32(SB), U, R   \ // -b = x + n·ln2hi
	VFNMADD231PS siluV<>+64(SB), U, R   \ // -b = -b + n·ln2lo
	VPSLLD       $23, K, K              \ // n·2^23
	VMULPS       R, R, U                \ // u = b·b
	VMOVUPS      siluV<>+128(SB), P     \
	VFNMADD231PS siluV<>+96(SB), R, P   \ // c5·b + c4
	VMOVUPS      siluV<>+192(SB), Q     \
	VFNMADD231PS siluV<>+160(SB), R, Q  \ // c3·b + c2
	VFMADD213PS  Q, U, P                \ // (c5·b + c4)·u + (c3·b + c2)
	VMOVAPS      Y13, Q                 \
	VFNMADD231PS siluV<>+224(SB), R, Q  \ // c1·b + 1
	VFMADD213PS  Q, U, P                \ // j
	VPADDD       K, P, P                \ // e = j·2^n
	VADDPS       Y13, P, P              \ // 1 + e
	VDIVPS       P, X, X                  // x / (1 + e)

// func siluAVX2(pd, px, pg unsafe.Pointer, n int)
//
// siluAVX512 with AVX2 and FMA: 16 values a step in two chains of eight
// lanes, n a multiple of 16. A step whose 16 |x| are all at most 86 (one
// compare of their maximum's bits) takes SILUFAST8, as ggml's AVX2 exp
// takes its fast path; any other (large |x|, infinities, NaNs) takes
// SILU8, EXP8's full range.
TEXT ·siluAVX2(SB), NOSPLIT, $0-32
	MOVQ         pd+0(FP), DI
	MOVQ         px+8(FP), SI
	MOVQ         pg+16(FP), DX
	MOVQ         n+24(FP), CX
	VXORPS       Y15, Y15, Y15
	VPCMPEQD     Y12, Y12, Y12
	VPSRLD       $1, Y12, Y12          // 0x7fffffff: |x|
	VBROADCASTSS siluK<>+36(SB), Y13   // 1
	VBROADCASTSS siluK<>+0(SB), Y14    // shift
	XORQ         AX, AX

loop16:
	CMPQ      AX, CX
	JGE       done2
	VMOVUPS   (SI)(AX*4), Y0
	VMOVUPS   32(SI)(AX*4), Y6
	VPAND     Y12, Y0, Y1
	VPAND     Y12, Y6, Y7
	VPMAXSD   Y7, Y1, Y1
	VPCMPGTD  siluV<>+256(SB), Y1, Y1 // |x| > 86 or NaN (as int32 bits)
	VMOVMSKPS Y1, BX
	TESTL     BX, BX
	JNZ       full16
	SILUFAST8(Y0, Y1, Y2, Y3, Y4, Y5)
	SILUFAST8(Y6, Y7, Y8, Y9, Y10, Y11)

gate2:
	TESTQ  DX, DX
	JZ     store2
	VMULPS (DX)(AX*4), Y0, Y0
	VMULPS 32(DX)(AX*4), Y6, Y6

store2:
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y6, 32(DI)(AX*4)
	ADDQ    $16, AX
	JMP     loop16

full16:
	SILU8(Y0, Y1, Y2, Y3, Y4, Y5, Y7)
	SILU8(Y6, Y7, Y8, Y9, Y10, Y11, Y1)
	JMP gate2

done2:
	VZEROUPPER
	RET

// func softMaxExpAVX512(p unsafe.Pointer, n int, m float32) float64
//
// The vector part of ggml's soft_max on AVX-512 (ggml_vec_soft_max_f32):
// p[i] = exp(p[i] - m) by ggml's vector exp over n values, n a multiple
// of 16, returning the float64 sum of each 16 values' float32
// _mm512_reduce_add_ps, added in order from 0.
TEXT ·softMaxExpAVX512(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Z30
	EXPCONSTS16
	VXORPD       X7, X7, X7
	XORQ         AX, AX

sm16:
	CMPQ    AX, CX
	JGE     smdone
	VMOVUPS (DI)(AX*4), Z0
	VSUBPS  Z30, Z0, Z0
	EXP16(Z0, Z1, Z2, Z3, Z4, K1, K2)
	VMOVUPS Z3, (DI)(AX*4)
	REDUCE16(Z3, Y3, Y5, X5, X6, X7)
	ADDQ    $16, AX
	JMP     sm16

smdone:
	VMOVSD X7, ret+24(FP)
	VZEROUPPER
	RET

// func softMaxExpAVX2(p unsafe.Pointer, n int, m float32) float64
//
// softMaxExpAVX512 with AVX2 and FMA: each 16 values as two halves of
// eight, reduced in the same order (the upper half plus the lower first).
TEXT ·softMaxExpAVX2(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y14
	VXORPS       Y15, Y15, Y15
	VXORPD       X7, X7, X7
	XORQ         AX, AX

sm8:
	CMPQ    AX, CX
	JGE     smdone2
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y8
	VSUBPS  Y14, Y0, Y0
	VSUBPS  Y14, Y8, Y8
	EXP8(Y0, Y1, Y2, Y3, Y4, Y5)
	EXP8(Y8, Y9, Y10, Y11, Y12, Y13)
	VMOVUPS Y3, (DI)(AX*4)
	VMOVUPS Y11, 32(DI)(AX*4)
	VADDPS  Y11, Y3, Y5
	REDUCE8(Y5, X5, X6, X7)
	ADDQ    $16, AX
	JMP     sm8

smdone2:
	VMOVSD X7, ret+24(FP)
	VZEROUPPER
	RET
