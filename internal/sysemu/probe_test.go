//go:build unix

package sysemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sys_emu")
	sysemutest.WriteFile(t, p, []byte(body), 0o755)
	return p
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		status Status
		detail string
	}{
		{"banner exit 1", sysemutest.ScriptOK, StatusOK, "`sys_emu -help` exited with status 1 and printed \"ET System Emulator\""},
		{"exit 0", sysemutest.ScriptExit0, StatusFail, "`sys_emu -help`: exit status 0, want 1"},
		{"no libs", sysemutest.ScriptNoLibs, StatusFail, "`sys_emu -help`: exit status 127, want 1; no \"ET System Emulator\" banner; stderr: sys_emu: error while loading shared libraries"},
		{"no banner", "#!/bin/sh\nexit 1\n", StatusFail, "`sys_emu -help`: no \"ET System Emulator\" banner"},
		{"reads stdin", "#!/bin/sh\ncat\necho 'ET System Emulator'\nexit 1\n", StatusOK, ""},
		{"killed", "#!/bin/sh\nkill -9 $$\n", StatusFail, "killed by a signal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := script(t, tt.body)
			r := probeResult(context.Background(), p, Result{Status: StatusWarn}, 20*time.Second)
			if r.Status != tt.status || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %s %q, want %s containing %q", r.Status, r.Detail, tt.status, tt.detail)
			}
		})
	}
}

func TestProbeSkippedWhenSysEmuFailed(t *testing.T) {
	r := probeResult(context.Background(), "/nonexistent", Result{Status: StatusFail}, time.Second)
	if r.Status != StatusWarn || !strings.HasPrefix(r.Detail, "skipped") {
		t.Errorf("got %+v", r)
	}
}

func TestProbeCannotRun(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sys_emu")
	sysemutest.WriteFile(t, p, sysemutest.HostELF(), 0o644) // not executable
	r := probeResult(context.Background(), p, Result{Status: StatusWarn}, time.Second)
	if r.Status != StatusFail || !strings.Contains(r.Detail, "cannot run `sys_emu -help`: permission denied") {
		t.Errorf("got %+v", r)
	}
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the ")" that closes the command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestProbeTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := script(t, sysemutest.ScriptHang(pidFile))
	r := probeResult(context.Background(), p, Result{Status: StatusWarn}, 300*time.Millisecond)
	if r.Status != StatusFail || r.Detail != "`sys_emu -help` did not exit within 300ms; its process group was killed" {
		t.Errorf("got %+v", r)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the script did not start: %v", err)
	}
	pids := strings.Fields(string(data))
	if len(pids) != 2 {
		t.Fatalf("pid file %q", data)
	}
	for _, s := range pids {
		pid, _ := strconv.Atoi(s)
		// The orphaned sleep is reaped by init asynchronously: poll.
		for i := 0; alive(pid) && i < 100; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survived the probe", pid)
		}
	}
}

func TestProbeContextCancelled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := script(t, sysemutest.ScriptHang(pidFile))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 200; i++ {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	pr := Probe(ctx, p, time.Minute)
	if !errors.Is(pr.Err, context.Canceled) || pr.TimedOut {
		t.Errorf("got %+v", pr)
	}
}
