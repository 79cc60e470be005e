package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ainekko/et/internal/driver/registry"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/pcie"
	"github.com/ainekko/et/internal/sysemu"
)

// devicesOptions are the flags and seams of et devices.
type devicesOptions struct {
	IO *ioStreams
	// Kinds are the kinds to list, in et's order; empty means all.
	Kinds     []driver.Kind
	SysfsRoot string
	DevRoot   string
	// Prefix is the --prefix flag (ET install for sysemu); "" means the
	// environment or /opt/et.
	Prefix  string
	Probe   bool
	Require int
	Verbose bool
	// Boot boots each usable sysemu and pcie device in a worker (--boot)
	// and reports the properties the runtime reports; see registry.Boot.
	Boot bool
	// BootTarget holds --run-dir, --sysemu-opt and --timeout for --boot.
	BootTarget backendOptions

	Getenv func(string) string
	Getwd  func() (string, error)
	// Nodes opens device nodes for --probe; nil means the real ones.
	Nodes pcie.Nodes
	// ScanPCIe and CheckSysemu are the backends (replaced in tests).
	ScanPCIe    func(context.Context, pcie.Options) (pcie.Result, error)
	CheckSysemu func(context.Context, sysemu.Options) sysemu.Report

	f *factory
}

func newDevicesCmd(f *factory, runF func(context.Context, *devicesOptions) error) *cobra.Command {
	opts := &devicesOptions{
		IO:          f.IO,
		Getenv:      f.Getenv,
		Getwd:       f.Getwd,
		ScanPCIe:    pcie.Scan,
		CheckSysemu: sysemu.Check,
		f:           f,
	}
	var kinds []string
	cmd := &cobra.Command{
		Use:   "devices [--kind {pcie|sysemu|ref}] [--probe] [--require <n>]",
		Short: "List ET-SoC-1 devices and their state",
		Long: `List the ET devices et can use, in the order and with the indexes the
runtime uses: PCIe cards (from sysfs and /dev/etN_{mgmt,ops}), the sys_emu
emulator (when an install is found, as et check-sysemu finds it) and the
built-in reference device, which is always there.

PCIe discovery reads sysfs only and opens nothing. --probe also opens each
device node read-only for the driver's info ioctls (state, configuration,
DRAM size), one node at a time and only for the duration of the ioctls; a
node held by another process (llama.cpp) is reported as busy, not waited for.

A device is usable when its status is ready (pcie, ref) or installed
(sysemu). --require N exits 3 when fewer than N devices of the selected
kinds are usable. Scripts should use -o json (schema et.devices/v1).`,
		Example: `  $ et devices
  $ et devices --kind pcie --probe -v
  $ et devices -o json
  $ et devices --kind sysemu --prefix /opt/et
  $ et devices --kind pcie --require 1
  $ et devices --kind sysemu --boot -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			seen := map[driver.Kind]bool{}
			for _, s := range kinds {
				k, err := driver.ParseKind(strings.TrimSpace(s))
				if err != nil {
					return usageErrorf("--kind: %v", err)
				}
				seen[k] = true
			}
			opts.Kinds = nil
			for _, k := range driver.Kinds {
				if seen[k] {
					opts.Kinds = append(opts.Kinds, k)
				}
			}
			if opts.Require < 0 {
				return usageErrorf("--require: want a count >= 0, got %d", opts.Require)
			}
			if opts.SysfsRoot == "" || opts.DevRoot == "" {
				return usageErrorf("--sysfs-root and --dev-root must not be empty")
			}
			opts.Verbose = f.Global.Verbose
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return devicesRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&kinds, "kind", nil, "list only this kind: {pcie|sysemu|ref} (repeatable)")
	fl.StringVar(&opts.SysfsRoot, "sysfs-root", "/sys", "sysfs mount to scan for PCIe devices")
	fl.StringVar(&opts.DevRoot, "dev-root", "/dev", "directory holding the etN_mgmt and etN_ops nodes")
	fl.StringVar(&opts.Prefix, "prefix", "", "ET install prefix for sysemu (default $ET_TOOLCHAIN, $TOOLCHAIN_ROOT, /opt/et)")
	fl.BoolVar(&opts.Probe, "probe", false, "open each PCIe node briefly for the info ioctls (state, config, DRAM)")
	fl.IntVar(&opts.Require, "require", 0, "exit 3 when fewer than `n` devices of the selected kinds are usable")
	fl.BoolVar(&opts.Boot, "boot", false, "boot sysemu / open each card through the ET runtime (in a worker) and report the properties it reports")
	fl.StringVar(&opts.BootTarget.RunDir, "run-dir", "", "with --boot: `dir` for the UART logs, sysemu.log and worker.log (default: a temporary directory, kept on failure)")
	fl.StringArrayVar(&opts.BootTarget.SysemuOpts, "sysemu-opt", nil, "with --boot: extra emulator `option` (repeatable)")
	fl.DurationVar(&opts.BootTarget.Timeout, "timeout", 5*time.Minute, "with --boot: give up on a device after this long (exit 4)")
	cmd.RegisterFlagCompletionFunc("kind", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"pcie", "sysemu", "ref"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// devicesDoc is the JSON/YAML document (schema et.devices/v1).
type devicesDoc struct {
	Schema   string           `json:"schema"`
	Devices  []registry.Entry `json:"devices"`
	Warnings []string         `json:"warnings,omitempty"`
}

func devicesRun(ctx context.Context, opts *devicesOptions) error {
	f := opts.f
	kinds := opts.Kinds
	if len(kinds) == 0 {
		kinds = driver.Kinds
	}
	cwd, err := opts.Getwd()
	if err != nil {
		cwd = ""
	}
	devs, warns, err := registry.List(ctx, registry.ListOptions{Kinds: kinds, SysfsRoot: opts.SysfsRoot, DevRoot: opts.DevRoot,
		Probe: opts.Probe, Nodes: opts.Nodes, Prefix: sysemu.ResolvePrefix(opts.Prefix, opts.Getenv), Cwd: cwd,
		ScanPCIe: opts.ScanPCIe, CheckSysemu: opts.CheckSysemu, Logf: f.logf})
	if err != nil {
		return err
	}
	for i := range devs {
		sanitizeEntry(&devs[i])
	}
	doc := devicesDoc{Schema: "et.devices/v1", Devices: devs, Warnings: warns}
	var bootErr error
	if opts.Boot {
		b := opts.BootTarget
		b.Prefix = opts.Prefix
		spec := b.spec(f, nil)
		done := bootStatus(f, &spec)
		bootErr = registry.Boot(ctx, doc.Devices, spec)
		done()
	}
	for _, w := range doc.Warnings {
		f.warnf("%s", w)
	}
	if err := f.render(document{Data: doc, Tables: devicesTables(doc, opts, f.styles())}); err != nil {
		return err
	}
	if bootErr != nil {
		return &exitError{code: exitCode(bootErr), err: fmt.Errorf("--boot: %w", bootErr)}
	}
	if opts.Require > 0 {
		usable := 0
		for _, d := range doc.Devices {
			if d.Usable {
				usable++
			}
		}
		if usable < opts.Require {
			names := make([]string, len(kinds))
			for i, k := range kinds {
				names[i] = string(k)
			}
			return &exitError{code: exitUnavailable, err: fmt.Errorf("--require %d: %d usable device(s) of kind %s",
				opts.Require, usable, strings.Join(names, "|"))}
		}
	}
	return nil
}

// devicesTables builds the table and Markdown forms (CSV: devicesCSV).
func devicesTables(doc devicesDoc, opts *devicesOptions, st styles) []table {
	headers := []string{"INDEX", "KIND", "NAME", "STATUS", "LOCATION", "MEMORY", "SHIRES", "FREQ", "DRIVER"}
	right := []int{0, 5, 6, 7}
	if opts.Verbose {
		headers = append(headers, "NODES", "LINK", "NUMA", "TDP")
		right = append(right, 12)
	}
	main := table{Headers: headers, Right: right}
	var assumed, needProbe bool
	for _, d := range doc.Devices {
		mark := func(key string) string {
			for _, a := range d.AssumedProperties {
				if a == key {
					assumed = true
					return "*"
				}
			}
			return ""
		}
		row := []string{
			devicesOptInt(d.Index),
			d.Kind,
			d.Name,
			st.Status(d.Status),
			devicesLocation(d),
			"-", "-", "-",
			devicesOr(d.DriverVersion, "-"),
		}
		if p := d.Properties; p != nil {
			if p.MemoryBytes != 0 {
				row[5] = fmtBytes(p.MemoryBytes) + mark("memory_bytes")
			}
			if p.ComputeShireMask != 0 {
				row[6] = strconv.Itoa(int(p.AvailableShires)) + mark("available_shires")
			}
			if p.FrequencyMHz != 0 {
				row[7] = fmt.Sprintf("%d MHz", p.FrequencyMHz)
			}
		} else if d.Kind == string(driver.KindPCIe) && d.Probe == nil && d.Usable {
			needProbe = true
		}
		if opts.Verbose {
			nodes, link, numa, tdp := "-", "-", "-", "-"
			if n := d.Nodes; n != nil {
				var parts []string
				if n.Mgmt != "" {
					parts = append(parts, "mgmt")
				}
				if n.Ops != "" {
					parts = append(parts, "ops")
				}
				nodes = strings.Join(parts, "+")
			}
			if l := d.PCIeLink; l != nil {
				link = strings.TrimSuffix(l.Speed, " PCIe")
				if l.Width != 0 {
					link += fmt.Sprintf(" x%d", l.Width)
				}
				if l.MaxWidth != 0 && l.MaxWidth != l.Width {
					link += fmt.Sprintf(" (max x%d)", l.MaxWidth)
				}
				link = strings.TrimSpace(link)
			}
			if d.NUMANode != nil {
				numa = strconv.Itoa(*d.NUMANode)
			}
			if d.Properties != nil && d.Properties.TDPW != 0 {
				tdp = fmt.Sprintf("%d W", d.Properties.TDPW)
			}
			row = append(row, nodes, link, numa, tdp)
		}
		main.Rows = append(main.Rows, row)
		if d.Detail != "" {
			main.Notes = append(main.Notes, fmt.Sprintf("%s %s: %s", d.Kind, devicesLocation(d), d.Detail))
		}
	}
	if assumed {
		main.Notes = append(main.Notes, "* expected value: sys_emu reports its shire mask and DRAM size only once booted")
	}
	if needProbe {
		main.Notes = append(main.Notes, "pcie memory, shires and frequency need --probe (opens each node briefly)")
	}
	tables := []table{main}
	if opts.Verbose {
		if ct := devicesCounters(doc); len(ct.Rows)+len(ct.Notes) > 0 {
			tables = append(tables, ct)
		}
		if pt := devicesProbes(doc); len(pt.Rows) > 0 {
			tables = append(tables, pt)
		}
	}
	return tables
}

// devicesCounters is the -v table of driver statistics; zero counters are
// left to JSON.
func devicesCounters(doc devicesDoc) table {
	t := table{Title: "Driver counters", Headers: []string{"DEVICE", "COUNTER", "VALUE"}, Right: []int{2}}
	zeros := 0
	for _, d := range doc.Devices {
		for _, c := range d.Counters {
			if c.Value == 0 {
				zeros++
				continue
			}
			name := c.File
			if c.Name != "" {
				name += " " + c.Name
			}
			t.Rows = append(t.Rows, []string{d.BDF, name, devicesCounterValue(c)})
		}
	}
	if zeros > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d counter(s) at 0 not shown (all are in -o json)", zeros))
	}
	return t
}

func devicesCounterValue(c pcie.Counter) string {
	switch c.Unit {
	case "bytes":
		return fmtBytes(c.Value)
	case "bytes_per_s":
		return fmtBytes(c.Value) + "/s"
	case "msgs":
		return fmt.Sprintf("%d msgs", c.Value)
	case "msgs_per_s":
		return fmt.Sprintf("%d msgs/s", c.Value)
	case "percent":
		return fmt.Sprintf("%d%%", c.Value)
	}
	return strconv.FormatUint(c.Value, 10)
}

// devicesProbes is the -v table of per-node probe results.
func devicesProbes(doc devicesDoc) table {
	t := table{Title: "Probe", Headers: []string{"DEVICE", "NODE", "RESULT", "STATE", "SQS", "ERROR"}, Right: []int{4}}
	for _, d := range doc.Devices {
		p := d.Probe
		if p == nil {
			continue
		}
		for _, n := range []struct {
			name string
			np   pcie.NodeProbe
		}{{"mgmt", p.Mgmt}, {"ops", p.Ops}} {
			sqs := "-"
			if n.np.SQCount != nil {
				sqs = strconv.Itoa(int(*n.np.SQCount))
			}
			t.Rows = append(t.Rows, []string{d.BDF, n.name, n.np.Result, devicesOr(n.np.State, "-"), sqs, devicesOr(n.np.Error, "-")})
		}
	}
	return t
}

func devicesLocation(d registry.Entry) string {
	switch {
	case d.BDF != "":
		return d.BDF
	case d.Prefix != "":
		return d.Prefix
	case d.Kind == string(driver.KindRef):
		return "built-in"
	}
	return "-"
}

func devicesOptInt(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

func devicesOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// devicesBytes scales a size for tables: 32 GiB, 15.9 GiB, 12 MiB.

// sanitizeEntry makes the bytes a device listing read from sysfs safe to
// print (never sent raw to a terminal, nor into JSON that one may show).
func sanitizeEntry(e *registry.Entry) {
	for _, p := range []*string{&e.Detail, &e.BDF, &e.Driver, &e.DriverVersion} {
		*p = sanitizeText(*p)
	}
	if e.PCIeLink != nil {
		e.PCIeLink.Speed, e.PCIeLink.MaxSpeed = sanitizeText(e.PCIeLink.Speed), sanitizeText(e.PCIeLink.MaxSpeed)
	}
}

// devicesCSV is the raw CSV form: the devices (nested facts flattened:
// properties_memory_bytes, probe_ops_state, ...) and their driver
// counters.
func devicesCSV(doc devicesDoc) []csvTable {
	type counter struct {
		Index *int   `json:"index"`
		BDF   string `json:"bdf"`
		pcie.Counter
	}
	counters := []counter{}
	for _, d := range doc.Devices {
		for _, c := range d.Counters {
			counters = append(counters, counter{Index: d.Index, BDF: d.BDF, Counter: c})
		}
	}
	return []csvTable{{Name: "devices", Rows: doc.Devices}, {Name: "counters", Rows: counters}}
}
