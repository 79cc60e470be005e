package registry

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ainekko/et/internal/driver"
)

// Boot opens every usable sysemu and pcie device of entries through the
// runtime, in a worker (booting the emulator), as s says (its Backend,
// Index and Prefix are each entry's), and replaces the entry's properties
// with the ones the runtime reports. A device that fails is marked
// boot-failed; the first failure is returned. With s.RunDir, each card
// boots in RunDir/pcie<index>. (et devices --boot.)
func Boot(ctx context.Context, entries []Entry, s Spec) error {
	var first error
	for i := range entries {
		d := &entries[i]
		if !d.Usable || d.Index == nil || (d.Kind != string(driver.KindSysemu) && d.Kind != string(driver.KindPCIe)) {
			continue
		}
		ds := s
		ds.Backend, ds.Index = d.Kind, *d.Index
		if ds.RunDir != "" && d.Kind == string(driver.KindPCIe) {
			ds.RunDir = filepath.Join(ds.RunDir, fmt.Sprintf("pcie%d", *d.Index))
		}
		start := s.Host.now()
		h, err := Open(ctx, ds)
		if err != nil {
			d.Status, d.Usable, d.Detail = "boot-failed", false, "boot failed: "+oneLine(err.Error())
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				return err
			}
			continue
		}
		p := h.Device.Info().Props
		d.Properties, d.AssumedProperties = &p, nil
		d.Status, d.Booted, d.BootNS = "ready", true, s.Host.now().Sub(start).Nanoseconds()
		d.Detail = "properties reported by the runtime"
		h.Close(nil)
	}
	return first
}

// oneLine keeps a message on one line, as et prints errors.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}
