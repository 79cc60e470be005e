package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/outfile"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelargs"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/sysemu"
)

// runKernelOptions are the flags of et run-kernel.
type runKernelOptions struct {
	ELF string
	// Name is the kernel name: the ELF's base name without .elf.
	Name      string
	Bufs      []kernelargs.Buf
	Args      []kernelargs.Arg
	Dumps     []kernelargs.Dump
	ShireMask uint64
	NoBarrier bool
	FlushL3   bool
	Target    backendOptions
}

func newRunKernelCmd(f *factory, runF func(context.Context, *runKernelOptions) error) *cobra.Command {
	opts := &runKernelOptions{}
	var bufs, args, dumps []string
	var mask string
	cmd := &cobra.Command{
		Use:   "run-kernel <elf> [--buf NAME=SIZE[:INIT]]... [--arg TYPE:VALUE]... [--dump NAME=FILE]... [flags]",
		Short: "Run one kernel ELF on a device, outside ggml",
		Long: `Run a kernel ELF once, with buffers and a params blob you describe on the
command line: a kernel developer's first run of a new kernel, outside ggml.

Buffers (--buf NAME=SIZE[:INIT], SIZE in bytes or with K/M/G (KiB...)):
  zeros (default)   all zero
  pattern           each 4-byte word holds its index (u32 little-endian)
  FILE.npy          the array's raw data (zero-padded to SIZE)
  FILE              the file's bytes (zero-padded to SIZE)

The params blob (--arg, in order, each aligned to its size like a C
struct member):
  u8|u16|u32|u64|i8|i16|i32|i64|f16|f32|f64:VALUE   a scalar (0x... for hex)
  u64:@NAME[+OFF]   the device address of buffer NAME (plus OFF bytes)
  file:PATH         the file's bytes, unaligned
  pad:N             N zero bytes
  align:N           zero bytes up to a multiple of N

After the launch and the wait, --dump NAME=FILE writes a buffer back (raw
bytes; a .npy file gets a uint8 array). Stream errors (DeviceErrorCode,
and per hart: cause, epc, tval) are shown, and exit with status 1.

On sysemu and pcie the ELF runs through the ET runtime in a worker process
(see et run-op and docs/etrt.md for --prefix, --run-dir, --sysemu-opt and
--timeout). The reference device cannot run an ELF: it runs only its
built-in models of the ggml-et kernels, by name, so an ELF named like one
(rms_norm_f32.elf) runs that model with your params.

Exit status: 0 ran, 1 kernel fault or worker died, 2 bad flags or files,
3 backend unavailable or missing install, 4 timeout.`,
		Example: `  $ et run-kernel add_one.elf --backend sysemu --buf x=4K:pattern --buf y=4K --arg u64:@x --arg u64:@y --arg u32:1024 --dump y=y.bin
  $ et run-kernel k.elf --backend sysemu --shire-mask 0x1 --arg file:params.bin --timeout 2m
  $ et run-kernel k.elf --backend pcie -d 0 --buf a=1M:a.npy --arg u64:@a --arg f32:0.5 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			opts.ELF = a[0]
			opts.Name = strings.TrimSuffix(filepath.Base(opts.ELF), ".elf")
			if err := opts.Target.validate(); err != nil {
				return err
			}
			if err := opts.Target.checkDeviceList(false, 1, ""); err != nil {
				return err
			}
			var err error
			if opts.Bufs, err = kernelargs.ParseBufs(bufs); err != nil {
				return &usageError{err}
			}
			known := map[string]bool{}
			for _, b := range opts.Bufs {
				known[b.Name] = true
			}
			if opts.Args, err = kernelargs.ParseArgs(args, known); err != nil {
				return &usageError{err}
			}
			if opts.Dumps, err = kernelargs.ParseDumps(dumps, known); err != nil {
				return &usageError{err}
			}
			if mask != "" {
				if opts.ShireMask, err = strconv.ParseUint(mask, 0, 64); err != nil || opts.ShireMask == 0 {
					return usageErrorf("--shire-mask %q: want a non-zero mask such as 0x1 or 0xFFFFFFFF", mask)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runKernelRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&bufs, "buf", nil, "device buffer `NAME=SIZE[:INIT]` (INIT: zeros|pattern|FILE.npy|FILE; repeatable)")
	fl.StringArrayVar(&args, "arg", nil, "params blob field `TYPE:VALUE` (u32:7, u64:@NAME, f32:0.5, file:params.bin, ...; repeatable, in order)")
	fl.StringArrayVar(&dumps, "dump", nil, "write buffer NAME back to `NAME=FILE` after the run (repeatable)")
	fl.StringVar(&mask, "shire-mask", "", "compute shires to launch on (default: the device's whole mask)")
	fl.BoolVar(&opts.NoBarrier, "no-barrier", false, "launch without waiting for earlier commands on the stream")
	fl.BoolVar(&opts.FlushL3, "flush-l3", false, "flush L3 after the kernel")
	addBackendFlags(cmd, &opts.Target, false)
	return cmd
}

// runKernelDoc is the JSON/YAML document (schema et.run-kernel/v1).
type runKernelDoc struct {
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
	Buffers   []runKernelBuf       `json:"buffers"`
	Args      []kernelargs.Field   `json:"args"`
	ArgsBytes int                  `json:"args_bytes"`
	Status    string               `json:"status"`
	TimeNS    int64                `json:"time_ns"`
	Faults    []driver.StreamError `json:"faults,omitempty"`
	Dumps     []runKernelDumpDoc   `json:"dumps,omitempty"`
	Warnings  []string             `json:"warnings,omitempty"`
}

type runKernelBuf struct {
	Name      string `json:"name"`
	SizeBytes uint64 `json:"size_bytes"`
	Addr      uint64 `json:"addr"`
	Init      string `json:"init"`
}

type runKernelDumpDoc struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	SizeBytes uint64 `json:"size_bytes"`
}

func runKernelRun(ctx context.Context, f *factory, opts *runKernelOptions) (runErr error) {
	b := opts.Target
	doc := runKernelDoc{Schema: "et.run-kernel/v1", Backend: b.Backend, Kernel: opts.Name, ELF: opts.ELF,
		ShireMask: opts.ShireMask, Barrier: !opts.NoBarrier, FlushL3: opts.FlushL3,
		Buffers: []runKernelBuf{}, Args: []kernelargs.Field{}}
	if err := b.available(); err != nil {
		return err
	}
	// Everything read from files is read before anything boots.
	elf, warns, err := sysemu.ReadKernel(opts.ELF)
	if err != nil {
		return err
	}
	doc.ELFBytes = len(elf)
	inits := make([][]byte, len(opts.Bufs))
	for i, kb := range opts.Bufs {
		if inits[i], err = kernelBufInit(ctx, kb); err != nil {
			return err
		}
	}
	files := map[string][]byte{}
	for _, a := range opts.Args {
		if a.File != "" {
			data, err := infile.ReadFile(ctx, a.File, infile.MaxText)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return inputErrorf("--arg %q: %s: %s", a.Spec, a.File, infile.ErrText(err))
			}
			files[a.File] = data
		}
	}
	if info, ok := kernelmap.LookupKernel(opts.Name); ok && info.MatrixEngine && opts.ShireMask != 0 && opts.ShireMask&0xFFFFFFFF != 0xFFFFFFFF {
		warns = append(warns, fmt.Sprintf("%s uses the matrix engine and assumes all 32 shires: with --shire-mask 0x%x it may leave part of its output unwritten and report no error", opts.Name, opts.ShireMask))
	}
	for _, w := range warns {
		f.warnf("%s", w)
	}
	doc.Warnings = warns

	// --timeout starts here: reading the inputs does not count.
	ctx, cancel := b.withTimeout(ctx, "run-kernel")
	defer cancel()
	dev, done, err := b.open(ctx, f, nil)
	if err != nil {
		return err
	}
	defer func() { done(runErr) }()
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
	for i, kb := range opts.Bufs {
		p, err := dev.Malloc(kb.Size, 64)
		if err != nil {
			return fail(fmt.Errorf("--buf %s: malloc %d bytes: %w", kb.Name, kb.Size, err))
		}
		addrs[kb.Name] = uint64(p)
		if err := dev.Write(ctx, p, inits[i]); err != nil {
			return fail(fmt.Errorf("--buf %s: upload: %w", kb.Name, err))
		}
		doc.Buffers = append(doc.Buffers, runKernelBuf{Name: kb.Name, SizeBytes: kb.Size, Addr: uint64(p), Init: kb.Init})
	}
	blob, fields := kernelargs.Encode(opts.Args, addrs, files)
	doc.Args, doc.ArgsBytes = fields, len(blob)

	k, err := dev.LoadKernel(ctx, opts.Name, elf)
	if err != nil {
		if b.Backend == "ref" {
			return &exitError{code: exitUnavailable, err: fmt.Errorf("reference device: %v: it runs only its built-in models of the ggml-et kernels, by name; run %s on --backend sysemu or pcie", err, opts.ELF)}
		}
		return fail(fmt.Errorf("load %s: %w", opts.ELF, err))
	}
	if b.Backend == "ref" {
		w := fmt.Sprintf("the reference device does not run ELFs: it runs its built-in model of %s with these params", opts.Name)
		f.warnf("%s", w)
		doc.Warnings = append(doc.Warnings, w)
	}
	f.logf("launching %s (%d bytes of params) on %s", opts.Name, len(blob), doc.Device)
	start := f.Now()
	if err := dev.Launch(ctx, k, blob, driver.LaunchOptions{ShireMask: opts.ShireMask, Barrier: !opts.NoBarrier, FlushL3: opts.FlushL3}); err != nil {
		return fail(fmt.Errorf("launch %s: %w", opts.Name, err))
	}
	serrs, err := dev.Sync(ctx)
	if err != nil {
		return fail(fmt.Errorf("wait for %s: %w", opts.Name, err))
	}
	doc.TimeNS = f.Now().Sub(start).Nanoseconds()
	doc.Status = "ok"
	if len(serrs) > 0 {
		doc.Status, doc.Faults = "fault", serrs
	}
	// Buffers are read back after a fault too: the device stays usable
	// and what the kernel wrote before faulting helps.
	sizes := map[string]uint64{}
	for _, kb := range opts.Bufs {
		sizes[kb.Name] = kb.Size
	}
	for _, d := range opts.Dumps {
		buf := make([]byte, sizes[d.Name])
		if err := dev.Read(ctx, driver.DevPtr(addrs[d.Name]), buf); err != nil {
			return fail(fmt.Errorf("--dump %s: read back: %w", d.Name, err))
		}
		if err := writeKernelDump(d.File, buf); err != nil {
			return fmt.Errorf("--dump %s: %w", d.Name, err)
		}
		doc.Dumps = append(doc.Dumps, runKernelDumpDoc{Name: d.Name, File: d.File, SizeBytes: uint64(len(buf))})
	}
	if err := f.render(runKernelDocument(doc, f.styles())); err != nil {
		return err
	}
	if len(serrs) > 0 {
		return errSilent
	}
	return nil
}

// kernelBufInit builds a buffer's initial bytes.
func kernelBufInit(ctx context.Context, kb kernelargs.Buf) ([]byte, error) {
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
		a, err := graph.ReadNpyFile(kb.Init)
		if err != nil {
			return nil, fmt.Errorf("--buf %s: %w", kb.Name, err)
		}
		data = a.Data
	default:
		b, err := infile.ReadFile(ctx, kb.Init, int64(min(kb.Size, infile.MaxText)))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, inputErrorf("--buf %s: %s: %s (INIT is zeros, pattern, FILE.npy or FILE)", kb.Name, kb.Init, infile.ErrText(err))
		}
		data = b
	}
	if uint64(len(data)) > kb.Size {
		return nil, inputErrorf("--buf %s: %s holds %d bytes, more than the buffer's %d", kb.Name, kb.Init, len(data), kb.Size)
	}
	copy(buf, data)
	return buf, nil
}

// writeKernelDump writes a buffer read back: raw bytes, or a uint8 .npy.
func writeKernelDump(path string, data []byte) error {
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
	return outfile.WriteFile(path, data)
}

func runKernelDocument(d runKernelDoc, st styles) document {
	bt := table{Title: "Buffers", Headers: []string{"name", "size", "addr", "init", "dump"}, Right: []int{1}}
	dumps := map[string]string{}
	for _, dd := range d.Dumps {
		dumps[dd.Name] = dd.File
	}
	for _, b := range d.Buffers {
		bt.Rows = append(bt.Rows, []string{b.Name, fmtBytes(b.SizeBytes), fmt.Sprintf("0x%x", b.Addr), b.Init, devicesOr(dumps[b.Name], "-")})
	}
	at := table{Title: "Params", Headers: []string{"offset", "size", "arg", "bytes"}, Right: []int{0, 1}}
	for _, a := range d.Args {
		at.Rows = append(at.Rows, []string{strconv.Itoa(a.Offset), strconv.Itoa(a.SizeBytes), a.Spec, devicesOr(a.Value, "-")})
	}
	mask := "all shires"
	if d.ShireMask != 0 {
		mask = fmt.Sprintf("shire mask 0x%x", d.ShireMask)
	}
	at.Notes = append(at.Notes, fmt.Sprintf("%s on %s (%s), %s, %d bytes of params: %s in %s",
		d.Kernel, d.Device, d.Backend, mask, d.ArgsBytes, st.Status(d.Status), runTime(d.TimeNS)))
	tables := []table{bt, at}
	if len(d.Faults) > 0 {
		ft := table{Title: "Kernel faults", Headers: streamErrorHeaders, Right: []int{1, 3}}
		ft.Rows, ft.Notes = streamErrorRows(nil, d.Faults, maxFaultContexts)
		tables = append(tables, ft)
	}
	return document{Data: d, Tables: tables}
}

// runKernelCSV is the raw CSV form: the launch (one row), its buffers,
// params fields, dumps and faults (one row per hart context).
func runKernelCSV(d runKernelDoc) []csvTable {
	type run struct {
		Backend   string `json:"backend"`
		Device    string `json:"device"`
		Kernel    string `json:"kernel"`
		ELF       string `json:"elf"`
		ELFBytes  int    `json:"elf_bytes"`
		ShireMask uint64 `json:"shire_mask"`
		Barrier   bool   `json:"barrier"`
		FlushL3   bool   `json:"flush_l3"`
		ArgsBytes int    `json:"args_bytes"`
		Status    string `json:"status"`
		TimeNS    int64  `json:"time_ns"`
	}
	return []csvTable{
		{Name: "run", Rows: []run{{d.Backend, d.Device, d.Kernel, d.ELF, d.ELFBytes, d.ShireMask, d.Barrier, d.FlushL3, d.ArgsBytes, d.Status, d.TimeNS}}},
		{Name: "buffers", Rows: d.Buffers},
		{Name: "args", Rows: d.Args},
		{Name: "dumps", Rows: d.Dumps},
		{Name: "faults", Rows: csvFaults(d.Faults)},
	}
}
