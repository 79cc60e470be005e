//go:build unix

package pcie

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

func scanTree(t *testing.T, sys, dev string) Result {
	t.Helper()
	res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Hostile or broken sysfs trees: every odd attribute is reported, none
// blocks or hides a card.
func TestScanHostileSysfs(t *testing.T) {
	const a, b = "bus/pci/devices/0000:01:00.0", "bus/pci/devices/0000:41:00.0"
	t.Run("duplicate devnum", func(t *testing.T) {
		sys, dev := fixture(t, "two-devices")
		os.WriteFile(filepath.Join(sys, b, "devnum"), []byte("0\n"), 0o644)
		res := scanTree(t, sys, dev)
		w := strings.Join(res.Warnings, "\n")
		if !strings.Contains(w, "devnum 0 is claimed by 2 cards (0000:01:00.0, 0000:41:00.0)") || strings.Contains(w, "not contiguous") {
			t.Errorf("warnings:\n%s", w)
		}
	})
	t.Run("unparseable devnum", func(t *testing.T) {
		sys, dev := fixture(t, "two-devices")
		os.WriteFile(filepath.Join(sys, a, "devnum"), []byte("zero\n"), 0o644)
		res := scanTree(t, sys, dev)
		d := res.Devices[0]
		if d.Status != StatusNoDevnum || !strings.Contains(d.Detail, `devnum attribute reads "zero", not a device number`) {
			t.Errorf("device %s: %s: %s", d.BDF, d.Status, d.Detail)
		}
	})
	t.Run("vendor is a directory", func(t *testing.T) {
		sys, dev := fixture(t, "two-devices")
		v := filepath.Join(sys, a, "vendor")
		os.Remove(v)
		os.Mkdir(v, 0o755)
		res := scanTree(t, sys, dev)
		w := strings.Join(res.Warnings, "\n")
		if len(res.Devices) != 1 || !strings.Contains(w, "0000:01:00.0: cannot tell whether it is an ET card: read "+v+": is a directory") {
			t.Errorf("%d devices, warnings:\n%s", len(res.Devices), w)
		}
	})
	t.Run("fifo attribute", func(t *testing.T) {
		sys, dev := fixture(t, "two-devices")
		p := filepath.Join(sys, a, "current_link_speed")
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip(err)
		}
		// Would block forever opening the FIFO.
		res := scanTree(t, sys, dev)
		if len(res.Devices) != 2 {
			t.Errorf("%d devices", len(res.Devices))
		}
	})
	t.Run("attribute links to /dev/zero", func(t *testing.T) {
		sys, dev := fixture(t, "two-devices")
		p := filepath.Join(sys, a, "driver", "module", "version")
		os.Remove(p)
		os.Symlink("/dev/zero", p)
		s := driver.Sysfs{Root: sys}
		if _, err := s.ReadString(a + "/driver/module/version"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadString = %v", err)
		}
		res := scanTree(t, sys, dev)
		if len(res.Devices) != 2 {
			t.Errorf("%d devices", len(res.Devices))
		}
	})
}
