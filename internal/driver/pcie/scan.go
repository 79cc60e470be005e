package pcie

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/driver"
)

// PCI identity of ET-SoC-1 devices and their driver (reference §1.2).
const (
	VendorID     = 0x1e0a
	DeviceIDSoC1 = 0xeb01
	DeviceIDTest = 0x9038
	// DriverName is the PCI driver name of et-soc1.ko.
	DriverName = "ET"
	// ModuleName is the module's name under /sys/module.
	ModuleName = "et_soc1"
)

// Status is the state of one PCIe device as et sees it.
type Status string

// The statuses, from the worst problem found down to ready.
const (
	// StatusReady: the ET driver is bound, new enough, both nodes exist
	// and, with a probe, the device answers Ready or PendingCommands.
	StatusReady Status = "ready"
	// StatusNoDriver: no driver, or another driver, is bound.
	StatusNoDriver Status = "no-driver"
	// StatusOldDriver: the driver version is below 0.15.0 or unknown.
	StatusOldDriver Status = "old-driver"
	// StatusNoDevnum: the ET driver is bound but has no devnum attribute.
	StatusNoDevnum Status = "no-devnum"
	// StatusNoNodes: /dev/etN_mgmt is not visible here.
	StatusNoNodes Status = "no-nodes"
	// StatusRecovery: mgmt without ops: ops init failed in the driver.
	StatusRecovery Status = "recovery"
	// StatusBusy: another process holds the ops node (EBUSY).
	StatusBusy Status = "busy"
	// StatusResetting: open returned EPERM, an ioctl EUCLEAN, or the
	// state is reset-in-progress.
	StatusResetting Status = "resetting"
	// StatusNotResponding: the node is not initialised (ENODEV) or the
	// state is not-responding.
	StatusNotResponding Status = "not-responding"
	// StatusError: the probe failed for another reason.
	StatusError Status = "error"
)

// Options control Scan.
type Options struct {
	// Sysfs is the sysfs tree ("/sys" on a live system).
	Sysfs driver.Sysfs
	// DevRoot is the directory holding the etN_mgmt and etN_ops nodes.
	DevRoot string
	// Probe opens each node for the info ioctls.
	Probe bool
	// Nodes opens nodes for the probe; nil means OSNodes().
	Nodes Nodes
}

// Link is the PCIe link as sysfs reports it.
type Link struct {
	Speed    string `json:"speed,omitempty"`
	Width    int    `json:"width,omitempty"`
	MaxSpeed string `json:"max_speed,omitempty"`
	MaxWidth int    `json:"max_width,omitempty"`
}

// Device is one ET PCI function.
type Device struct {
	// BDF is the PCI address, e.g. 0000:01:00.0.
	BDF      string
	VendorID uint16
	DeviceID uint16
	// Driver is the bound driver's name, "" if none.
	Driver string
	// DriverVersion is the module version as read, "" if unknown.
	DriverVersion string
	// DriverVersionOK tells whether DriverVersion meets MinDriverVersion.
	DriverVersionOK bool
	// Devnum is the N of /dev/etN_*, or -1 when unknown.
	Devnum int
	// MgmtNode and OpsNode are the node paths that exist, "" otherwise.
	MgmtNode, OpsNode string
	Link              Link
	// NUMANode is the device's NUMA node, or -1 when none.
	NUMANode int
	// Counters are the statistics attributes, in file order.
	Counters []Counter
	// Probe holds the ioctl results when Options.Probe was set and the
	// device was probed.
	Probe *Probe
	// Props are the properties from the probe (zero without one).
	Props  driver.Props
	Status Status
	// Detail explains a status other than ready, or adds to it.
	Detail string
}

// Result is what Scan found.
type Result struct {
	// Devices are sorted by BDF.
	Devices []Device
	// Warnings are problems that do not belong to one device.
	Warnings []string
	// NoBus is set when sysfs has no bus/pci/devices (no PCI bus
	// visible, or not Linux).
	NoBus bool
}

// Usable reports whether the runtime can use the device.
func (d Device) Usable() bool { return d.Status == StatusReady }

// Scan lists ET devices under opts.Sysfs. A missing bus/pci/devices is not
// an error (no PCI bus here); an unreadable one is.
func Scan(ctx context.Context, opts Options) (Result, error) {
	var res Result
	const bus = "bus/pci/devices"
	names, err := opts.Sysfs.List(bus)
	if errors.Is(err, fs.ErrNotExist) {
		res.NoBus = true
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("list PCI devices: %w", err)
	}
	if opts.Nodes == nil {
		opts.Nodes = OSNodes()
	}
	for _, bdf := range names {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		dir := bus + "/" + bdf
		vendor, verr := readHex(opts.Sysfs, dir+"/vendor")
		device, derr := readHex(opts.Sysfs, dir+"/device")
		if verr != nil || derr != nil {
			// Not knowing whose card it is must not hide it silently:
			// every PCI device has both attributes.
			odd := func(err error) bool { return err != nil && !errors.Is(err, fs.ErrNotExist) }
			if odd(verr) || odd(derr) || (verr == nil && vendor == VendorID) {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: cannot tell whether it is an ET card: %v", bdf, oneLineErr(errors.Join(verr, derr))))
			}
			continue
		}
		if vendor != VendorID || (device != DeviceIDSoC1 && device != DeviceIDTest) {
			continue
		}
		d, warns := readDevice(opts, dir, bdf, uint16(vendor), uint16(device))
		res.Warnings = append(res.Warnings, warns...)
		if opts.Probe && (d.Status == StatusReady || d.Status == StatusRecovery) {
			probeDevice(ctx, opts.Nodes, &d)
		}
		res.Devices = append(res.Devices, d)
	}
	sort.Slice(res.Devices, func(i, j int) bool { return res.Devices[i].BDF < res.Devices[j].BDF })
	res.Warnings = append(res.Warnings, runtimeWarnings(opts.DevRoot, res.Devices)...)
	return res, nil
}

// readHex reads a 16-bit hex attribute (vendor, device). Errors name the
// attribute.
func readHex(s driver.Sysfs, rel string) (uint64, error) {
	v, err := s.ReadString(rel)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a 16-bit hex number", s.Path(rel), clipAttr(v))
	}
	return n, nil
}

// oneLineErr is err's message on one line.
func oneLineErr(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// clipAttr shortens an attribute's text for a message.
func clipAttr(v string) string {
	if len(v) > 40 {
		return v[:40] + "..."
	}
	return v
}

func readInt(s driver.Sysfs, rel string) (int, bool) {
	v, err := s.ReadString(rel)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// readDevice reads one device's sysfs attributes and decides its status
// from them.
func readDevice(opts Options, dir, bdf string, vendor, device uint16) (Device, []string) {
	s := opts.Sysfs
	d := Device{BDF: bdf, VendorID: vendor, DeviceID: device, Devnum: -1, NUMANode: -1}
	var warns []string
	d.Driver, _ = s.ReadLink(dir + "/driver")
	d.Link.Speed, _ = s.ReadString(dir + "/current_link_speed")
	d.Link.Width, _ = readInt(s, dir+"/current_link_width")
	d.Link.MaxSpeed, _ = s.ReadString(dir + "/max_link_speed")
	d.Link.MaxWidth, _ = readInt(s, dir+"/max_link_width")
	if n, ok := readInt(s, dir+"/numa_node"); ok && n >= 0 {
		d.NUMANode = n
	}
	if d.Driver != DriverName {
		d.Status = StatusNoDriver
		if d.Driver == "" {
			d.Detail = "no driver bound: load the ET driver (modprobe et_soc1)"
		} else {
			d.Detail = fmt.Sprintf("bound to %s, not the ET driver", d.Driver)
		}
		return d, warns
	}

	ver, err := s.ReadString(dir + "/driver/module/version")
	if err != nil {
		ver, _ = s.ReadString("module/" + ModuleName + "/version")
	}
	d.DriverVersion = ver
	var verProblem string
	if ver == "" {
		verProblem = fmt.Sprintf("driver version unknown (no driver/module/version); the runtime requires 0.x >= %s", MinDriverVersion)
	} else if v, err := ParseVersion(ver); err != nil {
		verProblem = err.Error()
	} else if !v.Supported() {
		verProblem = fmt.Sprintf("driver %s is too old: the runtime requires 0.x >= %s", ver, MinDriverVersion)
	} else {
		d.DriverVersionOK = true
	}

	devnumText, devnumErr := s.ReadString(dir + "/devnum")
	badDevnum := ""
	if devnumErr == nil {
		if n, err := strconv.Atoi(devnumText); err == nil && n >= 0 {
			d.Devnum = n
		} else {
			badDevnum = fmt.Sprintf("the ET driver is bound but its devnum attribute reads %q, not a device number", clipAttr(devnumText))
		}
	} else if !errors.Is(devnumErr, fs.ErrNotExist) {
		badDevnum = fmt.Sprintf("the ET driver is bound but its devnum attribute cannot be read: %v", devnumErr)
	}
	for _, g := range CounterGroups {
		cs, err := readCounters(s, dir, g)
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s: %v", bdf, err))
		}
		d.Counters = append(d.Counters, cs...)
	}
	if d.Devnum >= 0 {
		mgmt := filepath.Join(opts.DevRoot, fmt.Sprintf("et%d_mgmt", d.Devnum))
		ops := filepath.Join(opts.DevRoot, fmt.Sprintf("et%d_ops", d.Devnum))
		if exists(mgmt) {
			d.MgmtNode = mgmt
		}
		if exists(ops) {
			d.OpsNode = ops
		}
	}

	switch {
	case ver != "" && !d.DriverVersionOK:
		d.Status, d.Detail = StatusOldDriver, verProblem
	case d.Devnum < 0 && badDevnum != "":
		d.Status, d.Detail = StatusNoDevnum, badDevnum
	case d.Devnum < 0:
		d.Status = StatusNoDevnum
		d.Detail = "the ET driver is bound but there is no devnum attribute (driver too old, or its init failed)"
	case verProblem != "":
		d.Status, d.Detail = StatusOldDriver, verProblem
	case d.MgmtNode == "":
		d.Status = StatusNoNodes
		d.Detail = fmt.Sprintf("%s not found (in a container, pass --device=/dev/et%d_mgmt --device=/dev/et%d_ops)",
			filepath.Join(opts.DevRoot, fmt.Sprintf("et%d_mgmt", d.Devnum)), d.Devnum, d.Devnum)
	case d.OpsNode == "":
		d.Status = StatusRecovery
		d.Detail = fmt.Sprintf("recovery mode: et%d_mgmt without et%d_ops (ops init failed in the driver); the runtime refuses the device", d.Devnum, d.Devnum)
	default:
		d.Status = StatusReady
	}
	return d, warns
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readCounters reads every readable file of one statistics group (the
// write-only clear file is skipped). A missing group yields nothing.
func readCounters(s driver.Sysfs, dir, group string) ([]Counter, error) {
	files, err := s.List(dir + "/" + group)
	if err != nil {
		return nil, nil
	}
	var out []Counter
	var first error
	for _, f := range files {
		if f == "clear" {
			continue
		}
		text, err := s.ReadString(dir + "/" + group + "/" + f)
		if err != nil {
			continue
		}
		cs, err := ParseCounters(group+"/"+f, text)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		out = append(out, cs...)
	}
	return out, first
}

var nodeRE = regexp.MustCompile(`^et(\d+)_(mgmt|ops)$`)

// runtimeWarnings checks the rules DevicePcie applies to the whole set of
// devices: as many ops nodes as mgmt nodes, devnums contiguous from 0.
func runtimeWarnings(devRoot string, devs []Device) []string {
	var warns []string
	if ents, err := os.ReadDir(devRoot); err == nil {
		var mgmt, ops int
		for _, e := range ents {
			if m := nodeRE.FindStringSubmatch(e.Name()); m != nil {
				if m[2] == "mgmt" {
					mgmt++
				} else {
					ops++
				}
			}
		}
		if mgmt != ops {
			warns = append(warns, fmt.Sprintf("%d et*_mgmt but %d et*_ops nodes in %s: the runtime refuses every device (\"Only Mgmt can be enabled in recovery mode\")", mgmt, ops, devRoot))
		}
	}
	var nums []int
	byNum := map[int][]string{}
	for _, d := range devs {
		if d.Devnum >= 0 {
			nums = append(nums, d.Devnum)
			byNum[d.Devnum] = append(byNum[d.Devnum], d.BDF)
		}
	}
	sort.Ints(nums)
	dup := false
	for _, n := range slices.Compact(slices.Clone(nums)) {
		if b := byNum[n]; len(b) > 1 {
			dup = true
			warns = append(warns, fmt.Sprintf("devnum %d is claimed by %d cards (%s): /dev/et%d_* can be only one of them; the driver state is inconsistent (reload it)", n, len(b), strings.Join(b, ", "), n))
		}
	}
	if dup {
		return warns
	}
	for i, n := range nums {
		if n != i {
			warns = append(warns, fmt.Sprintf("devnums are not contiguous from 0 (%s): the runtime opens /dev/et0.. in order and fails at the gap", joinInts(nums)))
			break
		}
	}
	return warns
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
