//go:build !goexperiment.simd

#include "textflag.h"

// fillNormal512 of gen_simd_amd64.go in assembly for the plain build
// (GOEXPERIMENT=simd off; gen_plain_amd64.go): eight Box-Muller pairs per
// pass with AVX-512 (F and DQ), the IEEE operations of the scalar kernels
// (splitmix, unit, logUnit, sincos2Pi, normalCos and normalSin) in their
// order, each exactly rounded, no FMA: the values are the scalar path's
// bits (TestFillNormalMatchesGenerator).

// The constants, each broadcast to the lanes where it is used (the Go
// constants of gen.go, as their float64 bits).
DATA fnc<>+0(SB)/8, $0xbf58476d1ce4e5b9
DATA fnc<>+8(SB)/8, $0x94d049bb133111eb
DATA fnc<>+16(SB)/8, $0x3ca0000000000000
DATA fnc<>+24(SB)/8, $0x3ff0000000000000
DATA fnc<>+32(SB)/8, $0x000fffffffffffff
DATA fnc<>+40(SB)/8, $0x3fe0000000000000
DATA fnc<>+48(SB)/8, $0x3fe6a09e667f3bcd
DATA fnc<>+56(SB)/8, $0x408ff00000000000
DATA fnc<>+64(SB)/8, $0x4000000000000000
DATA fnc<>+72(SB)/8, $0x3fe0000000000000
DATA fnc<>+80(SB)/8, $0xc000000000000000
DATA fnc<>+88(SB)/8, $0x401921fb54442d18
DATA fnc<>+96(SB)/8, $0x3ff45f306dc9c883
DATA fnc<>+104(SB)/8, $0x0000000000000001
DATA fnc<>+112(SB)/8, $0x0000000000000003
DATA fnc<>+120(SB)/8, $0x3fe62e42fee00000
DATA fnc<>+128(SB)/8, $0x3dea39ef35793c76
DATA fnc<>+136(SB)/8, $0x3fe5555555555593
DATA fnc<>+144(SB)/8, $0x3fd999999997fa04
DATA fnc<>+152(SB)/8, $0x3fd2492494229359
DATA fnc<>+160(SB)/8, $0x3fcc71c51d8e78af
DATA fnc<>+168(SB)/8, $0x3fc7466496cb03de
DATA fnc<>+176(SB)/8, $0x3fc39a09d078c69f
DATA fnc<>+184(SB)/8, $0x3fc2f112df3e5244
DATA fnc<>+192(SB)/8, $0x3fe921fb40000000
DATA fnc<>+200(SB)/8, $0x3e64442d00000000
DATA fnc<>+208(SB)/8, $0x3ce8469898cc5170
DATA fnc<>+216(SB)/8, $0x3de5d8fd1fd19ccd
DATA fnc<>+224(SB)/8, $0xbe5ae5e5a9291f5d
DATA fnc<>+232(SB)/8, $0x3ec71de3567d48a1
DATA fnc<>+240(SB)/8, $0xbf2a01a019bfdf03
DATA fnc<>+248(SB)/8, $0x3f8111111110f7d0
DATA fnc<>+256(SB)/8, $0xbfc5555555555548
DATA fnc<>+264(SB)/8, $0xbda8fa49a0861a9b
DATA fnc<>+272(SB)/8, $0x3e21ee9d7b4e3f05
DATA fnc<>+280(SB)/8, $0xbe927e4f7eac4bc6
DATA fnc<>+288(SB)/8, $0x3efa01a019c844f5
DATA fnc<>+296(SB)/8, $0xbf56c16c16c14f91
DATA fnc<>+304(SB)/8, $0x3fa555555555554b
DATA fnc<>+312(SB)/8, $0x9e3779b97f4a7c15
DATA fnc<>+320(SB)/8, $0xe3779b97f4a7c150
GLOBL fnc<>(SB), RODATA|NOPTR, $328

#define M1 fnc<>+0(SB)
#define M2 fnc<>+8(SB)
#define P53 fnc<>+16(SB)
#define ONE fnc<>+24(SB)
#define MANT fnc<>+32(SB)
#define HALFEXP fnc<>+40(SB)
#define THR fnc<>+48(SB)
#define C1022 fnc<>+56(SB)
#define TWO fnc<>+64(SB)
#define HALF fnc<>+72(SB)
#define MINUS2 fnc<>+80(SB)
#define TWOPI fnc<>+88(SB)
#define FOUROVPI fnc<>+96(SB)
#define ONE64 fnc<>+104(SB)
#define THREE fnc<>+112(SB)
#define LN2HI fnc<>+120(SB)
#define LN2LO fnc<>+128(SB)
#define L1 fnc<>+136(SB)
#define L2 fnc<>+144(SB)
#define L3 fnc<>+152(SB)
#define L4 fnc<>+160(SB)
#define L5 fnc<>+168(SB)
#define L6 fnc<>+176(SB)
#define L7 fnc<>+184(SB)
#define PI4A fnc<>+192(SB)
#define PI4B fnc<>+200(SB)
#define PI4C fnc<>+208(SB)
#define S0 fnc<>+216(SB)
#define S1 fnc<>+224(SB)
#define S2 fnc<>+232(SB)
#define S3 fnc<>+240(SB)
#define S4 fnc<>+248(SB)
#define S5 fnc<>+256(SB)
#define C0 fnc<>+264(SB)
#define C1 fnc<>+272(SB)
#define C2 fnc<>+280(SB)
#define C3 fnc<>+288(SB)
#define C4 fnc<>+296(SB)
#define C5 fnc<>+304(SB)
#define GAMMA fnc<>+312(SB)
#define STEP fnc<>+320(SB)

// The lane order of the output: cos of pair p to value 2p, sin to 2p+1.
DATA fnperm<>+0(SB)/8, $0x0000000800000000
DATA fnperm<>+8(SB)/8, $0x0000000900000001
DATA fnperm<>+16(SB)/8, $0x0000000a00000002
DATA fnperm<>+24(SB)/8, $0x0000000b00000003
DATA fnperm<>+32(SB)/8, $0x0000000c00000004
DATA fnperm<>+40(SB)/8, $0x0000000d00000005
DATA fnperm<>+48(SB)/8, $0x0000000e00000006
DATA fnperm<>+56(SB)/8, $0x0000000f00000007
GLOBL fnperm<>(SB), RODATA|NOPTR, $64

// MIX(z, t) is splitmix on the lanes of z (t scratch): Z29 and Z28 hold
// its multipliers.
#define MIX(z, t) \
	VPSRLQ  $30, z, t \
	VPXORQ  t, z, z \
	VPMULLQ Z29, z, z \
	VPSRLQ  $27, z, t \
	VPXORQ  t, z, z \
	VPMULLQ Z28, z, z \
	VPSRLQ  $31, z, t \
	VPXORQ  t, z, z

// func fillNormalAVX512(mean, std float64, z1 *[8]uint64, dst *float32, n int)
//
// n values (a multiple of 16) to dst; z1 holds the rng state of each of the
// first eight pairs (before its first draw).
TEXT ·fillNormalAVX512(SB), NOSPLIT, $0-40
	VBROADCASTSD mean+0(FP), Z19
	VBROADCASTSD std+8(FP), Z18
	MOVQ         z1+16(FP), SI
	VMOVDQU64    (SI), Z16
	MOVQ         dst+24(FP), DI
	MOVQ         n+32(FP), CX
	VBROADCASTSD GAMMA, Z31
	VBROADCASTSD STEP, Z30
	VBROADCASTSD M1, Z29
	VBROADCASTSD M2, Z28
	VBROADCASTSD ONE, Z27
	VBROADCASTSD MANT, Z26
	VBROADCASTSD HALFEXP, Z25
	VBROADCASTSD THR, Z24
	VBROADCASTSD TWO, Z23
	VBROADCASTSD HALF, Z22
	VBROADCASTSD ONE64, Z21
	VBROADCASTSD THREE, Z20
	VMOVDQU32    fnperm<>(SB), Z17
	XORQ         AX, AX

loop:
	CMPQ AX, CX
	JGE  done

	// u1 = 1 - unit(splitmix(z1)), u2 = unit(splitmix(z1 + γ)).
	VMOVDQA64       Z16, Z0
	MIX(Z0, Z9)
	VPSRLQ          $11, Z0, Z0
	VCVTUQQ2PD      Z0, Z0
	VMULPD.BCST     P53, Z0, Z0
	VSUBPD          Z0, Z27, Z0
	VPADDQ          Z31, Z16, Z1
	MIX(Z1, Z9)
	VPSRLQ          $11, Z1, Z1
	VCVTUQQ2PD      Z1, Z1
	VMULPD.BCST     P53, Z1, Z1
	VPADDQ          Z30, Z16, Z16

	// rad = sqrt(-2·logUnit(u1)): f1, k from the bits of u1 (Z0).
	VPANDQ      Z26, Z0, Z2      // fb
	VPORQ       Z25, Z2, Z2
	VPSUBQ      Z24, Z2, Z3      // lt = (fb - thr) >> 63
	VPSRLQ      $63, Z3, Z3
	VPSLLQ      $52, Z3, Z4      // f1 = fb + lt<<52
	VPADDQ      Z4, Z2, Z4
	VPSRLQ      $52, Z0, Z5      // k = float64(b>>52 - lt) - 1022
	VPSUBQ      Z3, Z5, Z5
	VCVTUQQ2PD  Z5, Z5
	VSUBPD.BCST C1022, Z5, Z5
	VSUBPD      Z27, Z4, Z4      // f = f1 - 1
	VADDPD      Z23, Z4, Z6      // s = f / (2 + f)
	VDIVPD      Z6, Z4, Z6
	VMULPD      Z6, Z6, Z7       // s2
	VMULPD      Z7, Z7, Z8       // s4
	VMULPD.BCST L7, Z8, Z9       // t1 = s2·(l1 + s4·(l3 + s4·(l5 + s4·l7)))
	VADDPD.BCST L5, Z9, Z9
	VMULPD      Z8, Z9, Z9
	VADDPD.BCST L3, Z9, Z9
	VMULPD      Z8, Z9, Z9
	VADDPD.BCST L1, Z9, Z9
	VMULPD      Z7, Z9, Z9
	VMULPD.BCST L6, Z8, Z10      // t2 = s4·(l2 + s4·(l4 + s4·l6))
	VADDPD.BCST L4, Z10, Z10
	VMULPD      Z8, Z10, Z10
	VADDPD.BCST L2, Z10, Z10
	VMULPD      Z8, Z10, Z10
	VADDPD      Z10, Z9, Z9      // r = t1 + t2
	VMULPD      Z22, Z4, Z10     // hfsq = (0.5·f)·f
	VMULPD      Z4, Z10, Z10
	VADDPD      Z9, Z10, Z9      // k·ln2Hi - ((hfsq - (s·(hfsq + r) + k·ln2Lo)) - f)
	VMULPD      Z6, Z9, Z9
	VMULPD.BCST LN2LO, Z5, Z7
	VADDPD      Z7, Z9, Z9
	VSUBPD      Z9, Z10, Z9
	VSUBPD      Z4, Z9, Z9
	VMULPD.BCST LN2HI, Z5, Z7
	VSUBPD      Z9, Z7, Z9
	VMULPD.BCST MINUS2, Z9, Z9
	VSQRTPD     Z9, Z9           // rad

	// sincos2Pi(u2): x = 2π·u2, j = uint64(x·4/π) rounded up to even.
	VMULPD.BCST TWOPI, Z1, Z1
	VMULPD.BCST FOUROVPI, Z1, Z2
	VCVTTPD2UQQ Z2, Z2
	VPANDQ      Z21, Z2, Z3
	VPADDQ      Z3, Z2, Z2       // j
	VCVTUQQ2PD  Z2, Z3           // y
	VMULPD.BCST PI4A, Z3, Z4     // z = ((x - y·pi4A) - y·pi4B) - y·pi4C
	VSUBPD      Z4, Z1, Z1
	VMULPD.BCST PI4B, Z3, Z4
	VSUBPD      Z4, Z1, Z1
	VMULPD.BCST PI4C, Z3, Z4
	VSUBPD      Z4, Z1, Z1
	VMULPD      Z1, Z1, Z3       // zz
	VMULPD.BCST C0, Z3, Z4       // the cos polynomial
	VADDPD.BCST C1, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST C2, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST C3, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST C4, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST C5, Z4, Z4
	VMULPD      Z3, Z3, Z5
	VMULPD      Z4, Z5, Z5
	VMULPD      Z22, Z3, Z6      // pc = (1 - 0.5·zz) + zz·zz·poly
	VSUBPD      Z6, Z27, Z6
	VADDPD      Z5, Z6, Z6
	VMULPD.BCST S0, Z3, Z4       // the sin polynomial
	VADDPD.BCST S1, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST S2, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST S3, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST S4, Z4, Z4
	VMULPD      Z3, Z4, Z4
	VADDPD.BCST S5, Z4, Z4
	VMULPD      Z3, Z1, Z5       // ps = z + (z·zz)·poly
	VMULPD      Z4, Z5, Z5
	VADDPD      Z5, Z1, Z7

	// Quadrant q = j>>1 & 3: odd ones swap pc and ps (swap = -(q&1));
	// cos is negative in quadrants 1 and 2, sin in 2 and 3.
	VPSRLQ  $1, Z2, Z2
	VPANDQ  Z20, Z2, Z2          // q
	VPANDQ  Z21, Z2, Z3
	VPXORQ  Z4, Z4, Z4
	VPSUBQ  Z3, Z4, Z3           // swap
	VPSRLQ  $1, Z2, Z4           // q >> 1
	VPANDNQ Z6, Z3, Z5           // cos = (pc &^ swap | ps & swap) ^ ((q>>1 ^ q)&1)<<63
	VPANDQ  Z3, Z7, Z8
	VPORQ   Z8, Z5, Z5
	VPXORQ  Z2, Z4, Z8
	VPANDQ  Z21, Z8, Z8
	VPSLLQ  $63, Z8, Z8
	VPXORQ  Z8, Z5, Z5
	VPANDNQ Z7, Z3, Z8           // sin = (ps &^ swap | pc & swap) ^ (q>>1)<<63
	VPANDQ  Z3, Z6, Z10
	VPORQ   Z10, Z8, Z8
	VPSLLQ  $63, Z4, Z10
	VPXORQ  Z10, Z8, Z8

	// normalCos = mean + (std·rad)·cos, normalSin = mean + std·(rad·sin),
	// as float32, interleaved.
	VMULPD       Z18, Z9, Z10
	VMULPD       Z5, Z10, Z10
	VADDPD       Z19, Z10, Z10
	VCVTPD2PS    Z10, Y10
	VMULPD       Z8, Z9, Z11
	VMULPD       Z18, Z11, Z11
	VADDPD       Z19, Z11, Z11
	VCVTPD2PS    Z11, Y11
	VINSERTF64X4 $1, Y11, Z10, Z10
	VPERMPS      Z10, Z17, Z10
	VMOVUPS      Z10, (DI)(AX*4)
	ADDQ         $16, AX
	JMP          loop

done:
	VZEROUPPER
	RET
