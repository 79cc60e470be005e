package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/sysemu"
)

// deviceFlag is --device: one index, or (et run-op) a list "0,1" or
// "all", one worker per device.
type deviceFlag struct{ b *backendOptions }

func (d deviceFlag) String() string {
	switch {
	case d.b.AllDevices:
		return "all"
	case len(d.b.Devices) > 0:
		var s []string
		for _, i := range d.b.Devices {
			s = append(s, strconv.Itoa(i))
		}
		return strings.Join(s, ",")
	}
	return strconv.Itoa(d.b.Device)
}

func (d deviceFlag) Type() string { return "index" }

func (d deviceFlag) Set(s string) error {
	b := d.b
	b.AllDevices, b.Devices = false, nil
	if s == "all" {
		b.AllDevices = true
		return nil
	}
	var list []int
	for _, p := range strings.Split(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || i < 0 {
			return fmt.Errorf("%q: want a device index >= 0, a list such as 0,1, or all", p)
		}
		if slices.Contains(list, i) {
			return fmt.Errorf("device %d twice in %q", i, s)
		}
		list = append(list, i)
	}
	b.Device = list[0]
	if len(list) > 1 {
		b.Devices = list
	}
	return nil
}

// multiDevice reports whether --device names several devices (or all).
func (b *backendOptions) multiDevice() bool { return b.AllDevices || len(b.Devices) > 0 }

// checkDeviceList refuses a --device list where one device is meant: in
// a command that opens one device, or with --jobs or --profile.
func (b *backendOptions) checkDeviceList(allowed bool, jobs int, profile string) error {
	if !b.multiDevice() {
		return nil
	}
	switch {
	case !allowed:
		return usageErrorf("--device %s: this command opens one device (give one index)", deviceFlag{b})
	case jobs > 1:
		return usageErrorf("--device %s with --jobs %d: a list runs one job per device; give one or the other", deviceFlag{b}, jobs)
	case profile != "":
		return usageErrorf("--profile records one device: use it with one --device")
	}
	return nil
}

// deviceIndexes are the devices a run-op job opens each: the --device
// list, every usable device of the backend for "all", or jobs times the
// one --device index.
func (b *backendOptions) deviceIndexes(ctx context.Context, f *factory, jobs int) ([]int, error) {
	switch {
	case len(b.Devices) > 0:
		return b.Devices, nil
	case b.AllDevices:
		list := b.listDevices
		if list == nil {
			list = listUsableDevices
		}
		idx, err := list(ctx, f, b)
		if err != nil {
			return nil, err
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("--device all: no usable %s device (see et devices): %w", b.Backend, driver.ErrNoDevice)
		}
		f.logf("--device all: %s device(s) %s", b.Backend, deviceFlag{&backendOptions{Devices: idx}})
		return idx, nil
	}
	idx := make([]int, jobs)
	for j := range idx {
		idx[j] = b.Device
	}
	return idx, nil
}

// listUsableDevices lists the usable devices of the backend as et devices
// does: every PCIe card the kernel shows with its nodes, the one sysemu
// emulator of an install, the one reference device.
func listUsableDevices(ctx context.Context, f *factory, b *backendOptions) ([]int, error) {
	o := registry.ListOptions{Kinds: []driver.Kind{driver.Kind(b.Backend)}, Logf: f.logf}
	if b.Backend == string(driver.KindSysemu) {
		o.Prefix = sysemu.ResolvePrefix(b.Prefix, f.Getenv)
		o.Cwd, _ = f.Getwd()
	}
	entries, warns, err := registry.List(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		f.warnf("%s", w)
	}
	var idx []int
	for _, e := range entries {
		if e.Usable && e.Index != nil {
			idx = append(idx, *e.Index)
		}
	}
	return idx, nil
}
