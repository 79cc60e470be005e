package runner

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/outfile"
)

// saveOutputs writes each output into dir as float32 .npy: <output>.npy
// is what the device produced, <output>.ref.npy the reference it was
// judged against (its node's reference math on the device's inputs), and
// <output>.graph.npy the reference math chained from the leaves.
func saveOutputs(dir string, outs []exec.OutputResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &outfile.PathError{Path: dir, Msg: "--save-outputs: " + err.Error()}
	}
	for _, o := range outs {
		if o.Got == nil || o.Want == nil || o.Chained == nil {
			continue
		}
		base := filepath.Join(dir, SafeName(o.Output))
		for _, f := range []struct {
			suffix string
			t      *ops.Tensor
		}{{".npy", o.Got}, {".ref.npy", o.Want}, {".graph.npy", o.Chained}} {
			if err := WriteNpy(base+f.suffix, f.t); err != nil {
				return fmt.Errorf("--save-outputs: %w", err)
			}
		}
	}
	return nil
}

// WriteNpy saves a tensor as a float32 .npy file through an outfile.File.
func WriteNpy(path string, t *ops.Tensor) error {
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
