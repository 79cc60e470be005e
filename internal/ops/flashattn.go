package ops

import "math"

// flash_attn_ext (ggml_flash_attn_ext(q, k, v, mask, scale, max_bias,
// logit_softcap)), as ggml's CPU computes it on its reference path (one
// query row at a time, online softmax):
//
//	q [d_k, n_q, n_head, n_batch] f32
//	k [d_k, n_kv, n_head_kv, n_batch_kv] f16 or f32
//	v [d_v, n_kv, n_head_kv, n_batch_kv] f16 or f32 (not transposed)
//	mask [n_kv, >= n_q, ne2, ne3] f16 or f32, broadcast over heads and batches
//	sinks [n_head] f32 (optional, ggml_flash_attn_ext_add_sinks; without
//	    a mask the sinks param says that the fourth source is the sinks)
//	dst [d_v, n_head, n_q, n_batch] f32 — permuted: dst[:, h, i, b] is
//	    query i of head h
//
// Grouped-query attention: head h reads k/v head h / (n_head/n_head_kv),
// and batch b reads k/v batch b / (n_batch/n_batch_kv). For each key j:
// s = (k_j·q)·scale (scale is divided by logit_softcap first and
// s = softcap·tanh(s) applied when logit_softcap != 0), then
// s += slope·mask[j] (keys whose mask is -inf are skipped); the running
// max M, sum S and accumulator V are updated with expf in float32. With an
// f16 K, q is rounded to f16 before the dot product; with an f16 V, the
// accumulator is kept in f16 (each update rounded), as on the CPU.
// With sinks, the sink s = sinks[h] of query head h then enters the
// softmax as one more logit without a value: if s > M, V *= expf(M-s),
// S = S*expf(M-s) + 1, otherwise S += expf(s-M). Finally dst = V/S (0 if
// S = 0). K and V of another type than f16 and f32 have no host math here
// (ggml's CPU converts q to K's vec_dot type for those).

func inferFlashAttn(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	q, k, v := srcs[0], srcs[1], srcs[2]
	var ne [MaxDims]int64
	if err := wantTypes(OpFlashAttnExt, "q", q.Type, F32); err != nil {
		return 0, ne, err
	}
	for _, t := range []struct {
		name string
		x    *Tensor
	}{{"k", k}, {"v", v}} {
		if t.x.Type.Integer() {
			return 0, ne, shapeErr(OpFlashAttnExt, "%s is %s, want a float or quantized type", t.name, t.x.Type)
		}
	}
	if k.Ne[0] != q.Ne[0] {
		return 0, ne, shapeErr(OpFlashAttnExt, "k.ne0 = %d != q.ne0 = %d (d_k)", k.Ne[0], q.Ne[0])
	}
	if v.Ne[1] != k.Ne[1] {
		return 0, ne, shapeErr(OpFlashAttnExt, "v.ne1 = %d != k.ne1 = %d (n_kv)", v.Ne[1], k.Ne[1])
	}
	for d := 2; d < MaxDims; d++ {
		for _, t := range []struct {
			name string
			x    *Tensor
		}{{"k", k}, {"v", v}} {
			if t.x.Ne[d] == 0 || q.Ne[d]%t.x.Ne[d] != 0 {
				return 0, ne, shapeErr(OpFlashAttnExt, "%s.ne%d = %d does not divide q.ne%d = %d (grouped-query broadcast)", t.name, d, t.x.Ne[d], d, q.Ne[d])
			}
		}
	}
	m, sinks := maskSinks(3, srcs, p)
	if sinks != nil {
		if err := wantTypes(OpFlashAttnExt, "sinks", sinks.Type, F32); err != nil {
			return 0, ne, err
		}
		if sinks.NElements() != q.Ne[2] || sinks.Ne[0] != q.Ne[2] {
			return 0, ne, shapeErr(OpFlashAttnExt, "sinks is %s, want [%d] (one per query head, q.ne2)", sinks.ShapeString(), q.Ne[2])
		}
	}
	if m != nil {
		if err := wantTypes(OpFlashAttnExt, "mask", m.Type, F16, F32); err != nil {
			return 0, ne, err
		}
		if m.Ne[0] != k.Ne[1] {
			return 0, ne, shapeErr(OpFlashAttnExt, "mask.ne0 = %d != n_kv = %d", m.Ne[0], k.Ne[1])
		}
		if m.Ne[1] < q.Ne[1] {
			return 0, ne, shapeErr(OpFlashAttnExt, "mask.ne1 = %d < n_q = %d", m.Ne[1], q.Ne[1])
		}
		for d := 2; d < MaxDims; d++ {
			if m.Ne[d] == 0 || q.Ne[d]%m.Ne[d] != 0 {
				return 0, ne, shapeErr(OpFlashAttnExt, "mask.ne%d = %d does not divide q.ne%d = %d", d, m.Ne[d], d, q.Ne[d])
			}
		}
	}
	return F32, [MaxDims]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}, nil
}

func flopsFlashAttn(_ *Tensor, srcs []*Tensor, _ Params) int64 {
	q, k, v := srcs[0], srcs[1], srcs[2]
	return 2 * q.Ne[1] * q.Ne[2] * q.Ne[3] * k.Ne[1] * (k.Ne[0] + v.Ne[0])
}

func refFlashAttn(dst *Tensor, srcs []*Tensor, p Params) error {
	q, k, v := srcs[0], srcs[1], srcs[2]
	for _, t := range []*Tensor{k, v} {
		if t.Type != F16 && t.Type != F32 {
			return &NoHostMathError{What: "flash_attn_ext with " + t.Type.String() + " K/V"}
		}
	}
	mask, sinks := maskSinks(3, srcs, p)
	scale := p.F32("scale")
	softcap := p.F32("logit_softcap")
	if softcap != 0 {
		scale /= softcap
	}
	slope := alibiSlopes(p.F32("max_bias"), q.Ne[2])
	dk, dv, nkv := q.Ne[0], v.Ne[0], k.Ne[1]
	rk2, rk3 := q.Ne[2]/k.Ne[2], q.Ne[3]/k.Ne[3]
	rv2, rv3 := q.Ne[2]/v.Ne[2], q.Ne[3]/v.Ne[3]
	if flashAttnZ(dst, q, k, v, mask, sinks, scale, softcap, slope) ||
		flashAttnVec(dst, q, k, v, mask, sinks, scale, softcap, slope) ||
		flashAttnF16C(dst, q, k, v, mask, sinks, scale, softcap, slope) {
		return nil
	}
	f16V := v.Type == F16
	negInf := float32(math.Inf(-1))

	// Rows of q: (iq1 = query, iq2 = head, iq3 = batch).
	refParallel(q.NRows(), nkv*(dk+dv), func(lo, hi int64) {
		buf := scratchF32.get(int(2*dk + 2*dv + nkv))
		defer scratchF32.put(buf)
		qr, kr := buf[:dk], buf[dk:2*dk]
		vr, acc := buf[2*dk:2*dk+dv], buf[2*dk+dv:2*dk+2*dv]
		var mrow []float32
		if mask != nil {
			mrow = buf[2*dk+2*dv:]
		}
		for r := lo; r < hi; r++ {
			iq1, iq2, iq3 := rowIndex(q.Ne, r)
			q.Row(iq1, iq2, iq3, qr)
			if k.Type == F16 {
				for i, x := range qr {
					qr[i] = RoundF16(x)
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
					clearUpper()
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
					s = softcap * tanhf32(s)
				}
				ms, vs := faStep(s+mv, &M)
				if ms != 1 {
					for i := range acc {
						acc[i] *= ms
					}
					if f16V {
						roundF16Slice(acc)
					}
				}
				v.Row(ic, iv2, iv3, vr)
				for i, x := range vr {
					acc[i] += float32(x * vs)
				}
				if f16V {
					roundF16Slice(acc)
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
		return expf32(m - s), 1
	}
	return 1, expf32(s - *M)
}

// faExps runs the online softmax of one query row over its n scores
// sc[i*stride] (mask row mrow, nil for none, times the slope sl) up to
// the exps: key i's mode[i*stride] is 0 (masked out), 2 (a new maximum M;
// exps[i] = expf(M_old - M), its ms) or 1 (exps[i] = expf(s - M), its vs).
// It returns the final maximum. The exps run in vector lanes where the
// build has them (expShiftRow).
func faExps(sc []float32, stride, n int, mrow []float32, sl, scale, softcap float32, exps []float32, mode []uint8) float32 {
	negInf := float32(math.Inf(-1))
	M := negInf
	for i := range n {
		if i&63 == 63 {
			clearUpper()
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
			s = softcap * tanhf32(s)
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
	if !expShiftRow(e, 0) { // x - 0 is x: the exps of the arguments
		for i, x := range e {
			e[i] = expf32(x)
		}
	}
	return M
}

// faHeadRow is row j of the query rows that read K/V head head (ik2 +
// k.ne2·ik3), rk2·rk3 query heads to a K/V head: query position j % nq of
// query head j / nq of the head's rk2·rk3.
func faHeadRow(q, k *Tensor, rk2, rk3, head, j int64) (i1, i2, i3 int64) {
	nq := q.Ne[1]
	ik2, ik3 := head%k.Ne[2], head/k.Ne[2]
	h := j / nq
	return j % nq, ik2*rk2 + h%rk2, ik3*rk3 + h/rk2
}

// faFinish ends query row (iq1, iq2, iq3) after its last key: its sink,
// if any, enters the softmax (without a value, and the accumulator's
// scaling not rounded), then dst = acc/S (0 if S = 0).
func faFinish(dst *Tensor, acc []float32, sinks *Tensor, S, M float32, iq1, iq2, iq3 int64) {
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
func rowsInBuf(x *Tensor) bool {
	for d := 0; d < MaxDims; d++ {
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
