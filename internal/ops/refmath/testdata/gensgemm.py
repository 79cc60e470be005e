# gensgemm.py OUT writes mulmat_sgemm_amd64.s, the register tiles of ggml's
# tinyBLAS order (mulmat_sgemm.go):
#   python3 testdata/gensgemm.py mulmat_sgemm_amd64.s   (from internal/ops)
def gen(name, f16, nr, nc, zmm, xh=False):
    L = []; a = L.append
    reg = "Z" if zmm else "Y"
    halves = 1 if zmm else 2          # vectors per 16-lane sum
    vb = 64 if zmm else 32            # bytes of float32 a vector holds
    accbase = 16 if zmm else 8
    def acc(i, j, h): return "%s%d" % (reg, accbase + (i*nc + j)*halves + h)
    rows = ["(DI)", "(DI)(SI*1)", "(DI)(SI*2)", "(R15)"]
    def ls(op):
        for i in range(nr):
            for j in range(nc):
                for h in range(halves):
                    off = 64*j + 32*h
                    addr = ("%d" % off if off else "") + rows[i]
                    a("\tVMOVUPS %s, %s" % ((addr, acc(i, j, h)) if op == "load" else (acc(i, j, h), addr)))
    wname = "p" if f16 else "w"
    a("\n// func %s(%s, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)" % (name, wname))
    a("TEXT ·%s(SB), NOSPLIT, $0-40" % name)
    a("\tMOVQ %s+0(FP), AX" % wname)
    wr = ["R8", "R9", "R10", "R11"][:nr]
    for r, o in zip(wr, [0, 8, 16, 24]): a("\tMOVQ %d(AX), %s" % (o, r))
    a("\tMOVQ x+8(FP), AX")
    xr = ["R12", "R13", "BX", "DX"][:nc]
    for r, o in zip(xr, [0, 8, 16, 24]): a("\tMOVQ %d(AX), %s" % (o, r))
    a("\tMOVQ acc+16(FP), DI\n\tMOVQ rs+24(FP), SI\n\tMOVQ nv+32(FP), CX\n\tLEAQ (DI)(SI*2), R15\n\tADDQ SI, R15")
    ls("load")
    lbl = name.lower()
    # AX counts weight bytes: nv values are 4·nv (f32) or 2·nv (f16) bytes.
    a("\tSHLQ $%d, CX\n\tXORQ AX, AX" % (1 if f16 else 2))
    wb = vb // 2 if f16 else vb       # weight bytes a vector takes
    # The AVX-512 tiles with a column to spare take in x[3] the next four
    # rows (contiguous, or nil) and prefetch them to L2 as one run, 4·wb
    # bytes a step, while they read their own: see sgemmTile.
    pf = zmm and nc < 4
    if pf:
        a("\tMOVQ x+8(FP), DX\n\tMOVQ 24(DX), DX\n\tTESTQ DX, DX\n\tJZ   %s" % lbl)
        step(a, lbl + "pf", lbl + "done", halves, wr, xr, nr, nc, reg, acc, f16, wb, vb,
             ["\tPREFETCHT1 %s(DX)(AX*4)" % ("%d" % o if o else "") for o in range(0, 4*wb, 64)], xh)
    step(a, lbl, lbl + "done", halves, wr, xr, nr, nc, reg, acc, f16, wb, vb, [], xh)
    a("\n%sdone:" % lbl)
    ls("store")
    a("\tVZEROUPPER\n\tRET")
    return "\n".join(L) + "\n"

def step(a, lbl, done, halves, wr, xr, nr, nc, reg, acc, f16, wb, vb, pf, xh):
    """The loop over nv: one 16-value step of every row and column; with
    xh the activations are f16 too, widened by VCVTPH2PS as they are
    loaded (two bytes a value, as the f16 weights)."""
    a("\n%s:\n\tCMPQ AX, CX\n\tJGE  %s" % (lbl, done))
    for p in pf: a(p)
    for h in range(halves):
        for i, r in enumerate(wr):
            off = "%d" % (h*wb) if h else ""
            if f16:
                a("\tVCVTPH2PS %s(%s)(AX*1), %s%d" % (off, r, reg, i))
            else:
                a("\tVMOVUPS %s(%s)(AX*1), %s%d" % (off, r, reg, i))
        for j, r in enumerate(xr):
            if xh:
                a("\tVCVTPH2PS %s(%s)(AX*1), %s%d" % ("%d" % (h*wb) if h else "", r, reg, 4 + j))
                continue
            off = "%d" % (h*vb) if h else ""
            a("\tVMOVUPS %s(%s)(AX*%d), %s%d" % (off, r, 2 if f16 else 1, reg, 4 + j))
        for i in range(nr):
            for j in range(nc):
                a("\tVFMADD231PS %s%d, %s%d, %s" % (reg, 4 + j, reg, i, acc(i, j, h)))
    a("\tADDQ $%d, AX\n\tJMP  %s" % (halves*wb, lbl))

hdr = '''#include "textflag.h"

// The register tiles of ggml's tinyBLAS order (mulmat_sgemm.go; written by
// testdata/gensgemm.py): nr weight rows (f32 at w, or f16 at p, widened by
// VCVTPH2PS as they are loaded) against nc activation rows (x) over nv
// values, a multiple of 16. The sum of (row i, column j) is 16 float32
// lanes at acc + i·rs + 64·j, lane l summing the products of the elements
// ≡ l (mod 16) in order, each s = fma(w, x, s) (VFMADD231PS, one rounding).
// With AVX-512 (sgemm*4x*) a sum is one Z register, Z16-Z31, which the
// compiler does not use; with AVX2 and FMA (sgemm*2x*) two Y registers,
// lanes 0-7 and 8-15: the same operations lane by lane, the same bits.
// The AVX-512 tiles of one to three columns take in x[3] the next four
// weight rows (contiguous in memory; nil for none) and prefetch them to
// L2 as one run while they read their own (sgemmTile). sgemmF16HTile*
// take f16 activations too, widened by VCVTPH2PS as they are loaded:
// the same values as f32 activations rounded to f16, half the bytes.
'''
out = hdr
for nc in (4, 3, 2, 1):
    out += gen("sgemmF32Tile4x%d" % nc, False, 4, nc, True)
    out += gen("sgemmF16Tile4x%d" % nc, True, 4, nc, True)
    out += gen("sgemmF16HTile4x%d" % nc, True, 4, nc, True, True)
for nc in (2, 1):
    out += gen("sgemmF32Tile2x%d" % nc, False, 2, nc, False)
    out += gen("sgemmF16Tile2x%d" % nc, True, 2, nc, False)
import sys
open(sys.argv[1], 'w').write(out)
