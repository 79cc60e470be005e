package runner

import (
	"bufio"
	"bytes"
	"context"
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
func saveOutputs(ctx context.Context, dir string, outs []exec.OutputResult) error {
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
			if err := WriteNpy(ctx, base+f.suffix, f.t); err != nil {
				return fmt.Errorf("--save-outputs: %w", err)
			}
		}
	}
	return nil
}

// WriteNpy saves a tensor as a float32 .npy file through an outfile.File.
func WriteNpy(ctx context.Context, path string, t *ops.Tensor) error {
	f, err := outfile.CreateContext(ctx, path)
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

// SaveInputs writes the case as a run built it into dir: every leaf as
// <leaf>.npy (float and quantized leaves as the float32 values they
// hold, integer leaves as <i4 or <i8) and case.yaml, a case file that
// reads those files and replays exactly that run.
func SaveInputs(ctx context.Context, dir string, pc *Planned) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &outfile.PathError{Path: dir, Msg: "--save-inputs: " + err.Error()}
	}
	c := pc.Case
	inits := map[string]graph.Init{}
	names := uniqueNames{}
	for _, ts := range c.Tensors {
		v, ok := pc.Graph.Lookup(ts.Name)
		if !ok {
			return fmt.Errorf("--save-inputs: leaf %s is not in the graph", ts.Name)
		}
		file := names.name(ts.Name) + ".npy"
		if err := writeLeafNpy(ctx, filepath.Join(dir, file), pc.Graph.Values[v].T); err != nil {
			return fmt.Errorf("--save-inputs: %w", err)
		}
		inits[ts.Name] = graph.Init{Func: "npy", Npy: file}
	}
	saved := *c
	saved.Description = fmt.Sprintf("the inputs of %s as et run-op ran it (saved with --save-inputs)", c.File)
	if c.Description != "" {
		saved.Description = c.Description + "; " + saved.Description
	}
	saved.Seed = 0 // every leaf is read from its file
	var b bytes.Buffer
	if err := graph.EncodeCase(&b, &saved, inits); err != nil {
		return fmt.Errorf("--save-inputs: %w", err)
	}
	return outfile.WriteFileContext(ctx, filepath.Join(dir, "case.yaml"), b.Bytes())
}

// writeLeafNpy saves a leaf: integers exactly, anything else as float32.
func writeLeafNpy(ctx context.Context, path string, t *ops.Tensor) error {
	if !t.Type.Integer() {
		return WriteNpy(ctx, path, t)
	}
	f, err := outfile.CreateContext(ctx, path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	ints := make([]int64, 0, t.NElements())
	for i3 := range t.Ne[3] {
		for i2 := range t.Ne[2] {
			for i1 := range t.Ne[1] {
				for i0 := range t.Ne[0] {
					ints = append(ints, t.Int(i0, i1, i2, i3))
				}
			}
		}
	}
	err = graph.EncodeNpyInts(w, graph.NpyShape(t.Ne[:]), ints, t.Type == ops.I64)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Abort()
		return f.Fail(err)
	}
	return f.Commit()
}
