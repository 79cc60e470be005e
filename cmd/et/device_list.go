package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
