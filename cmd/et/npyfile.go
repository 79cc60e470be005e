package main

import (
	"bufio"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/outfile"
)

// writeTensorNpy saves a tensor as a float32 .npy file through an
// outfile.File.
func writeTensorNpy(path string, t *ops.Tensor) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = graph.EncodeNpyF32(w, graph.NpyShape(t.Ne[:]), t.ToF32())
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Abort()
		return f.Fail(err)
	}
	return f.Commit()
}
