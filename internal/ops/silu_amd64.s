//go:build goexperiment.simd && amd64

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
GLOBL siluK<>(SB), RODATA|NOPTR, $52

// SILU16 computes ggml's silu of the 16 lanes of X in place (X = x /
// (1 + exp(0 - x))), with K, R, U, P, Q as scratch and the constants in
// Z16-Z28; the steps are expGGML's and siluGGML's (silu.go), each fused
// step one FMA.
#define SILU16(X, K, R, U, P, Q, M1, M2) \
	VSUBPS       X, Z31, R          \ // r = 0 - x (nx)
	VMOVAPS      R, K               \
	VFMADD213PS  Z16, Z17, K        \ // z = nx·log2e + shift
	VSUBPS       Z16, K, K          \ // n = z - shift
	VFMADD231PS  Z18, K, R          \ // b = nx - n·ln2hi
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
	VMOVAPS      Z31, M2, P         \
	VADDPS       Z25, P, P          \ // 1 + e
	VDIVPS       P, X, X              // x / (1 + e)

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
	VBROADCASTSS siluK<>+0(SB), Z16
	VBROADCASTSS siluK<>+4(SB), Z17
	VBROADCASTSS siluK<>+8(SB), Z18
	VBROADCASTSS siluK<>+12(SB), Z19
	VBROADCASTSS siluK<>+16(SB), Z20
	VBROADCASTSS siluK<>+20(SB), Z21
	VBROADCASTSS siluK<>+24(SB), Z22
	VBROADCASTSS siluK<>+28(SB), Z23
	VBROADCASTSS siluK<>+32(SB), Z24
	VBROADCASTSS siluK<>+36(SB), Z25
	VBROADCASTSS siluK<>+40(SB), Z26
	VBROADCASTSS siluK<>+44(SB), Z27
	VBROADCASTSS siluK<>+48(SB), Z28
	VXORPS       Z31, Z31, Z31
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
