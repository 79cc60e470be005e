package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/kernelargs"
	"github.com/ainekko/et/internal/kernelrun"
	"github.com/ainekko/et/internal/outfile"
)

// runKernelOptions are the flags of et run-kernel: the run (its Spec
// filled from Target when it runs) and the device flags.
type runKernelOptions struct {
	kernelrun.Options
	Target backendOptions
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
				// The runtime takes the 32 compute shires and bit 32 (the
				// master shire), with at least one compute shire.
				if opts.ShireMask, err = strconv.ParseUint(mask, 0, 64); err != nil || opts.ShireMask&0xFFFFFFFF == 0 || opts.ShireMask>>33 != 0 {
					return usageErrorf("--shire-mask %q: want compute shires in bits 0-31 (at least one), optionally bit 32 (the master shire), such as 0x1, 0xFFFFFFFF or 0x1FFFFFFFF", mask)
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

func runKernelRun(ctx context.Context, f *factory, opts *runKernelOptions) error {
	run := opts.Options
	run.Spec, run.MaxHostMemory = opts.Target.spec(f, nil), opts.Target.MaxHostMemory
	in := []string{run.ELF}
	for _, b := range run.Bufs {
		if b.Init != "zeros" && b.Init != "pattern" {
			in = append(in, b.Init)
		}
	}
	for _, a := range run.Args {
		in = append(in, a.File)
	}
	ctx = outfile.WithInputs(ctx, in...)
	done := bootStatus(f, &run.Spec)
	d, err := kernelrun.Run(ctx, run)
	done()
	if err != nil {
		return err
	}
	if err := f.render(runKernelDocument(*d, f.styles())); err != nil {
		return err
	}
	if len(d.Faults) > 0 {
		return errSilent
	}
	return nil
}

func runKernelDocument(d kernelrun.Report, st styles) document {
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
func runKernelCSV(d kernelrun.Report) []csvTable {
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
