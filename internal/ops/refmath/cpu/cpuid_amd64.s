#include "textflag.h"

// func cpuidAVX512VNNI() bool
TEXT ·cpuidAVX512VNNI(SB), NOSPLIT, $0-1
	MOVB $0, ret+0(FP)
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0xc0030000, BX // AVX512F, DQ, BW, VL
	CMPL BX, $0xc0030000
	JNE  novnni
	SHRL $11, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)

novnni:
	RET
