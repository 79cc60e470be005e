package ops

// rwkv_wkv6 and rwkv_wkv7: the RWKV time-mixing recurrences, per head of
// size S, in the CPU's scalar float32 order. With C = S·H channels, T
// tokens split evenly into n_seqs sequences (state [S·S·H, n_seqs], head h
// holding the S×S block state[h·S·S + i·S + j]), the result is
// [S·H, T + S·n_seqs]: the T output rows, then the new states (same
// layout as the input state).
//
// wkv6(k, v, r, tf, td, state): k, v, r, td [S, H, T], tf [S, H] (one
// "time_first" bonus per channel). Per token and head, for i, j < S:
//
//	kv = v[j]·k[i];  y[j] += (kv·tf[i] + state[i][j])·r[i];  state[i][j] = state[i][j]·td[i] + kv
//
// wkv7(r, w, k, v, a, b, state): all [S, H, T]. Per token, head and i < S:
//
//	sa = Σ_j a[j]·state[i][j]
//	state[i][j] = state[i][j]·w[j] + v[i]·k[j] + sa·b[j];  y[i] = Σ_j state[i][j]·r[j]

type rwkvDims struct{ s, h, t, nSeqs int64 }

func rwkvShape(op Op, names []string, srcs []*Tensor, perToken []int) (rwkvDims, error) {
	state := srcs[len(srcs)-1]
	ref := srcs[perToken[0]]
	d := rwkvDims{s: ref.Ne[0], h: ref.Ne[1], t: ref.Ne[2], nSeqs: state.Ne[1]}
	for i, x := range srcs {
		if err := wantTypes(op, names[i], x.Type, F32); err != nil {
			return d, err
		}
	}
	for _, i := range perToken {
		if x := srcs[i]; x.Ne != [MaxDims]int64{d.s, d.h, d.t, 1} {
			return d, shapeErr(op, "%s %s, want [S, H, T] = [%d, %d, %d, 1] like %s", names[i], x.ShapeString(), d.s, d.h, d.t, names[perToken[0]])
		}
	}
	switch {
	case d.nSeqs == 0 || state.NElements() != d.s*d.s*d.h*d.nSeqs:
		return d, shapeErr(op, "state %s has %d elements, want S·S·H·n_seqs = %d·%d·%d·%d", state.ShapeString(), state.NElements(), d.s, d.s, d.h, d.nSeqs)
	case d.t%d.nSeqs != 0:
		return d, shapeErr(op, "T = %d tokens do not split evenly into n_seqs = %d sequences", d.t, d.nSeqs)
	}
	return d, nil
}

var (
	wkv6Names = []string{"k", "v", "r", "tf", "td", "state"}
	wkv7Names = []string{"r", "w", "k", "v", "a", "b", "state"}
)

func inferWKV6(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	d, err := rwkvShape(OpRWKVWKV6, wkv6Names, srcs, []int{0, 1, 2, 4})
	if err != nil {
		return 0, [MaxDims]int64{}, err
	}
	if tf := srcs[3]; tf.NElements() != d.s*d.h {
		return 0, [MaxDims]int64{}, shapeErr(OpRWKVWKV6, "tf %s has %d elements, want S·H = %d", tf.ShapeString(), tf.NElements(), d.s*d.h)
	}
	return F32, [MaxDims]int64{d.s * d.h, d.t + d.s*d.nSeqs, 1, 1}, nil
}

func inferWKV7(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	d, err := rwkvShape(OpRWKVWKV7, wkv7Names, srcs, []int{2, 0, 1, 3, 4, 5})
	if err != nil {
		return 0, [MaxDims]int64{}, err
	}
	return F32, [MaxDims]int64{d.s * d.h, d.t + d.s*d.nSeqs, 1, 1}, nil
}

// rwkvRun runs step for every (sequence, head) in parallel, with the head's
// state loaded into st (st[i·S + j]) and stored back after the last token.
func rwkvRun(dst, state *Tensor, d rwkvDims, step func(st, y []float32, h, t int64)) {
	ss := d.s * d.s
	c := d.s * d.h
	perSeq := d.t / d.nSeqs
	refParallel(d.h*d.nSeqs, ss*perSeq, func(lo, hi int64) {
		st := make([]float32, ss)
		y := make([]float32, d.s)
		for w := lo; w < hi; w++ {
			h, q := w%d.h, w/d.h
			readFlat(state, q*ss*d.h+h*ss, st)
			for t := q * perSeq; t < (q+1)*perSeq; t++ {
				clear(y)
				step(st, y, h, t)
				writeFlat(dst, t*c+h*d.s, y)
			}
			writeFlat(dst, d.t*c+q*ss*d.h+h*ss, st)
		}
	})
}

func refWKV6(dst *Tensor, srcs []*Tensor, _ Params) error {
	d, err := rwkvShape(OpRWKVWKV6, wkv6Names, srcs, []int{0, 1, 2, 4})
	if err != nil {
		return err
	}
	k, v, r, tf, td := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	rwkvRun(dst, srcs[5], d, func(st, y []float32, h, t int64) {
		kt := make([]float32, d.s)
		vt := make([]float32, d.s)
		rt := make([]float32, d.s)
		tft := make([]float32, d.s)
		tdt := make([]float32, d.s)
		k.Row(h, t, 0, kt)
		v.Row(h, t, 0, vt)
		r.Row(h, t, 0, rt)
		td.Row(h, t, 0, tdt)
		readFlat(tf, h*d.s, tft)
		for i := int64(0); i < d.s; i++ {
			row := st[i*d.s : (i+1)*d.s]
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

func refWKV7(dst *Tensor, srcs []*Tensor, _ Params) error {
	d, err := rwkvShape(OpRWKVWKV7, wkv7Names, srcs, []int{2, 0, 1, 3, 4, 5})
	if err != nil {
		return err
	}
	r, w, k, v, a, b := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	rwkvRun(dst, srcs[6], d, func(st, y []float32, h, t int64) {
		rows := make([][]float32, 6)
		for i, x := range []*Tensor{r, w, k, v, a, b} {
			rows[i] = make([]float32, d.s)
			x.Row(h, t, 0, rows[i])
		}
		rt, wt, kt, vt, at, bt := rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]
		for i := int64(0); i < d.s; i++ {
			row := st[i*d.s : (i+1)*d.s]
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
