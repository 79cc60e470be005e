package mulmat

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/parallel"
)

// RefMulMatID is MUL_MAT_ID's reference math (srcs = as, b, ids).
func (ks *Kernels) RefMulMatID(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	as, b, ids := srcs[0], srcs[1], srcs[2]
	if err := ops.CodecError(as.Type); err != nil {
		return err
	}
	nUsed, nTok := ids.Ne[0], ids.Ne[1]
	expert := make([]int64, nUsed*nTok)
	for t := int64(0); t < nTok; t++ {
		for e := int64(0); e < nUsed; e++ {
			id := ids.Int(e, t, 0, 0)
			if id < 0 || id >= as.Ne[2] {
				return ops.ShapeErr(ops.OpMulMatID, "ids[%d, %d] = %d is not an expert (want 0 to %d)", e, t, id, as.Ne[2]-1)
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
	act := ks.prepareActivations(as, b)
	defer act.free()
	m := as.Ne[1]
	nb1 := b.Ne[1]
	tiles := (m + mulMatRowTile - 1) / mulMatRowTile
	rowBytes := as.Type.RowSize(as.Ne[0])
	kt := kernelType(as.Type)
	if act.has8R(kt) {
		ks.mulMatID8(dst, as, act, kt, expert, nUsed, nb1)
		return nil
	}
	parallel.For(int(tiles*nUsed*nTok), 1, func(lo, hi int) {
		var deq *dequantTile
		if kt != as.Type {
			deq = newDequantTile(ks, as)
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

// mulMatID8 is RefMulMatID's loop with the eight-row kernels
// (mulmat_tile.go): the columns are grouped by expert, and a work item is
// one tile of one expert's rows against all the columns that use it, so
// each weight row is read once per call.
func (ks *Kernels) mulMatID8(dst, as *ops.Tensor, act *actRows, kt ops.Type, expert []int64, nUsed, nb1 int64) {
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
	nb := int(as.Ne[0]) / codec.QK8_0
	parallel.For(tiles*len(used), 1, func(lo, hi int) {
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
				if ks.fused8(len(cols[id])) {
					w8.setRows(kt, &rws, nb)
				} else {
					w8.load(ks, kt, &rws, nb)
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
