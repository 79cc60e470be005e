package ops

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// mul_mat_id: the expert matmul of mixture-of-experts models
// (ggml_mul_mat_id(as, b, ids)):
//
//	as  [k, m, n_as]            the stacked expert matrices (any float or quantized type with a host codec)
//	b   [k, n_b, n_tokens]      activations, f32 or f16 (n_b is 1 or n_used)
//	ids [n_used, n_tokens] i32  the experts chosen per token
//	dst [m, n_used, n_tokens]   dst[:, e, t] = as[:, :, ids[e, t]] · b[:, e % n_b, t]
//
// with exactly MulMat's numerics (b converted to the expert type's vec_dot
// type, quantized dot products per block; other types dequantized first,
// as mulmat_generic.go says), so each (e, t) column is
// bit-identical to a mul_mat of that expert with that activation row. An
// expert id outside [0, n_as) is an error.

func inferMulMatID(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	as, b, ids := srcs[0], srcs[1], srcs[2]
	var zero [MaxDims]int64
	if as.Type.Integer() {
		return 0, zero, shapeErr(OpMulMatID, "as is %s, want a float or quantized type", as.Type)
	}
	if err := wantTypes(OpMulMatID, "b", b.Type, F32, F16); err != nil {
		return 0, zero, err
	}
	if err := wantTypes(OpMulMatID, "ids", ids.Type, I32); err != nil {
		return 0, zero, err
	}
	switch {
	case as.Ne[0] != b.Ne[0]:
		return 0, zero, shapeErr(OpMulMatID, "as.ne0 = %d != b.ne0 = %d (the shared dimension k)", as.Ne[0], b.Ne[0])
	case as.Ne[3] != 1:
		return 0, zero, shapeErr(OpMulMatID, "as %s has ne3 = %d, want 1", as.ShapeString(), as.Ne[3])
	case b.Ne[3] != 1:
		return 0, zero, shapeErr(OpMulMatID, "b %s has ne3 = %d, want 1", b.ShapeString(), b.Ne[3])
	case ids.Ne[2] != 1 || ids.Ne[3] != 1:
		return 0, zero, shapeErr(OpMulMatID, "ids %s is not 2-D", ids.ShapeString())
	case ids.Ne[1] != b.Ne[2]:
		return 0, zero, shapeErr(OpMulMatID, "ids.ne1 = %d != b.ne2 = %d (the number of tokens)", ids.Ne[1], b.Ne[2])
	case b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0:
		return 0, zero, shapeErr(OpMulMatID, "ids.ne0 = %d is not a multiple of b.ne1 = %d", ids.Ne[0], b.Ne[1])
	case as.Nb[0] != uint64(as.Type.TypeSize()):
		return 0, zero, shapeErr(OpMulMatID, "as rows are not dense (nb0 = %d, want %d)", as.Nb[0], as.Type.TypeSize())
	}
	return F32, [MaxDims]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1}, nil
}

func refMulMatID(dst *Tensor, srcs []*Tensor, _ Params) error {
	as, b, ids := srcs[0], srcs[1], srcs[2]
	if err := CodecError(as.Type); err != nil {
		return err
	}
	nUsed, nTok := ids.Ne[0], ids.Ne[1]
	expert := make([]int64, nUsed*nTok)
	for t := int64(0); t < nTok; t++ {
		for e := int64(0); e < nUsed; e++ {
			id := ids.Int(e, t, 0, 0)
			if id < 0 || id >= as.Ne[2] {
				return shapeErr(OpMulMatID, "ids[%d, %d] = %d is not an expert (want 0 to %d)", e, t, id, as.Ne[2]-1)
			}
			expert[t*nUsed+e] = id
		}
	}
	if as.Ne[0] == 0 {
		for t := int64(0); t < nTok; t++ {
			for e := int64(0); e < nUsed; e++ {
				for i := int64(0); i < as.Ne[1]; i++ {
					dst.SetF32(i, e, t, 0, 0)
				}
			}
		}
		return nil
	}
	act := prepareActivations(as, b)
	defer act.free()
	m := as.Ne[1]
	nb1 := b.Ne[1]
	tiles := (m + mulMatRowTile - 1) / mulMatRowTile
	rowBytes := as.Type.RowSize(as.Ne[0])
	kt := kernelType(as.Type)
	if act.has8R(kt) {
		mulMatID8(dst, as, act, kt, expert, nUsed, nb1)
		return nil
	}
	ParallelFor(int(tiles*nUsed*nTok), 1, func(lo, hi int) {
		var deq *dequantTile
		if kt != as.Type {
			deq = newDequantTile(as)
		}
		for w := int64(lo); w < int64(hi); w++ {
			tile, col := w%tiles, w/tiles
			e, t := col%nUsed, col/nUsed
			id := expert[col]
			r := int((e % nb1) + nb1*t)
			r0, r1 := tile*mulMatRowTile, min(m, (tile+1)*mulMatRowTile)
			if deq != nil {
				deq.load(int(r0), int(r1), int(id), 0)
			}
			for i01 := r0; i01 < r1; i01++ {
				var row []byte
				if deq != nil {
					row = deq.row(int(i01))
				} else {
					row = as.RowBytes(i01, id, 0)[:rowBytes]
				}
				v := act.dot1(kt, row, r)
				binary.LittleEndian.PutUint32(dst.Buf[dst.ElemOffset(i01, e, t, 0):], math.Float32bits(v))
			}
		}
	})
	return nil
}

// flopsMulMatID counts 2·k·m per used expert and token, as test-backend-ops
// does.
func flopsMulMatID(_ *Tensor, srcs []*Tensor, _ Params) int64 {
	as, ids := srcs[0], srcs[2]
	return 2 * as.Ne[0] * as.Ne[1] * ids.Ne[0] * ids.Ne[1]
}

// mulMatID8 is refMulMatID's loop with the eight-row kernels
// (mulmat_tile.go): the columns are grouped by expert, and a work item is
// one tile of one expert's rows against all the columns that use it, so
// each weight row is read once per call.
func mulMatID8(dst, as *Tensor, act *actRows, kt Type, expert []int64, nUsed, nb1 int64) {
	nAs := int(as.Ne[2])
	cols := make([][]int, nAs) // per expert, the columns t*nUsed+e using it
	for c, id := range expert {
		cols[id] = append(cols[id], c)
	}
	var used []int
	for id, c := range cols {
		if len(c) > 0 {
			used = append(used, id)
		}
	}
	m := int(as.Ne[1])
	tiles := (m + mulMatRowTile - 1) / mulMatRowTile
	rowBytes := int(as.Type.RowSize(as.Ne[0]))
	nb := int(as.Ne[0]) / QK8_0
	ParallelFor(tiles*len(used), 1, func(lo, hi int) {
		var w8 rows8
		for w := lo; w < hi; w++ {
			tile, id := w%tiles, used[w/tiles]
			r0, r1 := tile*mulMatRowTile, min(m, (tile+1)*mulMatRowTile)
			rowAt := func(i01 int) []byte { return as.RowBytes(int64(i01), int64(id), 0)[:rowBytes] }
			put := func(i01, c int, v float32) {
				e, t := int64(c)%nUsed, int64(c)/nUsed
				binary.LittleEndian.PutUint32(dst.Buf[dst.ElemOffset(int64(i01), e, t, 0):], math.Float32bits(v))
			}
			actRow := func(c int) int {
				e, t := int64(c)%nUsed, int64(c)/nUsed
				return int((e % nb1) + nb1*t)
			}
			i01 := r0
			for ; i01+8 <= r1; i01 += 8 {
				var rws [8][]byte
				for i := range rws {
					rws[i] = rowAt(i01 + i)
				}
				if fused8(len(cols[id])) {
					w8.setRows(kt, &rws, nb)
				} else {
					w8.load(kt, &rws, nb)
				}
				// The kernels prefetch the rows after these: this tile's
				// next eight, or the next work item's first.
				var nx unsafe.Pointer
				if i01+8 < r1 {
					nx = unsafe.Pointer(&rowAt(i01 + 8)[0])
				} else if w+1 < hi {
					t1, id1 := (w+1)%tiles, used[(w+1)/tiles]
					nx = unsafe.Pointer(&as.RowBytes(int64(t1*mulMatRowTile), int64(id1), 0)[0])
				}
				w8.setNext(nx, int(as.Nb[1]), rowBytes)
				cs := cols[id]
				if act.has8R2(kt, &w8) {
					for ; len(cs) >= 2; cs = cs[2:] {
						out, out2 := act.dot8R2(kt, &w8, actRow(cs[0]), actRow(cs[1]))
						for j := range out {
							put(i01+j, cs[0], out[j])
							put(i01+j, cs[1], out2[j])
						}
					}
				}
				for _, c := range cs {
					out := act.dot8R(kt, &w8, actRow(c))
					for j, v := range out {
						put(i01+j, c, v)
					}
				}
			}
			for ; i01 < r1; i01++ {
				for _, c := range cols[id] {
					put(i01, c, act.dot1(kt, rowAt(i01), actRow(c)))
				}
			}
		}
	})
}
