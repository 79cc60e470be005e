package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/pcie"
	"github.com/ainekko/et/internal/sysemu"
)

// Entry is one listed device (et devices, schema et.devices/v1). Facts
// that are unknown are omitted. Strings read from sysfs are as the
// kernel gave them: a caller that prints them sanitizes them.
type Entry struct {
	// Index is the device's index within its kind, as the runtime numbers
	// them (pcie: devnum).
	Index  *int   `json:"index,omitempty"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Usable bool   `json:"usable"`
	Detail string `json:"detail,omitempty"`
	// PCIe facts.
	BDF             string     `json:"bdf,omitempty"`
	PCIID           string     `json:"pci_id,omitempty"`
	Devnum          *int       `json:"devnum,omitempty"`
	Driver          string     `json:"driver,omitempty"`
	DriverVersion   string     `json:"driver_version,omitempty"`
	DriverVersionOK *bool      `json:"driver_version_ok,omitempty"`
	Nodes           *Nodes     `json:"nodes,omitempty"`
	PCIeLink        *pcie.Link `json:"pcie_link,omitempty"`
	NUMANode        *int       `json:"numa_node,omitempty"`
	// Prefix is the sysemu install.
	Prefix     string        `json:"prefix,omitempty"`
	Properties *driver.Props `json:"properties,omitempty"`
	// AssumedProperties names the properties that are expected values,
	// not yet reported by the device (sysemu before boot).
	AssumedProperties []string       `json:"assumed_properties,omitempty"`
	Probe             *pcie.Probe    `json:"probe,omitempty"`
	Counters          []pcie.Counter `json:"counters,omitempty"`

	// Booted is set when the device was opened through the runtime (et
	// devices --boot); BootNS is how long that took, in nanoseconds.
	Booted bool  `json:"booted,omitempty"`
	BootNS int64 `json:"boot_ns,omitempty"`
}

// Nodes are a PCIe card's device nodes.
type Nodes struct {
	Mgmt string `json:"mgmt,omitempty"`
	Ops  string `json:"ops,omitempty"`
}

// ListOptions say what to list and where to look.
type ListOptions struct {
	// Kinds are the kinds to list, in et's order; empty means all.
	Kinds     []driver.Kind
	SysfsRoot string
	DevRoot   string
	// Probe opens each card's nodes (et devices --probe).
	Probe bool
	// Nodes opens device nodes for Probe; nil means the real ones.
	Nodes pcie.Nodes
	// Prefix is the sysemu install (resolved) and Cwd the directory a
	// relative one is taken from.
	Prefix sysemu.Prefix
	Cwd    string
	// ScanPCIe and CheckSysemu are the backends (nil: pcie.Scan and
	// sysemu.Check; tests replace them).
	ScanPCIe    func(context.Context, pcie.Options) (pcie.Result, error)
	CheckSysemu func(context.Context, sysemu.Options) sysemu.Report
	// Logf reports what was looked at (nil: quiet).
	Logf func(format string, args ...any)
}

func (o *ListOptions) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// List lists the devices of every kind asked for, in kind order, with
// warnings (a PCIe scan that failed, an install's environment problems).
// Only an interrupt is an error: a kind that cannot be listed is a
// warning, the other kinds are still listed.
func List(ctx context.Context, o ListOptions) (entries []Entry, warnings []string, err error) {
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = driver.Kinds
	}
	entries = []Entry{}
	for _, k := range kinds {
		var es []Entry
		var ws []string
		switch k {
		case driver.KindPCIe:
			es, ws, err = listPCIe(ctx, &o)
		case driver.KindSysemu:
			es, ws, err = listSysemu(ctx, &o)
		case driver.KindRef:
			es = []Entry{refEntry()}
		}
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, es...)
		warnings = append(warnings, ws...)
	}
	return entries, warnings, nil
}

// listPCIe scans sysfs (and probes with Probe).
func listPCIe(ctx context.Context, o *ListOptions) ([]Entry, []string, error) {
	scan := o.ScanPCIe
	if scan == nil {
		scan = pcie.Scan
	}
	res, err := scan(ctx, pcie.Options{
		Sysfs:   driver.Sysfs{Root: o.SysfsRoot},
		DevRoot: o.DevRoot,
		Probe:   o.Probe,
		Nodes:   o.Nodes,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, err
		}
		// Other kinds are still worth listing.
		return nil, []string{"pcie: " + err.Error()}, nil
	}
	if res.NoBus {
		o.logf("pcie: no %s: no PCI bus visible", filepath.Join(o.SysfsRoot, "bus/pci/devices"))
	} else {
		o.logf("pcie: %d ET device(s) under %s", len(res.Devices), o.SysfsRoot)
	}
	var out []Entry
	for _, d := range res.Devices {
		e := Entry{
			Kind:     string(driver.KindPCIe),
			Name:     pcieName(d.DeviceID),
			Status:   string(d.Status),
			Usable:   d.Usable(),
			Detail:   d.Detail,
			BDF:      d.BDF,
			PCIID:    fmt.Sprintf("%04x:%04x", d.VendorID, d.DeviceID),
			Driver:   d.Driver,
			Probe:    d.Probe,
			Counters: d.Counters,
		}
		if d.Devnum >= 0 {
			n := d.Devnum
			e.Index, e.Devnum = &n, &n
		}
		if d.DriverVersion != "" {
			e.DriverVersion = d.DriverVersion
			ok := d.DriverVersionOK
			e.DriverVersionOK = &ok
		}
		if d.MgmtNode != "" || d.OpsNode != "" {
			e.Nodes = &Nodes{Mgmt: d.MgmtNode, Ops: d.OpsNode}
		}
		if d.Link != (pcie.Link{}) {
			l := d.Link
			e.PCIeLink = &l
		}
		if d.NUMANode >= 0 {
			n := d.NUMANode
			e.NUMANode = &n
		}
		if d.Props != (driver.Props{}) {
			p := d.Props
			e.Properties = &p
		}
		out = append(out, e)
	}
	return out, res.Warnings, nil
}

func pcieName(id uint16) string {
	if id == pcie.DeviceIDTest {
		return "ET-SoC-1 (test id)"
	}
	return "ET-SoC-1"
}

// listSysemu lists the sysemu device when an install exists.
func listSysemu(ctx context.Context, o *ListOptions) ([]Entry, []string, error) {
	prefix := o.Prefix
	dir := prefix.Dir
	if !filepath.IsAbs(dir) && o.Cwd != "" {
		dir = filepath.Join(o.Cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		why := "not a directory"
		if errors.Is(err, fs.ErrNotExist) {
			why = "no such directory"
		} else if err != nil {
			why = err.Error()
		}
		o.logf("sysemu: no install at %s (%s, from %s)", dir, why, prefix.Source)
		return nil, nil, nil
	}
	check := o.CheckSysemu
	if check == nil {
		check = sysemu.Check
	}
	rep := check(ctx, sysemu.Options{Prefix: prefix, Cwd: o.Cwd})
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	// The run and current directories are checked too; they decide where
	// logs land, not whether the install is complete.
	var failed, envFailed []string
	for _, r := range rep.Failed() {
		if r.ID == "run_dir" || r.ID == "cwd" {
			envFailed = append(envFailed, r.ID+": "+r.Detail)
			continue
		}
		failed = append(failed, r.ID)
	}
	zero := 0
	e := Entry{
		Index:             &zero,
		Kind:              string(driver.KindSysemu),
		Name:              "sys_emu",
		Status:            "installed",
		Usable:            true,
		Prefix:            prefix.Dir,
		AssumedProperties: driver.SysemuAssumed(),
	}
	p := driver.SysemuProps()
	e.Properties = &p
	if len(failed) > 0 {
		e.Status, e.Usable = "incomplete", false
		e.Detail = fmt.Sprintf("%d check(s) failed (%s): run et check-sysemu --prefix %s",
			len(failed), strings.Join(failed, ", "), prefix.Dir)
	}
	o.logf("sysemu: install at %s (from %s): %s", dir, prefix.Source, e.Status)
	warns := append([]string(nil), prefix.Warnings...)
	for _, w := range envFailed {
		warns = append(warns, "sysemu: "+w)
	}
	return []Entry{e}, warns, nil
}

// refEntry is the built-in reference device.
func refEntry() Entry {
	zero := 0
	p := driver.FakeProps()
	return Entry{
		Index:      &zero,
		Kind:       string(driver.KindRef),
		Name:       "reference device",
		Status:     "ready",
		Usable:     true,
		Properties: &p,
	}
}

// Usable lists the indexes of the usable devices of s.Backend as et
// devices lists them: every PCIe card the kernel shows with its nodes,
// the one sysemu emulator of an install (s.Prefix), the one reference
// device (run-op --device all). Warnings go to s.Host.Warnf.
func Usable(ctx context.Context, s Spec) ([]int, error) {
	o := ListOptions{Kinds: []driver.Kind{driver.Kind(s.Backend)}, Logf: s.Host.Logf}
	if s.Backend == string(driver.KindSysemu) {
		o.Prefix = sysemu.ResolvePrefix(s.Prefix, s.Host.getenv)
		if s.Host.Getwd != nil {
			o.Cwd, _ = s.Host.Getwd()
		}
	}
	entries, warns, err := List(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		s.Host.warnf("%s", w)
	}
	var idx []int
	for _, e := range entries {
		if e.Usable && e.Index != nil {
			idx = append(idx, *e.Index)
		}
	}
	return idx, nil
}
