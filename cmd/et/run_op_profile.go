package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ainekko/et/internal/ops/exec"
)

// Files written by et run-op --profile DIR, named as ggml-et names them
// with GGML_ET_PROFILE=DIR.
const (
	profileTraceFile     = "et_runtime_trace.json"
	profileKernelMapFile = "kernel_id.json"
)

// newRunOpProfile creates DIR and returns the recorder of the run, or nil
// without --profile.
func newRunOpProfile(dir string) (*exec.TraceRecorder, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErrorf("--profile: %v", err)
	}
	return exec.NewTraceRecorder(nil), nil
}

// writeRunOpProfile writes DIR/et_runtime_trace.json and DIR/kernel_id.json,
// each through a temporary file renamed when complete. Nothing is written
// without --profile (rec nil).
func writeRunOpProfile(f *factory, dir string, rec *exec.TraceRecorder) error {
	if rec == nil {
		return nil
	}
	var trace, km bytes.Buffer
	if err := rec.WriteTrace(&trace); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := rec.WriteKernelMap(&km); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	tracePath := filepath.Join(dir, profileTraceFile)
	if err := writeFileAtomic(tracePath, trace.Bytes()); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, profileKernelMapFile), km.Bytes()); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	f.logf("wrote %s (%d bytes) and %s (%d kernels)", tracePath, trace.Len(), profileKernelMapFile, len(rec.Kernels()))
	return nil
}
