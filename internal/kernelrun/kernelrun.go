// Package kernelrun runs one kernel ELF on a device outside ggml (et
// run-kernel): buffers and a params blob described on the command line
// (kernelargs), malloc, upload, load, launch, sync, read back, and a typed
// report of it.
package kernelrun

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/kernelargs"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/outfile"
	"github.com/ainekko/et/internal/sysemu"
)

// Options are a kernel run: the ELF, its buffers, params and dumps, the
// launch flags and the device (Spec, with the Host that hears progress
// and warnings).
type Options struct {
	ELF string
	// Name is the kernel name: the ELF's base name without .elf.
	Name  string
	Bufs  []kernelargs.Buf
	Args  []kernelargs.Arg
	Dumps []kernelargs.Dump
	// ShireMask is the launch mask; 0 means the device's whole mask.
	ShireMask uint64
	NoBarrier bool
	FlushL3   bool
	Spec      registry.Spec
	// MaxHostMemory is --max-host-memory: the host memory the run may
	// need (HostBytes), when less than MemAvailable; 0: MemAvailable.
	MaxHostMemory uint64
}

// HostBytes is the host memory a run of o needs, about: every buffer's
// initial bytes and the device's copy of them (the reference device keeps
// it in this process, sysemu's worker and emulator on this host), the
// largest dump read back and its file's bytes, and the params blob.
func HostBytes(o Options) uint64 {
	var bufs, dump uint64
	sizes := map[string]uint64{}
	for _, b := range o.Bufs {
		bufs += b.Size
		sizes[b.Name] = b.Size
	}
	for _, d := range o.Dumps {
		dump = max(dump, sizes[d.Name])
	}
	return 2*bufs + 2*dump + kernelargs.MaxParams
}

// Report is a kernel run (schema et.run-kernel/v1).
type Report struct {
	Schema   string `json:"schema"`
	Backend  string `json:"backend"`
	Device   string `json:"device"`
	Kernel   string `json:"kernel"`
	ELF      string `json:"elf"`
	ELFBytes int    `json:"elf_bytes"`
	// ShireMask is the launch mask; 0 means the device's whole mask.
	ShireMask uint64               `json:"shire_mask"`
	Barrier   bool                 `json:"barrier"`
	FlushL3   bool                 `json:"flush_l3"`
	Buffers   []Buffer             `json:"buffers"`
	Args      []kernelargs.Field   `json:"args"`
	ArgsBytes int                  `json:"args_bytes"`
	Status    string               `json:"status"`
	TimeNS    int64                `json:"time_ns"`
	Faults    []driver.StreamError `json:"faults,omitempty"`
	Dumps     []Dump               `json:"dumps,omitempty"`
	Warnings  []string             `json:"warnings,omitempty"`
}

// Schema is the schema of Report.
const Schema = "et.run-kernel/v1"

// Buffer is a device buffer of the run.
type Buffer struct {
	Name      string `json:"name"`
	SizeBytes uint64 `json:"size_bytes"`
	Addr      uint64 `json:"addr"`
	Init      string `json:"init"`
}

// Dump is a buffer read back into a file after the run.
type Dump struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	SizeBytes uint64 `json:"size_bytes"`
}

// RefELFError is an ELF the reference device cannot run: it runs only its
// built-in models of the ggml-et kernels, by name. It is a
// driver.ErrUnavailable (exit 3).
type RefELFError struct {
	ELF string
	Err error
}

func (e *RefELFError) Error() string {
	return fmt.Sprintf("reference device: %v: it runs only its built-in models of the ggml-et kernels, by name; run %s on --backend sysemu or pcie", e.Err, e.ELF)
}

// Unwrap makes the error a driver.ErrUnavailable.
func (e *RefELFError) Unwrap() error { return driver.ErrUnavailable }

// Run runs the kernel once. Everything read from files is read before
// anything boots; --timeout (Spec.Timeout) counts from the device's open.
// A kernel fault is no error: the report's status is "fault", with the
// stream errors, and the buffers are read back after it too.
func Run(ctx context.Context, o Options) (_ *Report, runErr error) {
	s := o.Spec
	doc := &Report{Schema: Schema, Backend: s.Backend, Kernel: o.Name, ELF: o.ELF,
		ShireMask: o.ShireMask, Barrier: !o.NoBarrier, FlushL3: o.FlushL3,
		Buffers: []Buffer{}, Args: []kernelargs.Field{}}
	if err := registry.Available(s.Backend); err != nil {
		return nil, err
	}
	if err := infile.AdmitMemory("the run (buffers, their device copies, dumps)", HostBytes(o), o.MaxHostMemory); err != nil {
		return nil, err
	}
	// Everything read from files is read before anything boots.
	elf, warns, err := sysemu.ReadKernel(o.ELF)
	if err != nil {
		return nil, err
	}
	doc.ELFBytes = len(elf)
	inits := make([][]byte, len(o.Bufs))
	for i, kb := range o.Bufs {
		if inits[i], err = bufInit(ctx, kb); err != nil {
			return nil, err
		}
	}
	files := map[string][]byte{}
	for _, a := range o.Args {
		if a.File != "" {
			if _, ok := files[a.File]; ok {
				continue
			}
			data, err := infile.ReadFile(ctx, a.File, kernelargs.MaxParams)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, infile.Errorf("--arg %q: %s: %s", a.Spec, a.File, infile.ErrText(err))
			}
			files[a.File] = data
			if err := kernelargs.CheckSize(o.Args, files); err != nil {
				return nil, infile.Errorf("--arg %q: %v", a.Spec, err)
			}
		}
	}
	if info, ok := kernelmap.LookupKernel(o.Name); ok && info.AllShires != "" && o.ShireMask != 0 && o.ShireMask&0xFFFFFFFF != 0xFFFFFFFF {
		warns = append(warns, fmt.Sprintf("--shire-mask 0x%x: %s %s", o.ShireMask, o.Name, info.AllShires))
	}
	warnf, logf := quiet(s.Host.Warnf), quiet(s.Host.Logf)
	for _, w := range warns {
		warnf("%s", w)
	}
	doc.Warnings = warns

	// --timeout starts here: reading the inputs does not count.
	ctx, cancel := registry.WithTimeout(ctx, s.Backend, s.Timeout, "run-kernel")
	defer cancel()
	h, err := registry.Open(ctx, s)
	if err != nil {
		return nil, err
	}
	defer func() { h.Close(runErr) }()
	dev := h.Device
	doc.Device = dev.Info().Name
	fail := func(err error) error {
		if registry.IsWorkerFailure(err) {
			return err
		}
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); errors.Is(cause, driver.ErrTimeout) {
				return cause
			}
		}
		return err
	}

	addrs := map[string]uint64{}
	for i, kb := range o.Bufs {
		p, err := dev.Malloc(ctx, kb.Size, 64)
		if err != nil {
			return nil, fail(fmt.Errorf("--buf %s: malloc %d bytes: %w", kb.Name, kb.Size, err))
		}
		addrs[kb.Name] = uint64(p)
		if err := dev.Write(ctx, p, inits[i]); err != nil {
			return nil, fail(fmt.Errorf("--buf %s: upload: %w", kb.Name, err))
		}
		doc.Buffers = append(doc.Buffers, Buffer{Name: kb.Name, SizeBytes: kb.Size, Addr: uint64(p), Init: kb.Init})
	}
	blob, fields := kernelargs.Encode(o.Args, addrs, files)
	doc.Args, doc.ArgsBytes = fields, len(blob)

	k, err := dev.LoadKernel(ctx, o.Name, elf)
	if err != nil {
		if s.Backend == string(driver.KindRef) {
			return nil, &RefELFError{ELF: o.ELF, Err: err}
		}
		return nil, fail(fmt.Errorf("load %s: %w", o.ELF, err))
	}
	if s.Backend == string(driver.KindRef) {
		w := fmt.Sprintf("the reference device does not run ELFs: it runs its built-in model of %s with these params", o.Name)
		warnf("%s", w)
		doc.Warnings = append(doc.Warnings, w)
	}
	logf("launching %s (%d bytes of params) on %s", o.Name, len(blob), doc.Device)
	start := now(s.Host)
	if err := dev.Launch(ctx, k, blob, driver.LaunchOptions{ShireMask: o.ShireMask, Barrier: !o.NoBarrier, FlushL3: o.FlushL3}); err != nil {
		return nil, fail(fmt.Errorf("launch %s: %w", o.Name, err))
	}
	serrs, err := dev.Sync(ctx)
	if err != nil {
		return nil, fail(fmt.Errorf("wait for %s: %w", o.Name, err))
	}
	doc.TimeNS = now(s.Host).Sub(start).Nanoseconds()
	doc.Status = "ok"
	if len(serrs) > 0 {
		doc.Status, doc.Faults = "fault", serrs
	}
	// Buffers are read back after a fault too: the device stays usable
	// and what the kernel wrote before faulting helps.
	sizes := map[string]uint64{}
	for _, kb := range o.Bufs {
		sizes[kb.Name] = kb.Size
	}
	for _, d := range o.Dumps {
		buf := make([]byte, sizes[d.Name])
		if err := dev.Read(ctx, driver.DevPtr(addrs[d.Name]), buf); err != nil {
			return nil, fail(fmt.Errorf("--dump %s: read back: %w", d.Name, err))
		}
		if err := writeDump(ctx, d.File, buf); err != nil {
			return nil, fmt.Errorf("--dump %s: %w", d.Name, err)
		}
		doc.Dumps = append(doc.Dumps, Dump{Name: d.Name, File: d.File, SizeBytes: uint64(len(buf))})
	}
	return doc, nil
}

// bufInit builds a buffer's initial bytes.
func bufInit(ctx context.Context, kb kernelargs.Buf) ([]byte, error) {
	buf := make([]byte, kb.Size)
	var data []byte
	switch {
	case kb.Init == "zeros":
		return buf, nil
	case kb.Init == "pattern":
		for i := 0; i+4 <= len(buf); i += 4 {
			binary.LittleEndian.PutUint32(buf[i:], uint32(i/4))
		}
		return buf, nil
	case strings.HasSuffix(kb.Init, ".npy"):
		a, err := graph.ReadNpyFileMax(kb.Init, int64(kb.Size))
		if err != nil {
			return nil, fmt.Errorf("--buf %s: %w", kb.Name, err)
		}
		data = a.Data
	default:
		b, err := infile.ReadFile(ctx, kb.Init, int64(kb.Size))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var tl *infile.TooLargeError
			if errors.As(err, &tl) {
				return nil, infile.Errorf("--buf %s: %s holds %d bytes, more than the buffer's %d", kb.Name, kb.Init, tl.Size, kb.Size)
			}
			return nil, infile.Errorf("--buf %s: %s: %s (INIT is zeros, pattern, FILE.npy or FILE)", kb.Name, kb.Init, infile.ErrText(err))
		}
		data = b
	}
	if uint64(len(data)) > kb.Size {
		return nil, infile.Errorf("--buf %s: %s holds %d bytes, more than the buffer's %d", kb.Name, kb.Init, len(data), kb.Size)
	}
	copy(buf, data)
	return buf, nil
}

// writeDump writes a buffer read back: raw bytes, or a uint8 .npy.
func writeDump(ctx context.Context, path string, data []byte) error {
	if strings.HasSuffix(path, ".npy") {
		hdr := fmt.Sprintf("{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }", len(data))
		total := 10 + len(hdr) + 1
		hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
		var b bytes.Buffer
		b.WriteString("\x93NUMPY\x01\x00")
		binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
		b.WriteString(hdr)
		b.Write(data)
		data = b.Bytes()
	}
	return outfile.WriteFileContext(ctx, path, data)
}

func quiet(f func(format string, args ...any)) func(format string, args ...any) {
	if f == nil {
		return func(string, ...any) {}
	}
	return f
}

func now(h registry.Host) time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}
