package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// rwkvRun runs step for every (sequence, head) in parallel, with the head's
// state loaded into st (st[i·S + j]) and stored back after the last token.
func rwkvRun(dst, state *ops.Tensor, d ops.RWKVDims, step func(st, y []float32, h, t int64)) {
	ss := d.S * d.S
	c := d.S * d.H
	perSeq := d.T / d.NSeqs
	cpu.RefParallel(d.H*d.NSeqs, ss*perSeq, func(lo, hi int64) {
		st := make([]float32, ss)
		y := make([]float32, d.S)
		for w := lo; w < hi; w++ {
			h, q := w%d.H, w/d.H
			readFlat(state, q*ss*d.H+h*ss, st)
			for t := q * perSeq; t < (q+1)*perSeq; t++ {
				clear(y)
				step(st, y, h, t)
				writeFlat(dst, t*c+h*d.S, y)
			}
			writeFlat(dst, d.T*c+q*ss*d.H+h*ss, st)
		}
	})
}

func refWKV6(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	d, err := ops.RWKVShape(ops.OpRWKVWKV6, ops.WKV6Names, srcs, []int{0, 1, 2, 4})
	if err != nil {
		return err
	}
	k, v, r, tf, td := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	rwkvRun(dst, srcs[5], d, func(st, y []float32, h, t int64) {
		kt := make([]float32, d.S)
		vt := make([]float32, d.S)
		rt := make([]float32, d.S)
		tft := make([]float32, d.S)
		tdt := make([]float32, d.S)
		k.Row(h, t, 0, kt)
		v.Row(h, t, 0, vt)
		r.Row(h, t, 0, rt)
		td.Row(h, t, 0, tdt)
		readFlat(tf, h*d.S, tft)
		for i := int64(0); i < d.S; i++ {
			row := st[i*d.S : (i+1)*d.S]
			for j := range row {
				kv := vt[j] * kt[i]
				temp := kv*tft[i] + row[j]
				y[j] += temp * rt[i]
				row[j] = row[j]*tdt[i] + kv
			}
		}
	})
	return nil
}

func refWKV7(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	d, err := ops.RWKVShape(ops.OpRWKVWKV7, ops.WKV7Names, srcs, []int{2, 0, 1, 3, 4, 5})
	if err != nil {
		return err
	}
	r, w, k, v, a, b := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	rwkvRun(dst, srcs[6], d, func(st, y []float32, h, t int64) {
		rows := make([][]float32, 6)
		for i, x := range []*ops.Tensor{r, w, k, v, a, b} {
			rows[i] = make([]float32, d.S)
			x.Row(h, t, 0, rows[i])
		}
		rt, wt, kt, vt, at, bt := rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]
		for i := int64(0); i < d.S; i++ {
			row := st[i*d.S : (i+1)*d.S]
			var sa float32
			for j, sv := range row {
				sa += at[j] * sv
			}
			var res float32
			for j := range row {
				row[j] = row[j]*wt[j] + vt[i]*kt[j] + sa*bt[j]
				res += row[j] * rt[j]
			}
			y[i] = res
		}
	})
	return nil
}
