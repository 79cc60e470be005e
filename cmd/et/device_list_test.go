package main

import (
	"strings"
	"testing"
)

func TestDeviceListFlags(t *testing.T) {
	norm := "../../testcases/norm.yaml"
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run-op", "-f", norm, "--device", "0,0"}, exitUsage, `device 0 twice in "0,0"`},
		{[]string{"run-op", "-f", norm, "--device", "x"}, exitUsage, `"x": want a device index >= 0, a list such as 0,1, or all`},
		{[]string{"run-op", "-f", norm, "--device", "-1"}, exitUsage, `want a device index >= 0`},
		{[]string{"run-op", "-f", norm, "--device", "0,1", "--jobs", "2"}, exitUsage, "--device 0,1 with --jobs 2: a list runs one job per device"},
		{[]string{"run-op", "-f", norm, "--device", "all", "--profile", t.TempDir()}, exitUsage, "--profile records one device"},
		{[]string{"run-kernel", "k.elf", "--device", "0,1"}, exitUsage, "--device 0,1: this command opens one device"},
		// The reference device is index 0 only.
		{[]string{"run-op", "-f", norm, "-f", "../../testcases/binary.yaml", "--device", "0,1"}, exitUnavailable, "ref device 1"},
		{[]string{"run-op", "-f", norm, "--device", "all"}, exitOK, "4/4 outputs passed on reference device (ref)"},
	} {
		code, out, errOut := runCLI(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
}
