package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ainekko/et/internal/outfile"
	"github.com/ainekko/et/internal/runner"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/sysemu"
)

// runKernelOptions are the flags of et run-kernel.
type runKernelOptions struct {
	ELF string
	// Name is the kernel name: the ELF's base name without .elf.
	Name      string
	Bufs      []kernelBuf
	Args      []kernelArg
	Dumps     []kernelDump
	ShireMask uint64
	NoBarrier bool
	FlushL3   bool
	Target    backendOptions
}

// kernelBuf is one --buf NAME=SIZE[:INIT].
type kernelBuf struct {
	Name string
	Size uint64
	// Init is zeros, pattern, or a file (.npy: its data; else raw bytes).
	Init string
}

// kernelArg is one --arg TYPE:VALUE: Size bytes aligned to Align, either
// fixed Data or the device address of buffer Ref plus Off.
type kernelArg struct {
	Spec  string
	Type  string
	Data  []byte
	Ref   string
	Off   uint64
	File  string
	Size  int
	Align int
}

// kernelDump is one --dump NAME=FILE.
type kernelDump struct {
	Name string
	File string
}

// maxKernelBuf bounds one --buf (host memory holds a copy).
const maxKernelBuf = 16 << 30

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
			if opts.Bufs, err = parseKernelBufs(bufs); err != nil {
				return err
			}
			known := map[string]bool{}
			for _, b := range opts.Bufs {
				known[b.Name] = true
			}
			if opts.Args, err = parseKernelArgs(args, known); err != nil {
				return err
			}
			if opts.Dumps, err = parseKernelDumps(dumps, known); err != nil {
				return err
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

// parseSize reads a byte count: decimal or 0x hex, with an optional K, M
// or G (KiB, MiB, GiB) suffix.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	t := s
	for _, u := range []struct {
		suf  []string
		mult uint64
	}{{[]string{"KiB", "K", "k"}, 1 << 10}, {[]string{"MiB", "M"}, 1 << 20}, {[]string{"GiB", "G"}, 1 << 30}} {
		for _, suf := range u.suf {
			if strings.HasSuffix(t, suf) && !strings.HasPrefix(t, "0x") {
				t, mult = strings.TrimSuffix(t, suf), u.mult
				break
			}
		}
	}
	n, err := strconv.ParseUint(t, 0, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("invalid size %q (want bytes > 0, e.g. 4096, 0x1000, 64K, 1M)", s)
	}
	if n > maxKernelBuf/mult {
		return 0, fmt.Errorf("size %q is over the %d GiB limit", s, maxKernelBuf>>30)
	}
	return n * mult, nil
}

func parseKernelBufs(specs []string) ([]kernelBuf, error) {
	var out []kernelBuf
	seen := map[string]bool{}
	for _, spec := range specs {
		name, rest, ok := strings.Cut(spec, "=")
		if !ok || name == "" || rest == "" {
			return nil, usageErrorf("--buf %q: want NAME=SIZE[:INIT]", spec)
		}
		if !validBufName(name) {
			return nil, usageErrorf("--buf %q: name %q: use letters, digits and _", spec, name)
		}
		if seen[name] {
			return nil, usageErrorf("--buf %q: buffer %s given twice", spec, name)
		}
		seen[name] = true
		size, init, _ := strings.Cut(rest, ":")
		n, err := parseSize(size)
		if err != nil {
			return nil, usageErrorf("--buf %q: %v", spec, err)
		}
		if init == "" {
			init = "zeros"
		}
		out = append(out, kernelBuf{Name: name, Size: n, Init: init})
	}
	return out, nil
}

func validBufName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// scalarSizes are the --arg scalar types and their sizes in bytes.
var scalarSizes = map[string]int{"u8": 1, "i8": 1, "u16": 2, "i16": 2, "f16": 2, "u32": 4, "i32": 4, "f32": 4, "u64": 8, "i64": 8, "f64": 8}

func parseKernelArgs(specs []string, bufs map[string]bool) ([]kernelArg, error) {
	var out []kernelArg
	for _, spec := range specs {
		a, err := parseKernelArg(spec, bufs)
		if err != nil {
			return nil, usageErrorf("--arg %q: %v", spec, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseKernelArg(spec string, bufs map[string]bool) (kernelArg, error) {
	typ, val, ok := strings.Cut(spec, ":")
	if !ok || val == "" {
		return kernelArg{}, errors.New("want TYPE:VALUE (u32:7, u64:@NAME, f32:0.5, file:PATH, pad:N, align:N)")
	}
	a := kernelArg{Spec: spec, Type: typ}
	switch typ {
	case "file":
		a.File, a.Align = val, 1
		return a, nil
	case "pad", "align":
		n, err := strconv.ParseUint(val, 0, 32)
		if err != nil || n == 0 || n > 1<<20 || (typ == "align" && n&(n-1) != 0) {
			return kernelArg{}, fmt.Errorf("invalid %s %q (want a count > 0%s)", typ, val, map[bool]string{true: ", a power of two"}[typ == "align"])
		}
		if typ == "pad" {
			a.Data, a.Size, a.Align = make([]byte, n), int(n), 1
		} else {
			a.Align = int(n)
		}
		return a, nil
	}
	size, ok := scalarSizes[typ]
	if !ok {
		return kernelArg{}, fmt.Errorf("unknown type %q (want u8, u16, u32, u64, i8, i16, i32, i64, f16, f32, f64, file, pad or align)", typ)
	}
	a.Size, a.Align = size, size
	if strings.HasPrefix(val, "@") {
		if typ != "u64" {
			return kernelArg{}, fmt.Errorf("a buffer address is 64 bits: write u64:%s", val)
		}
		name, off, hasOff := strings.Cut(val[1:], "+")
		if !bufs[name] {
			return kernelArg{}, fmt.Errorf("no --buf named %q", name)
		}
		a.Ref = name
		if hasOff {
			n, err := strconv.ParseUint(off, 0, 64)
			if err != nil {
				return kernelArg{}, fmt.Errorf("invalid offset %q", off)
			}
			a.Off = n
		}
		return a, nil
	}
	a.Data = make([]byte, size)
	bad := func(err error) (kernelArg, error) {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		return kernelArg{}, fmt.Errorf("invalid %s value %q: %v", typ, val, err)
	}
	switch typ[0] {
	case 'u':
		n, err := strconv.ParseUint(val, 0, size*8)
		if err != nil {
			return bad(err)
		}
		putUint(a.Data, n)
	case 'i':
		n, err := strconv.ParseInt(val, 0, size*8)
		if err != nil {
			return bad(err)
		}
		putUint(a.Data, uint64(n))
	case 'f':
		x, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return bad(err)
		}
		switch size {
		case 2:
			putUint(a.Data, uint64(ops.F32ToF16(float32(x))))
		case 4:
			putUint(a.Data, uint64(math.Float32bits(float32(x))))
		default:
			putUint(a.Data, math.Float64bits(x))
		}
	}
	return a, nil
}

// putUint writes the low len(b) bytes of v little-endian.
func putUint(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

func parseKernelDumps(specs []string, bufs map[string]bool) ([]kernelDump, error) {
	var out []kernelDump
	for _, spec := range specs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return nil, usageErrorf("--dump %q: want NAME=FILE", spec)
		}
		if !bufs[name] {
			return nil, usageErrorf("--dump %q: no --buf named %q", spec, name)
		}
		out = append(out, kernelDump{Name: name, File: file})
	}
	return out, nil
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
	Args      []runKernelArg       `json:"args"`
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

type runKernelArg struct {
	Offset    int    `json:"offset"`
	SizeBytes int    `json:"size_bytes"`
	Spec      string `json:"spec"`
	// Value is the encoded field, little-endian hex (resolved addresses included).
	Value string `json:"value"`
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
		Buffers: []runKernelBuf{}, Args: []runKernelArg{}}
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
			data, err := readInput(ctx, a.File, maxTextInput)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return inputErrorf("--arg %q: %s: %s", a.Spec, a.File, errText(err))
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
		if runner.IsWorkerFailure(err) {
			return err
		}
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); errors.Is(cause, driver.ErrTimeout) {
				return cause
			}
		}
		return err
	}

	addrs := map[string]driver.DevPtr{}
	for i, kb := range opts.Bufs {
		p, err := dev.Malloc(kb.Size, 64)
		if err != nil {
			return fail(fmt.Errorf("--buf %s: malloc %d bytes: %w", kb.Name, kb.Size, err))
		}
		addrs[kb.Name] = p
		if err := dev.Write(ctx, p, inits[i]); err != nil {
			return fail(fmt.Errorf("--buf %s: upload: %w", kb.Name, err))
		}
		doc.Buffers = append(doc.Buffers, runKernelBuf{Name: kb.Name, SizeBytes: kb.Size, Addr: uint64(p), Init: kb.Init})
	}
	blob, fields := encodeKernelArgs(opts.Args, addrs, files)
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
		if err := dev.Read(ctx, addrs[d.Name], buf); err != nil {
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
func kernelBufInit(ctx context.Context, kb kernelBuf) ([]byte, error) {
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
		b, err := readInput(ctx, kb.Init, int64(min(kb.Size, maxTextInput)))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, inputErrorf("--buf %s: %s: %s (INIT is zeros, pattern, FILE.npy or FILE)", kb.Name, kb.Init, errText(err))
		}
		data = b
	}
	if uint64(len(data)) > kb.Size {
		return nil, inputErrorf("--buf %s: %s holds %d bytes, more than the buffer's %d", kb.Name, kb.Init, len(data), kb.Size)
	}
	copy(buf, data)
	return buf, nil
}

// encodeKernelArgs lays the params blob out: each field aligned to its
// alignment (zero padding), little-endian.
func encodeKernelArgs(args []kernelArg, addrs map[string]driver.DevPtr, files map[string][]byte) ([]byte, []runKernelArg) {
	var blob []byte
	fields := []runKernelArg{}
	for _, a := range args {
		for a.Align > 1 && len(blob)%a.Align != 0 {
			blob = append(blob, 0)
		}
		data := a.Data
		switch {
		case a.Ref != "":
			data = make([]byte, 8)
			putUint(data, uint64(addrs[a.Ref])+a.Off)
		case a.File != "":
			data = files[a.File]
		case a.Type == "align":
			continue
		}
		fields = append(fields, runKernelArg{Offset: len(blob), SizeBytes: len(data), Spec: a.Spec, Value: hexLE(data)})
		blob = append(blob, data...)
	}
	return blob, fields
}

// hexLE shows up to 16 bytes as a hex dump.
func hexLE(b []byte) string {
	const max = 16
	s := fmt.Sprintf("%x", b[:min(len(b), max)])
	if len(b) > max {
		s += "..."
	}
	return s
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
