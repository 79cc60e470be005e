package attn

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// RefFlashAttn is FLASH_ATTN_EXT's reference math (srcs = q, k, v and
// the optional mask and sinks).
func (ks *Kernels) RefFlashAttn(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	q, k, v := srcs[0], srcs[1], srcs[2]
	for _, t := range []*ops.Tensor{k, v} {
		if t.Type != ops.F16 && t.Type != ops.F32 {
			return &ops.NoHostMathError{What: "flash_attn_ext with " + t.Type.String() + " K/V"}
		}
	}
	mask, sinks := ops.MaskSinkTensors(3, srcs, p)
	scale := p.F32("scale")
	softcap := p.F32("logit_softcap")
	if softcap != 0 {
		scale /= softcap
	}
	slope := AlibiSlopes(p.F32("max_bias"), q.Ne[2])
	dk, dv, nkv := q.Ne[0], v.Ne[0], k.Ne[1]
	rk2, rk3 := q.Ne[2]/k.Ne[2], q.Ne[3]/k.Ne[3]
	rv2, rv3 := q.Ne[2]/v.Ne[2], q.Ne[3]/v.Ne[3]
	if ks.flashAttnZ(dst, q, k, v, mask, sinks, scale, softcap, slope) ||
		ks.flashAttnVec(dst, q, k, v, mask, sinks, scale, softcap, slope) ||
		ks.flashAttnF16C(dst, q, k, v, mask, sinks, scale, softcap, slope) {
		return nil
	}
	f16V := v.Type == ops.F16
	negInf := float32(math.Inf(-1))

	// Rows of q: (iq1 = query, iq2 = head, iq3 = batch).
	cpu.RefParallel(q.NRows(), nkv*(dk+dv), func(lo, hi int64) {
		buf := cpu.ScratchF32.Get(int(2*dk + 2*dv + nkv))
		defer cpu.ScratchF32.Put(buf)
		qr, kr := buf[:dk], buf[dk:2*dk]
		vr, acc := buf[2*dk:2*dk+dv], buf[2*dk+dv:2*dk+2*dv]
		var mrow []float32
		if mask != nil {
			mrow = buf[2*dk+2*dv:]
		}
		for r := lo; r < hi; r++ {
			iq1, iq2, iq3 := ops.RowIndex(q.Ne, r)
			q.Row(iq1, iq2, iq3, qr)
			if k.Type == ops.F16 {
				for i, x := range qr {
					qr[i] = ops.RoundF16(x)
				}
			}
			if mask != nil {
				mask.Row(iq1, iq2%mask.Ne[2], iq3%mask.Ne[3], mrow)
			}
			sl := slope(iq2)
			ik2, ik3 := iq2/rk2, iq3/rk3
			iv2, iv3 := iq2/rv2, iq3/rv3
			clear(acc)
			S, M := float32(0), negInf
			for ic := int64(0); ic < nkv; ic++ {
				if ic&15 == 15 {
					ops.ClearUpper()
				}
				mv := float32(0)
				if mask != nil {
					mv = sl * mrow[ic]
					if mv == negInf {
						continue
					}
				}
				k.Row(ic, ik2, ik3, kr)
				var dot float64
				for i, x := range kr {
					dot += float64(x * qr[i])
				}
				s := float32(dot) * scale
				if softcap != 0 {
					s = softcap * cpu.Tanhf32(s)
				}
				ms, vs := faStep(s+mv, &M)
				if ms != 1 {
					for i := range acc {
						acc[i] *= ms
					}
					if f16V {
						ops.RoundF16Slice(acc)
					}
				}
				v.Row(ic, iv2, iv3, vr)
				for i, x := range vr {
					acc[i] += float32(x * vs)
				}
				if f16V {
					ops.RoundF16Slice(acc)
				}
				S = float32(S*ms) + vs
			}
			faFinish(dst, acc, sinks, S, M, iq1, iq2, iq3)
		}
	})
	return nil
}

// faStep is the online softmax's update for the score s of a key: with a
// new maximum (s > M) M becomes s and the accumulator and sum are scaled
// by ms = expf(M_old - s), the key's value weighted by vs = 1; otherwise
// ms = 1 and vs = expf(s - M). (A first key turns M = -inf into s with
// ms = 0, which the zero accumulator and sum do not notice.)
func faStep(s float32, M *float32) (ms, vs float32) {
	if s > *M {
		m := *M
		*M = s
		return cpu.Expf32(m - s), 1
	}
	return 1, cpu.Expf32(s - *M)
}

// faExps runs the online softmax of one query row over its n scores
// sc[i*stride] (mask row mrow, nil for none, times the slope sl) up to
// the exps: key i's mode[i*stride] is 0 (masked out), 2 (a new maximum M;
// exps[i] = expf(M_old - M), its ms) or 1 (exps[i] = expf(s - M), its vs).
// It returns the final maximum. The exps run in vector lanes where the
// build has them (expShiftRow).
func (ks *Kernels) faExps(sc []float32, stride, n int, mrow []float32, sl, scale, softcap float32, exps []float32, mode []uint8) float32 {
	negInf := float32(math.Inf(-1))
	M := negInf
	for i := range n {
		if i&63 == 63 {
			ops.ClearUpper()
		}
		mv := float32(0)
		if mrow != nil {
			if mv = sl * mrow[i]; mv == negInf {
				mode[i*stride] = 0
				continue
			}
		}
		s := sc[i*stride] * scale
		if softcap != 0 {
			s = softcap * cpu.Tanhf32(s)
		}
		s += mv
		// The exp arguments first, their exps below.
		if s > M {
			exps[i] = M - s
			M = s
			mode[i*stride] = 2
		} else {
			exps[i] = s - M
			mode[i*stride] = 1
		}
	}
	e := exps[:n]
	if !ks.ExpShiftRow(e, 0) { // x - 0 is x: the exps of the arguments
		for i, x := range e {
			e[i] = cpu.Expf32(x)
		}
	}
	return M
}

// faHeadRow is row j of the query rows that read K/V head head (ik2 +
// k.ne2·ik3), rk2·rk3 query heads to a K/V head: query position j % nq of
// query head j / nq of the head's rk2·rk3.
func faHeadRow(q, k *ops.Tensor, rk2, rk3, head, j int64) (i1, i2, i3 int64) {
	nq := q.Ne[1]
	ik2, ik3 := head%k.Ne[2], head/k.Ne[2]
	h := j / nq
	return j % nq, ik2*rk2 + h%rk2, ik3*rk3 + h/rk2
}

// faFinish ends query row (iq1, iq2, iq3) after its last key: its sink,
// if any, enters the softmax (without a value, and the accumulator's
// scaling not rounded), then dst = acc/S (0 if S = 0).
func faFinish(dst *ops.Tensor, acc []float32, sinks *ops.Tensor, S, M float32, iq1, iq2, iq3 int64) {
	if sinks != nil {
		ms, vs := faStep(sinks.F32(iq2, 0, 0, 0), &M)
		if ms != 1 {
			for i := range acc {
				acc[i] *= ms
			}
		}
		S = float32(S*ms) + vs
	}
	inv := float32(0)
	if S != 0 {
		inv = 1 / S
	}
	for i := range acc {
		acc[i] *= inv
	}
	dst.SetRow(iq2, iq1, iq3, acc)
}

// rowsInBuf reports whether every row of x (Ne[0] dense elements of its
// type, Nb[0] == TypeSize) lies inside x.Buf.
func rowsInBuf(x *ops.Tensor) bool {
	for d := 0; d < ops.MaxDims; d++ {
		if x.Ne[d] < 1 {
			return false
		}
	}
	if x.Nb[0] != uint64(x.Type.TypeSize()) || x.Type.BlockSize() != 1 {
		return false
	}
	end := x.RowOffset(x.Ne[1]-1, x.Ne[2]-1, x.Ne[3]-1) + x.Type.RowSize(x.Ne[0])
	return end <= uint64(len(x.Buf))
}
