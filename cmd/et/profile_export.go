package main

import (
	"context"
	"fmt"
	"github.com/ainekko/et/internal/outfile"
	"io"
	"path/filepath"
	"strconv"

	"github.com/ainekko/et/internal/profile"
	"github.com/spf13/cobra"
)

type profileExportOptions struct {
	IO *ioStreams
	// Trace is the trace path; "-" is stdin.
	Trace string
	// Format is the export format (only "chrome").
	Format string
	// Out is the output file; "" or "-" is stdout (refused on a terminal).
	Out        string
	KernelMap  string
	FreqMHz    uint32
	DeviceTime bool
	Output     string
	f          *factory
}

func newProfileExportCmd(f *factory, runF func(context.Context, *profileExportOptions) error) *cobra.Command {
	opts := &profileExportOptions{IO: f.IO, f: f}
	var freq uint
	cmd := &cobra.Command{
		Use:   "export <trace> [--format chrome] [-O <file>]",
		Short: "Convert a runtime trace to Chrome Trace Event JSON for Perfetto",
		Long: `Convert an ET runtime trace (et_runtime_trace.json) to Chrome Trace Event
JSON, which ui.perfetto.dev opens (chrome://tracing, the old Catapult
viewer, no longer loads in current Chromium: docs/profile-export-diff.md).

The export has one process for the host, with a track per host thread
(API calls as slices, runtime instants, device memory counters), and one
process per device with a track per engine: compute, DMA H2D, DMA D2H
(extra lanes where spans overlap). Arrows link each kernel launch or
memcpy call to its device span and on to its completion (DispatchEvent).

Device spans are placed on the host clock when the trace's command and
response times bound the clock offset consistently; otherwise (sysemu's
simulated cycles, an unknown frequency, or --device-time) they are on
device time starting at 0, and the device's process name says so.

The JSON is written to -O <file> (through a temporary file, renamed when
complete) or to stdout when it is not a terminal. With -O <file>, a
summary is printed on stdout (-o json for a script). The kernel map is
read from --kernel-map, else kernel_id.json beside the trace.`,
		Example: `  $ et profile export run/et_runtime_trace.json -O run.perfetto.json
  $ et profile export trace.json --kernel-map kernel_id.json -O trace.chrome.json -o json
  $ et profile export trace.json -O - | gzip > trace.json.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Trace = args[0]
			opts.Output = f.Global.Output
			if opts.Format != "chrome" {
				return usageErrorf("invalid --format %q (want chrome)", opts.Format)
			}
			if freq > 1<<32-1 {
				return usageErrorf("invalid --freq-mhz %d", freq)
			}
			opts.FreqMHz = uint32(freq)
			toStdout := opts.Out == "" || opts.Out == "-"
			if toStdout && opts.IO.OutTTY {
				return usageErrorf("refusing to write trace JSON to a terminal: use -O <file>, or pipe the output")
			}
			if toStdout && opts.Output != "table" {
				return usageErrorf("-o %s needs -O <file>: stdout already carries the trace JSON", opts.Output)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return profileExportRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "format", "chrome", "export format: {chrome}")
	fl.StringVarP(&opts.Out, "out", "O", "", "write the export to `file` (- for stdout)")
	fl.StringVar(&opts.KernelMap, "kernel-map", "", "kernel_id.json `file` naming kernel ids (default: beside the trace)")
	fl.UintVar(&freq, "freq-mhz", 0, "device frequency in MHz, overriding the trace's")
	fl.BoolVar(&opts.DeviceTime, "device-time", false, "put device tracks on device time, never aligned to the host")
	return cmd
}

// profileExportDoc is the summary printed after an export to a file.
type profileExportDoc struct {
	Schema      string                 `json:"schema"`
	Trace       string                 `json:"trace"`
	Output      string                 `json:"output"`
	Format      string                 `json:"format"`
	Events      int                    `json:"events"`
	HostEvents  int                    `json:"host_events"`
	DeviceSpans int                    `json:"device_spans"`
	Flows       int                    `json:"flows"`
	Counters    int                    `json:"counters"`
	Bytes       int64                  `json:"bytes"`
	Truncated   bool                   `json:"truncated"`
	Devices     []profile.ChromeDevice `json:"devices"`
	Warnings    []string               `json:"warnings"`
}

func profileExportRun(ctx context.Context, opts *profileExportOptions) error {
	in, cleanup, err := openTraceSeekable(ctx, opts.Trace, opts.IO.In)
	if err != nil {
		return err
	}
	defer cleanup()

	var warns profile.Warnings
	km, kmWarn, _, err := kernelMapFor(ctx, opts.Trace, opts.KernelMap)
	if err != nil {
		return err
	}
	var dst io.Writer = opts.IO.Out
	var out *outfile.File
	toStdout := opts.Out == "" || opts.Out == "-"
	counter := &exportCounter{}
	if !toStdout {
		ctx := outfile.WithInputs(ctx, opts.Trace, opts.KernelMap)
		if opts.KernelMap == "" && opts.Trace != "-" {
			ctx = outfile.WithInputs(ctx, besideMap(opts.Trace))
		}
		if out, err = outfile.CreateContext(ctx, opts.Out); err != nil {
			return err
		}
		dst = out
	}
	counter.w = dst
	var dstats profile.Stats
	src := profile.SeekerSource(in, profile.Options{File: traceName(opts.Trace), Warnings: &warns}, &dstats)
	// Stop early on ^C: the source checks the context between events.
	ctxSrc := func(fn func(*profile.Event) error) error {
		return src(func(e *profile.Event) error {
			if e.Index%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			return fn(e)
		})
	}
	st, err := profile.ExportChrome(counter, ctxSrc, profile.ChromeOptions{
		Kernels: km, FreqMHz: opts.FreqMHz, OverrideFreq: opts.FreqMHz != 0,
		DeviceTime: opts.DeviceTime, Source: filepath.Base(opts.Trace), Warnings: &warns,
	})
	if err != nil {
		if out != nil {
			out.Abort()
			if counter.err != nil {
				return out.Fail(counter.err)
			}
		}
		return err
	}
	if out != nil {
		if err := out.Commit(); err != nil {
			return err
		}
	}
	f := opts.f
	warnings := append([]string(nil), kmWarn...)
	for _, w := range warns.List() {
		warnings = append(warnings, w.String())
	}
	for _, w := range warnings {
		f.warnf("%s", w)
	}
	for _, d := range st.Devices {
		if !d.Aligned && d.Note != "" {
			f.logf("device %d on device time: %s", d.ID, d.Note)
		}
	}
	if toStdout {
		return nil
	}
	doc := profileExportDoc{
		Schema: "et.profile-export/v1", Trace: opts.Trace, Output: opts.Out, Format: "chrome",
		Events: st.Events, HostEvents: st.HostEvents, DeviceSpans: st.DeviceSpans, Flows: st.Flows,
		Counters: st.Counters, Bytes: counter.n, Truncated: dstats.Truncated, Devices: st.Devices,
		Warnings: warnings,
	}
	if doc.Devices == nil {
		doc.Devices = []profile.ChromeDevice{}
	}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	rows := [][]string{
		{"output", opts.Out},
		{"events", strconv.Itoa(st.Events)},
		{"host events", strconv.Itoa(st.HostEvents)},
		{"device spans", strconv.Itoa(st.DeviceSpans)},
		{"flows", strconv.Itoa(st.Flows)},
		{"memory counters", strconv.Itoa(st.Counters)},
		{"size", fmtBytes(uint64(counter.n))},
	}
	for _, d := range st.Devices {
		clock := "aligned to host"
		if !d.Aligned {
			clock = "device time: " + d.Note
		}
		rows = append(rows, []string{fmt.Sprintf("device %d", d.ID), clock})
	}
	return f.render(document{Data: doc, Tables: []table{{
		Headers: []string{"export", "value"},
		Rows:    rows,
		Notes:   []string{"open it in https://ui.perfetto.dev"},
	}}})
}

// exportCounter counts the bytes written through it.
type exportCounter struct {
	w   io.Writer
	n   int64
	err error // the first write error
}

func (c *exportCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

func init() {
	profileSubcommands = append(profileSubcommands, func(f *factory) *cobra.Command { return newProfileExportCmd(f, nil) })
}

// profileExportCSV is the raw CSV form of the summary after an export to
// a file: the export (one row) and its devices.
func profileExportCSV(d profileExportDoc) []csvTable {
	type export struct {
		Trace       string `json:"trace"`
		Output      string `json:"output"`
		Format      string `json:"format"`
		Events      int    `json:"events"`
		HostEvents  int    `json:"host_events"`
		DeviceSpans int    `json:"device_spans"`
		Flows       int    `json:"flows"`
		Counters    int    `json:"counters"`
		Bytes       int64  `json:"bytes"`
		Truncated   bool   `json:"truncated"`
	}
	return []csvTable{
		{Name: "export", Rows: []export{{d.Trace, d.Output, d.Format, d.Events, d.HostEvents, d.DeviceSpans, d.Flows, d.Counters, d.Bytes, d.Truncated}}},
		{Name: "devices", Rows: d.Devices},
	}
}
