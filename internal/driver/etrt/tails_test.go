package etrt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The complete lines of a boot console are passed on, the partial last
// one waits (et prints them as "et: boot: <console>: <line>").
func TestBootProgress(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "spio_uart0_tx.log"), []byte("MAIN:[txt]Configure NOC\r\nMAIN:[txt]Mem"), 0o644)
	var out strings.Builder
	stop := FollowBootConsoles(dir, time.Hour, func(console, line string) { fmt.Fprintf(&out, "et: boot: %s: %s\n", console, line) })
	stop()
	if want := "et: boot: spio_uart0: MAIN:[txt]Configure NOC\n"; out.String() != want {
		t.Errorf("progress = %q, want %q", out.String(), want)
	}
}
