# gentile4.py OUT writes mulmat_tile4_amd64.s, the AVX-512VL register tiles:
#   python3 testdata/gentile4.py mulmat_tile4_amd64.s   (from internal/ops)
def gen(name, f16, nc):
    def sumreg(i,j): return "Y%d"%(16+4*i+j)
    rows=["(DI)","(DI)(SI*1)","(DI)(SI*2)","(R15)"]
    def ls(op):
        out=[]
        for i in range(4):
            for j in range(nc):
                addr=("%d"%(32*j) if j else "")+rows[i]
                out.append("\tVMOVUPS %s, %s"%((addr,sumreg(i,j)) if op=="load" else (sumreg(i,j),addr)))
        return out
    L=[]; a=L.append
    wname = "p" if f16 else "w"
    a("\n// func %s(%s, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)"%(name,wname))
    a("TEXT ·%s(SB), NOSPLIT, $0-40"%name)
    a("\tMOVQ %s+0(FP), AX"%wname)
    for r,o in zip(["R8","R9","R10","R11"],[0,8,16,24]): a("\tMOVQ %d(AX), %s"%(o,r))
    a("\tMOVQ x+8(FP), AX")
    xs=["R12","R13","BX","DX"][:nc]
    for r,o in zip(xs,[0,8,16,24]): a("\tMOVQ %d(AX), %s"%(o,r))
    a("\tMOVQ acc+16(FP), DI\n\tMOVQ rs+24(FP), SI\n\tMOVQ nv+32(FP), CX\n\tLEAQ (DI)(SI*2), R15\n\tADDQ SI, R15")
    L.extend(ls("load"))
    lbl=name.lower()
    a("\tSHLQ $%d, CX\n\tXORQ AX, AX\n\n%s:\n\tCMPQ AX, CX\n\tJGE  %sdone"%(1 if f16 else 2,lbl,lbl))
    for i,r in enumerate(["R8","R9","R10","R11"]):
        a(("\tVCVTPH2PS (%s)(AX*1), Y%d" if f16 else "\tVMOVUPS (%s)(AX*1), Y%d")%(r,i))
    for j,r in enumerate(xs): a("\tVMOVUPS (%s)(AX*%d), Y%d"%(r,2 if f16 else 1,4+j))
    t=8
    for i in range(4):
        for j in range(nc):
            a("\tVMULPS Y%d, Y%d, Y%d"%(4+j,i,t))
            a("\tVADDPS Y%d, %s, %s"%(t,sumreg(i,j),sumreg(i,j)))
            t=8 if t==15 else t+1
    a("\tADDQ $%d, AX\n\tJMP  %s\n\n%sdone:"%(16 if f16 else 32,lbl,lbl))
    L.extend(ls("store"))
    a("\tVZEROUPPER\n\tRET")
    return "\n".join(L)+"\n"
hdr='''//go:build goexperiment.simd && amd64

#include "textflag.h"

// The register tiles of the f32 and f16 MulMat on CPUs with AVX-512
// (mulmat_ftile.go, mulmat_f16c_amd64.go; written by
// testdata/gentile4.py): four weight rows
// (f32 at w, or f16 at p, widened by VCVTPH2PS as they are loaded) against
// one to four activation rows (x) over nv values, a multiple of 8. The
// sums of (row i, column j), eight lanes each, are the float32s at
// acc + i·rs + 32·j; they stay in Y16-Y31 (AVX-512VL registers, which the
// compiler does not use) while the loop runs, each s = s + w·x by a
// multiply and a separate add, lane by lane, as the archsimd tiles do. A
// step's four weight loads feed up to 128 products, so the activations of
// a column group stay in L1 while the tile's weight rows stream from L2,
// where the 2x3 archsimd tile was bound by L2 bandwidth.
'''
out=hdr
for nc in (4,3,2):
    out+=gen("f32Tile4x%d"%nc,False,nc)
for nc in (4,3):
    out+=gen("f16Tile4x%dF16C"%nc,True,nc)
import sys
open(sys.argv[1],'w').write(out)
