package refmath

import (
	"github.com/ainekko/et/internal/ops"
)

func refSet(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	a, b := srcs[0], srcs[1]
	nb, off, err := ops.SetView(a, p)
	if err != nil {
		return err
	}
	ts := uint64(nb[0])
	for e := int64(0); e < a.NElements(); e++ {
		i := unflatten(a.Ne, e)
		copyElem(dst, i, a, i, ts)
	}
	for e := int64(0); e < b.NElements(); e++ {
		j := unflatten(b.Ne, e)
		l := off + j[0]*nb[0] + j[1]*nb[1] + j[2]*nb[2] + j[3]*nb[3]
		copyElem(dst, unflatten(a.Ne, l/nb[0]), b, j, ts)
	}
	return nil
}
